//! Charset detection and page building never panic, whatever the bytes and the declared
//! charset; replacements never exceed the input, and a page is cut at its bound.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zhiwen_core::canon::{decode, InputFormat};
use zhiwen_core::params::CanonParams;
use zhiwen_ingest::pages::{build_page, RawPage};
use zhiwen_ingest::ImportLimits;
use zhiwen_store::{PageSource, Timestamp};

const HINTS: [Option<&str>; 6] = [None, Some("utf-8"), Some("gbk"), Some("big5"), Some("utf-16le"), Some("bogus")];

fuzz_target!(|data: &[u8]| {
    let (hint, body) = match data.split_first() {
        Some((h, rest)) => (HINTS[*h as usize % HINTS.len()], rest),
        None => (None, data),
    };
    if let Ok(d) = decode(body, hint) {
        assert!(d.replacements <= body.len());
        assert!(d.replaced_bytes <= body.len());
    }
    let raw = RawPage {
        url: "http://example.com/x",
        body: body.to_vec(),
        format: InputFormat::Auto,
        charset_hint: hint,
        fetched_at: Timestamp(0),
        http_status: Some(200),
        source: PageSource::Crawl,
    };
    // A small page bound, so that cutting (at a character boundary) is fuzzed too.
    let limits = ImportLimits { max_page_bytes: 4096, ..ImportLimits::default() };
    if let Ok(built) = build_page(raw, &CanonParams::default(), &limits) {
        assert!(built.page.body.len() <= 4096);
        assert_eq!(built.cut_from.is_some(), body.len() > 4096);
    }
});
