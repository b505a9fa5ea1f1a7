//! WARC.gz reading as `import pages` does it (gzip members one by one, a corrupt member
//! skipped to the next, the stream stopped at the ratio bound) never panics, and never
//! inflates past the ratio bound: what the records hold stays within `max_ratio` times
//! the input (after the grace of the first MiB).
#![no_main]
use libfuzzer_sys::fuzz_target;
use zhiwen_ingest::pages::{read_warc_stream, WarcItem};
use zhiwen_ingest::{ImportLimits, RATIO_GRACE_BYTES};

fuzz_target!(|data: &[u8]| {
    let limits = ImportLimits { max_ratio: 50, ..ImportLimits::default() };
    let mut delivered = 0u64;
    let (_, damage) = read_warc_stream(std::io::Cursor::new(data), true, 1 << 20, &limits, |_, item| {
        match item {
            // Resource records: their body is the record's block, bytes of the stream.
            WarcItem::Page(p) if p.status.is_none() => delivered += p.body.len() as u64,
            WarcItem::Corrupt { skipped_bytes, .. } => delivered += skipped_bytes,
            _ => {}
        }
        true
    });
    assert!(damage.skipped_bytes <= data.len() as u64);
    // (HTTP bodies inflate within their own bounds.) The stream stops at the ratio bound
    // within one read buffer.
    let bound = (data.len() as u64).max(1) * limits.max_ratio + RATIO_GRACE_BYTES + (64 << 10);
    assert!(delivered <= bound, "{delivered} > {bound}");
});
