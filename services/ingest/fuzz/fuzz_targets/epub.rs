//! EPUB reading (zip container, OPF package, spine documents) never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = zhiwen_ingest::works::read_epub_text(data);
});
