//! Pairwise comparison: the properties a user of `zhiwen compare` relies on.

use std::path::PathBuf;

use proptest::prelude::*;
use zhiwen_core::canon::{slice_chars, InputFormat};
use zhiwen_core::compare::{compare, Comparison, Thresholds, VerdictKind};
use zhiwen_core::{Analysis, Fingerprinter, Params};

fn samples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples")
}

fn chapter() -> String {
    std::fs::read_to_string(samples().join("hongloumeng-01.txt")).expect("bundled sample")
}

/// A second public-domain text, unrelated to the chapter (from the GBK sample page's source).
fn unrelated() -> String {
    let fp = fingerprinter();
    let bytes = std::fs::read(samples().join("other-chapter-gbk.html")).expect("bundled sample");
    let a = fp.analyze_bytes(&bytes, InputFormat::Html, None).expect("sample decodes");
    a.canonical.text().to_owned()
}

fn fingerprinter() -> Fingerprinter {
    Fingerprinter::new(Params::default()).expect("default params")
}

fn analyze(text: &str) -> Analysis {
    fingerprinter().analyze_text(text, InputFormat::Text).expect("analysable")
}

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/canon").join(name)).expect("fixture")
}

/// `bytes` with one byte in `every` overwritten by 0xFF, at a varying offset.
fn overwrite_every(bytes: &[u8], every: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut state = 0x9E37_79B9_u64;
    for start in (0..out.len()).step_by(every) {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        if let Some(b) = out.get_mut(start + (state >> 33) as usize % every) {
            *b = 0xFF;
        }
    }
    out
}

fn cmp(a: &Analysis, b: &Analysis) -> Comparison {
    compare(a, b, &Params::default(), &Thresholds::default())
}

/// Evidence offsets slice the ORIGINAL inputs to exactly the quoted strings.
fn assert_evidence_quotes_originals(a: &Analysis, b: &Analysis, c: &Comparison) {
    for e in &c.evidence {
        assert!(e.a_start < e.a_end && e.b_start < e.b_end, "{e:?}");
        assert_eq!(slice_chars(a.canonical.original(), e.a_start, e.a_end), e.a_text);
        assert_eq!(slice_chars(b.canonical.original(), e.b_start, e.b_end), e.b_text);
    }
}

#[test]
fn identical_texts_score_one_everywhere() {
    let a = analyze(&chapter());
    let c = cmp(&a, &a);
    for (name, v) in [
        ("resemblance", c.resemblance),
        ("containment_ab", c.containment_ab),
        ("containment_ba", c.containment_ba),
        ("dice", c.dice),
        ("dna_score", c.dna_score),
        ("minhash", c.minhash_similarity),
        ("winnow_ab", c.winnow_containment_ab),
        ("winnow_ba", c.winnow_containment_ba),
        ("sample_mod", c.sample_mod_resemblance),
        ("sample_smallest", c.sample_smallest_resemblance),
    ] {
        assert_eq!(v, 1.0, "{name}");
    }
    assert_eq!(c.simhash_distance, 0);
    assert!(c.megashingle_match && c.lsh_candidate);
    assert_eq!(c.verdict.kind, VerdictKind::Identical);
    assert!(c.verdict.duplicate);
    assert!(c.evidence_coverage_a > 0.99, "{}", c.evidence_coverage_a);
}

#[test]
fn scores_are_symmetric_where_they_must_be() {
    let text = chapter();
    let cut = text.chars().count() / 2;
    let half: String = text.chars().take(cut).collect();
    let (a, b) = (analyze(&text), analyze(&half));
    let ab = cmp(&a, &b);
    let ba = cmp(&b, &a);
    assert_eq!(ab.resemblance, ba.resemblance);
    assert_eq!(ab.dice, ba.dice);
    assert_eq!(ab.simhash_distance, ba.simhash_distance);
    assert_eq!(ab.minhash_similarity, ba.minhash_similarity);
    assert_eq!(ab.megashingle_match, ba.megashingle_match);
    assert_eq!(ab.lsh_candidate, ba.lsh_candidate);
    assert_eq!(ab.containment_ab, ba.containment_ba);
    assert_eq!(ab.winnow_containment_ab, ba.winnow_containment_ba);
    // The half is inside the whole, whichever side it is on.
    assert_eq!(ab.verdict.kind, VerdictKind::BWithinA);
    assert_eq!(ba.verdict.kind, VerdictKind::AWithinB);
    assert!(ab.containment_ba > 0.95, "{}", ab.containment_ba);
}

#[test]
fn an_excerpt_inside_an_unrelated_page_has_high_containment_and_low_resemblance() {
    let text = chapter();
    let chars: Vec<char> = text.chars().collect();
    // 20% of the chapter, from the middle.
    let (from, len) = (chars.len() * 2 / 5, chars.len() / 5);
    let excerpt: String = chars[from..from + len].iter().collect();
    let other = unrelated();
    let mid = other.char_indices().nth(other.chars().count() / 2).map(|(i, _)| i).unwrap_or(0);
    let page = format!("{}\n{}\n{}", &other[..mid], excerpt, &other[mid..]);
    let (e, p, ch) = (analyze(&excerpt), analyze(&page), analyze(&text));
    let c = cmp(&e, &p);
    assert!(c.containment_ab > 0.9, "containment {}", c.containment_ab);
    assert!(c.resemblance < 0.4, "resemblance {}", c.resemblance);
    assert!(c.verdict.duplicate && c.verdict.kind == VerdictKind::AWithinB, "{:?}", c.verdict);
    // The chapter against the page: a copy of part of it, found, with evidence.
    let c = cmp(&ch, &p);
    assert!(c.verdict.duplicate, "{:?}", c.verdict);
    assert!(c.resemblance < 0.2, "resemblance {}", c.resemblance);
    let copied: usize = c.evidence.iter().map(|e| e.chars).sum();
    assert!(copied as f64 >= 0.9 * len as f64, "evidence covers {copied} of {len} copied characters");
    assert_evidence_quotes_originals(&ch, &p, &c);
}

