//! HTML extraction (the core's canonicaliser and start-tag iterator, link and URL
//! scanning, original-text reconstruction) never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zhiwen_core::canon::{canonicalize, start_tags, InputFormat};
use zhiwen_core::params::CanonParams;
use zhiwen_ingest::html;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (_, links) = html::links(&text);
    let base = url::Url::parse("http://example.com/a/b.html").ok();
    if let Some(base) = base {
        for l in &links {
            let _ = zhiwen_ingest::url::resolve(&base, l);
        }
    }
    let _ = html::own_url(&text);
    for t in start_tags(&text).take(1000) {
        let _ = t.attr("href");
    }
    for main in [true, false] {
        let params = CanonParams { extract_main_content: main, ..Default::default() };
        if let Ok(c) = canonicalize(data, InputFormat::Html, &params) {
            let _ = html::original_text(&c);
        }
    }
});
