//! Chapter splitting never panics, and its chapters tile the text exactly.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zhiwen_ingest::chapters::{sections, split, ChapterOptions};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let max = if data.first().is_some_and(|b| b & 1 == 1) { 64 } else { 20_000 };
    let opts = ChapterOptions { max_section_chars: max, ..Default::default() };
    let chs = split(&text, &opts);
    let mut at = 0;
    for c in &chs {
        assert_eq!(c.start, at);
        assert!(c.end >= c.start);
        assert_eq!(c.text(&text).chars().count(), c.end - c.start);
        at = c.end;
    }
    if !chs.is_empty() {
        assert_eq!(at, text.chars().count());
    }
    for (i, s) in sections(&text, &opts).iter().enumerate() {
        assert_eq!(s.ordinal as usize, i);
        assert!(!s.text.trim().is_empty());
    }
});