#[test]
fn unrelated_chapters_are_not_copies() {
    let (a, b) = (analyze(&chapter()), analyze(&unrelated()));
    let c = cmp(&a, &b);
    assert!(!c.verdict.duplicate, "{:?}", c.verdict);
    assert_eq!(c.verdict.kind, VerdictKind::Unrelated);
    assert!(c.containment_ab < 0.05 && c.containment_ba < 0.05);
    assert!(!c.megashingle_match);
    assert!(c.copied_chars < 100, "{}", c.copied_chars);
}

#[test]
fn the_pirate_sample_page_is_found_with_quotes_from_the_big5_original() {
    let fp = fingerprinter();
    let a = analyze(&chapter());
    let bytes = std::fs::read(samples().join("pirate-copy-big5.html")).expect("bundled sample");
    let b = fp.analyze_bytes(&bytes, InputFormat::Auto, None).expect("Big5 page decodes");
    assert_eq!(b.canonical.charset(), "Big5");
    let c = cmp(&a, &b);
    assert!(c.verdict.duplicate, "{:?}", c.verdict);
    assert_eq!(c.verdict.kind, VerdictKind::BWithinA, "{:?}", c.verdict);
    assert!(c.winnow_containment_ba > 0.8, "{}", c.winnow_containment_ba);
    assert!(!c.evidence.is_empty());
    assert_evidence_quotes_originals(&a, &b, &c);
    // The quote on the page side is in traditional script, as the pirate published it.
    assert!(c.evidence.iter().any(|e| e.b_text.contains('夢') || e.b_text.contains('說')));
}

fn edit(text: &str, seed: u64, rate: f64) -> String {
    // Deterministic pseudo-random insertions, deletions and replacements.
    let mut state = seed | 1;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let r = (next() % 10_000) as f64 / 10_000.0;
        if r < rate / 3.0 {
            continue; // delete
        } else if r < 2.0 * rate / 3.0 {
            out.push('某'); // replace
        } else if r < rate {
            out.push(c);
            out.push('乎'); // insert
        } else {
            out.push(c);
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn evidence_offsets_always_slice_the_originals(seed: u64, rate in 0.0f64..0.15, start_frac in 0.0f64..0.8) {
        let text = chapter();
        let chars: Vec<char> = text.chars().collect();
        let start = (chars.len() as f64 * start_frac) as usize;
        let piece: String = chars[start..(start + 1500).min(chars.len())].iter().collect();
        let page = format!("<html><body><div class=nav><a href=/>首页</a></div><p>{}</p></body></html>", edit(&piece, seed, rate).replace('\n', "</p><p>"));
        let fp = fingerprinter();
        let a = analyze(&text);
        let b = fp.analyze_text(&page, InputFormat::Html).expect("page analysable");
        let c = cmp(&a, &b);
        for e in &c.evidence {
            prop_assert_eq!(slice_chars(a.canonical.original(), e.a_start, e.a_end), e.a_text.as_str());
            prop_assert_eq!(slice_chars(b.canonical.original(), e.b_start, e.b_end), e.b_text.as_str());
        }
        // Up to 15% edits: the copy is still found.
        prop_assert!(c.verdict.duplicate, "{:?} at rate {}", c.verdict, rate);
    }
}

#[test]
fn a_copy_with_a_few_bad_bytes_is_still_a_copy() {
    // Mostly-valid bytes decode in their own charset with U+FFFD, not as windows-1252
    // mojibake that shares nothing with the original (one byte in 300 used to flip it).
    let fp = fingerprinter();
    let text = chapter();
    let original = analyze(&text);
    let utf8 = overwrite_every(text.as_bytes(), 300);
    let copy = fp.analyze_bytes(&utf8, InputFormat::Text, None).expect("decodes");
    assert_eq!(copy.canonical.charset(), "UTF-8");
    let c = cmp(&original, &copy);
    assert!(c.verdict.duplicate && c.verdict.kind == VerdictKind::NearDuplicate, "{:?}", c.verdict);

    // GBK and Big5 copies with a few broken sequences (a byte lost, a stray lead byte).
    let reference = fp.analyze_bytes(&fixture("sanguo-001.txt"), InputFormat::Text, None).expect("decodes");
    for (file, charset) in [("sanguo-001.gbk", "GBK"), ("sanguo-001-hant.big5", "Big5")] {
        let mut bytes = fixture(file);
        for k in 1..=5 {
            let mut i = k * bytes.len() / 6;
            while i + 1 < bytes.len() && (!bytes[i - 1].is_ascii() || bytes[i].is_ascii()) {
                i += 1;
            }
            bytes[i + 1] = 0xFF;
        }
        let copy = fp.analyze_bytes(&bytes, InputFormat::Text, None).expect("decodes");
        assert_eq!(copy.canonical.charset(), charset, "{file}");
        let c = cmp(&reference, &copy);
        assert!(c.verdict.duplicate && c.verdict.kind == VerdictKind::NearDuplicate, "{file}: {:?}", c.verdict);
    }
}
