//! URL normalisation never panics and is idempotent.
#![no_main]
use libfuzzer_sys::fuzz_target;
use zhiwen_ingest::url::normalize;

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    if let Ok(u) = normalize(&s) {
        let again = normalize(u.as_str()).expect("a normalised URL normalises");
        assert_eq!(again.as_str(), u.as_str());
    }
});
