//! Pins the exact output of the whole pipeline on bundled texts.
//!
//! Stored fingerprints are only comparable with fingerprints computed by a later build
//! when the pipeline is bit-for-bit stable: a speed-up must not move a single token,
//! weight, hash or offset. Each case digests everything [`Fingerprinter::analyze_bytes`]
//! produces (canonical text, offset map, tokens with their IDF weights, the initial and
//! character streams, and every fingerprint) into one 64-bit value pinned below.
//!
//! A change that alters a digest on purpose is an algorithm change: bump
//! `ALGORITHM_VERSION` and re-pin, printing the new digests with
//! `cargo test -p zhiwen-core --test core golden:: -- --nocapture`.

use std::path::PathBuf;

use zhiwen_core::canon::InputFormat;
use zhiwen_core::hash::hash_bytes;
use zhiwen_core::params::SegmentParams;
use zhiwen_core::segment;
use zhiwen_core::{Analysis, Fingerprinter, Params, ALGORITHM_VERSION};

fn repo_file(path: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read(&p).unwrap_or_else(|e| panic!("bundled input {}: {e}", p.display()))
}

/// Little-endian bytes of everything one analysis produced.
fn digest(a: &Analysis, params: &SegmentParams) -> u64 {
    let mut buf: Vec<u8> = Vec::new();
    let mut put = |v: u64| buf.extend_from_slice(&v.to_le_bytes());
    put(a.canonical.text().len() as u64);
    for span in a.canonical.source_spans() {
        put(u64::from(span.start) << 32 | u64::from(span.end));
    }
    // The words' hashes are not kept in an analysis, only used for its shingles and
    // simhash: they come from the same segmentation of the canonical text, so the digest
    // covers what it did when analyses kept whole tokens (the pinned values did not move).
    let tokens = segment::segment(a.canonical.text(), params);
    put(a.words.len() as u64);
    assert_eq!(a.words.len(), tokens.len(), "one word per token of the segmentation");
    for (w, t) in a.words.iter().zip(&tokens) {
        put(u64::from(w.start) << 32 | u64::from(w.end));
        put(t.hash);
        put(u64::from(w.idf.to_bits()));
    }
    put(a.initials.letters.len() as u64);
    for (&l, &p) in a.initials.letters.iter().zip(&a.initials.positions) {
        put(u64::from(l) << 32 | u64::from(p));
    }
    put(a.chars.units.len() as u64);
    for (&u, &p) in a.chars.units.iter().zip(&a.chars.positions) {
        put(u64::from(u) << 32 | u64::from(p));
    }
    let json = serde_json::to_vec(&a.fingerprints).expect("fingerprints serialise");
    buf.extend_from_slice(&json);
    buf.extend_from_slice(a.canonical.text().as_bytes());
    hash_bytes(&buf)
}

/// The inputs: plain text, traditional script, four charsets, HTML pages.
const INPUTS: [(&str, InputFormat); 7] = [
    ("../../samples/hongloumeng-01.txt", InputFormat::Text),
    ("../../samples/pirate-copy-big5.html", InputFormat::Auto),
    ("../../samples/other-chapter-gbk.html", InputFormat::Auto),
    ("tests/fixtures/canon/sanguo-001-hant.txt", InputFormat::Text),
    ("tests/fixtures/canon/sanguo-002.gb18030", InputFormat::Text),
    ("tests/fixtures/canon/news-article.html", InputFormat::Html),
    ("tests/fixtures/canon/pirate-chapter.gbk.html", InputFormat::Html),
];

/// Parameter sets: the defaults, and the segmentation switches (HMM, stop words kept,
/// adjectives dropped) with other window sizes.
fn param_sets() -> Vec<(&'static str, Params)> {
    let default = Params::default();
    let mut hmm = default.clone();
    hmm.segment.hmm = true;
    let mut stop_words_kept = default.clone();
    stop_words_kept.segment.drop_stop_words = false;
    stop_words_kept.shingle.width = 3;
    let mut adjectives = default.clone();
    adjectives.segment.drop_adjectives = true;
    adjectives.winnow.initials_k = 9;
    vec![("default", default), ("hmm", hmm), ("stop_words_kept", stop_words_kept), ("adjectives", adjectives)]
}

/// Digests for `param_sets() x INPUTS`, in that order.
const PINNED: [u64; 28] = [
    0x402d16372be98942,
    0x069f46cc7773eb84,
    0xd008a8398f881b58,
    0x73fcf24bceed7cb3,
    0xdb1d0f950f693ac1,
    0xad7031d7549f89bc,
    0x8eacfe39743905db,
    0xfffdaf8b67499060,
    0x2c735a2bc2a32a3d,
    0x9c1afe5121d646a4,
    0xa9db11f01af7304f,
    0x94d157e9c350fc33,
    0x56a28be58fc68d38,
    0x7e5c3a173c27a68e,
    0x7caf71b53fe024ea,
    0x6141e9c44b2b0824,
    0xac2538fa049c7c43,
    0xa6c6834b9b68c727,
    0x90a762fd339674e7,
    0xd707a2209f62516d,
    0x35fa37dd571c1142,
    0x694e30d556f2d10c,
    0xb86ad2a0a0967436,
    0x7248c3338764046b,
    0x90f06063eba2c6b5,
    0x87c9d97d18185b34,
    0xd41bd2015ce10d28,
    0xf6a7855993d51e61,
];

#[test]
fn the_pipeline_output_is_pinned() {
    assert_eq!(ALGORITHM_VERSION, 2, "re-pin the digests when the algorithm version changes");
    let mut got = Vec::new();
    for (name, params) in param_sets() {
        let segmentation = params.segment.clone();
        let fp = Fingerprinter::new(params).expect("valid params");
        for (path, format) in INPUTS {
            let a = fp.analyze_bytes(&repo_file(path), format, None).expect("bundled input analyses");
            let d = digest(&a, &segmentation);
            println!("{name:>16} {path:<48} {d:#018x}");
            got.push(d);
        }
    }
    let mismatched: Vec<usize> = (0..PINNED.len()).filter(|&i| got.get(i) != Some(&PINNED[i])).collect();
    assert!(mismatched.is_empty(), "digests changed at {mismatched:?}: got {got:#018x?}");
}

/// The digest covers what matters: changing one token's weight changes it.
#[test]
fn the_digest_sees_a_single_changed_weight() {
    let fp = Fingerprinter::new(Params::default()).expect("default params");
    let a = fp.analyze_bytes(&repo_file(INPUTS[0].0), InputFormat::Text, None).expect("analyses");
    let mut b = a.clone();
    b.words[100].idf = f32::from_bits(b.words[100].idf.to_bits() ^ 1);
    let segmentation = Params::default().segment;
    assert_ne!(digest(&a, &segmentation), digest(&b, &segmentation));
}
