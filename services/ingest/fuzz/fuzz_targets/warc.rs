//! WARC reading (record framing and resynchronisation, embedded HTTP, de-chunking,
//! inflating) never panics, and no page body passes the record bound.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zhiwen_ingest::pages::{parse_http_response, read_warc_records, WarcItem};
use zhiwen_ingest::ImportLimits;

fuzz_target!(|data: &[u8]| {
    let limits = ImportLimits::default();
    let _ = parse_http_response(data);
    let mut corrupt = 0u64;
    let _ = read_warc_records(std::io::Cursor::new(data), 1 << 20, &limits, |_, item| {
        match item {
            WarcItem::Page(p) => assert!(p.body.len() as u64 <= limits.max_entry_bytes.max(1 << 20)),
            WarcItem::Corrupt { skipped_bytes, .. } => corrupt += skipped_bytes,
            _ => {}
        }
        true
    });
    // Skipped bytes are bytes of the input (after line-end normalisation, never more).
    assert!(corrupt <= data.len() as u64);
});
