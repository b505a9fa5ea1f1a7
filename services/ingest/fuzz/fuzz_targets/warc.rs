//! WARC reading (records, embedded HTTP responses, de-chunking, inflating) never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zhiwen_ingest::pages::{parse_http_response, read_warc_records, WarcItem};

fuzz_target!(|data: &[u8]| {
    let _ = parse_http_response(data);
    let _ = read_warc_records(std::io::Cursor::new(data), 1 << 20, |_, item| {
        if let WarcItem::Page(p) = item {
            let _ = p.url.len() + p.body.len();
        }
        true
    });
});
