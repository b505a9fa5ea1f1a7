//! EPUB reading (zip container, OPF package, spine documents) never panics, and stays
//! within its bounds: small ones here, so that the fuzzer reaches the bound checks (entry
//! count, declared and actual sizes, ratios) with small inputs and runs fast.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zhiwen_ingest::ImportLimits;

const LIMITS: ImportLimits = ImportLimits {
    max_archive_entries: 64,
    max_archive_bytes: 4 << 20,
    max_entry_bytes: 1 << 20,
    max_ratio: 20,
    max_page_bytes: 1 << 20,
};

fuzz_target!(|data: &[u8]| {
    let _ = zhiwen_ingest::works::read_epub_text(data);
    if let Ok((_, _, text)) = zhiwen_ingest::works::read_epub_text_limited(data, &LIMITS) {
        // Decoding may grow a byte to a 3-byte U+FFFD; documents are joined by a blank line.
        assert!(text.len() as u64 <= 3 * LIMITS.max_archive_bytes + 2 * LIMITS.max_archive_entries as u64);
    }
});
