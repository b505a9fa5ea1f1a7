//! The excerpt decision: a short passage is a copy only when it is a real share of one
//! text, a long one whatever its share, and a passage one side repeats counts once.

use std::path::PathBuf;

use zhiwen_core::canon::InputFormat;
use zhiwen_core::compare::{compare, decide_excerpt, Comparison, Thresholds, VerdictKind};
use zhiwen_core::{Analysis, Fingerprinter, Params};

fn chapter() -> Vec<char> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/hongloumeng-01.txt");
    std::fs::read_to_string(p).expect("bundled sample").chars().collect()
}

/// The two halves of an unrelated text (a page to hide a quote in).
fn unrelated() -> (String, String) {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/other-chapter-gbk.html");
    let bytes = std::fs::read(p).expect("bundled sample");
    let a = fp().analyze_bytes(&bytes, InputFormat::Html, None).expect("sample decodes");
    let c: Vec<char> = a.canonical.text().chars().collect();
    (c[..c.len() / 2].iter().collect(), c[c.len() / 2..].iter().collect())
}

fn fp() -> Fingerprinter {
    Fingerprinter::new(Params::default()).expect("default params")
}

fn analyze(text: &str) -> Analysis {
    fp().analyze_text(text, InputFormat::Text).expect("analysable")
}

fn cmp(a: &str, b: &str, t: &Thresholds) -> Comparison {
    compare(&analyze(a), &analyze(b), &Params::default(), t)
}

fn slice(c: &[char], from: usize, len: usize) -> String {
    c[from..from + len].iter().collect()
}

#[test]
fn a_short_passage_must_be_a_share_of_one_text_a_long_one_need_not() {
    let ch = chapter();
    let other = unrelated();
    let t =
        Thresholds { min_excerpt_chars: 100, min_excerpt_share: 0.15, long_excerpt_chars: 500, ..Default::default() };

    // 160 characters of a 700-character story, quoted inside an unrelated page: a copy.
    let story = slice(&ch, 0, 700);
    let page = format!("{}\n{}\n{}", other.0, slice(&ch, 200, 160), other.1);
    let c = cmp(&story, &page, &t);
    assert!(c.verdict.duplicate, "{:?} copied {}", c.verdict, c.copied_chars);

    // The same 160 characters inside a whole chapter (a few percent of both texts): not
    // a copy, as a formula a novel repeats between its chapters is not.
    let long_section: String = ch.iter().collect();
    let c = cmp(&long_section, &page, &t);
    assert!(c.copied_chars >= 100, "the passage is found: {}", c.copied_chars);
    assert!(!c.verdict.duplicate, "{:?}", c.verdict);

    // A long quote (600 characters) is a copy whatever share of the chapter it is.
    let page = format!("{}\n{}\n{}", other.0, slice(&ch, 1000, 600), other.1);
    let c = cmp(&long_section, &page, &t);
    assert!(c.copied_chars >= 500, "{}", c.copied_chars);
    assert!(c.verdict.duplicate, "{:?}", c.verdict);
    assert_ne!(c.verdict.kind, VerdictKind::Unrelated);
}

#[test]
fn a_passage_repeated_on_one_side_counts_once() {
    let ch = chapter();
    let other = unrelated();
    let phrase = slice(&ch, 300, 40);
    // The section repeats the phrase eight times; the page holds it once.
    let mut section = slice(&ch, 2000, 300);
    for _ in 0..8 {
        section.push_str(&phrase);
        section.push('\n');
    }
    let page = format!("{}\n{}\n{}", other.0, phrase, other.1);
    let c = cmp(&section, &page, &Thresholds::default());
    assert!(c.copied_chars <= 60, "one 40-character phrase, counted once: {}", c.copied_chars);
    assert!(!c.verdict.duplicate, "{:?}", c.verdict);
    // And the other way round.
    let c = cmp(&page, &section, &Thresholds::default());
    assert!(c.copied_chars <= 60, "{}", c.copied_chars);
}

/// A caller that knows part of the copied text is common to many texts (`decide_excerpt`)
/// can take an excerpt back, never a verdict by containment or identity.
#[test]
fn discounted_characters_decide_excerpts_only() {
    let ch = chapter();
    let other = unrelated();
    let t = Thresholds::default();
    let story = slice(&ch, 0, 700);
    let (a_story, b_len) = (analyze(&story), |s: &str| analyze(s).chars.units.len());

    // An excerpt of 160 characters: a copy; with only 60 of them counting, not a copy.
    let page = format!("{}\n{}\n{}", other.0, slice(&ch, 200, 160), other.1);
    let c = compare(&a_story, &analyze(&page), &Params::default(), &t);
    assert!(c.verdict.duplicate && c.copied_chars >= t.min_excerpt_chars, "{:?} {}", c.verdict, c.copied_chars);
    let (na, nb) = (a_story.chars.units.len(), b_len(&page));
    assert_eq!(decide_excerpt(&c, c.copied_chars, na, nb, &t), c.verdict, "nothing discounted: same verdict");
    let v = decide_excerpt(&c, 60, na, nb, &t);
    assert!(!v.duplicate, "{v:?}");
    assert_eq!(v.kind, VerdictKind::Unrelated);

    // The whole story inside a page: a copy by containment, whatever is discounted.
    let page = format!("{}\n{}\n{}", other.0, story, other.1);
    let c = compare(&a_story, &analyze(&page), &Params::default(), &t);
    assert_eq!(c.verdict.kind, VerdictKind::AWithinB, "{:?}", c.verdict);
    let v = decide_excerpt(&c, 0, na, b_len(&page), &t);
    assert_eq!(v, c.verdict);

    // Identical texts stay identical.
    let c = compare(&a_story, &analyze(&story), &Params::default(), &t);
    assert_eq!(decide_excerpt(&c, 0, na, na, &t).kind, VerdictKind::Identical);
}
