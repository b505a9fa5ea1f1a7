//! The excerpt decision: a short passage is a copy only when it is a real share of one
//! text, a long one whatever its share, and a passage one side repeats counts once.

use zhiwen_core::compare::{compare, decide_excerpt, Comparison, Thresholds, VerdictKind};
use zhiwen_core::Params;

#[allow(dead_code)] // each test binary uses a part of it
use crate::support::{analyze, chapter, unrelated};

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

#[test]
fn a_passage_both_sides_repeat_is_one_passage_of_evidence() {
    let ch = chapter();
    let other: Vec<char> = {
        let (x, y) = unrelated();
        format!("{x}{y}").chars().collect()
    };
    let slogan = slice(&ch, 300, 30);
    // A 470-character story that repeats a 30-character slogan five times between its own
    // sentences, and a page of other text that repeats it as often: over 100 characters
    // "copied", a quarter of the story (an excerpt by count), but one slogan of evidence.
    let story_text = slice(&ch, 1200, 320);
    let story_parts: Vec<String> =
        story_text.chars().collect::<Vec<_>>().chunks(54).map(|c| c.iter().collect()).collect();
    let story = story_parts.join(&format!("\n{slogan}\n"));
    let page_parts: Vec<String> = other[..1200].chunks(200).map(|c| c.iter().collect()).collect();
    let page = page_parts.join(&format!("\n{slogan}\n"));
    let c = cmp(&story, &page, &Thresholds::default());
    let t = Thresholds::default();
    assert!(c.copied_chars >= t.min_excerpt_chars, "the repeats are found on both sides: {}", c.copied_chars);
    assert!(c.distinct_copied_chars <= 45, "one slogan of distinct text: {}", c.distinct_copied_chars);
    assert!(!c.verdict.duplicate, "{:?}", c.verdict);

    // The same story copied once into the page is still an excerpt of it: its own text
    // does not repeat, so nearly every copied character is distinct.
    let page = format!("{}\n{}\n{}", page_parts[0], story, page_parts[1]);
    let c = cmp(&story, &page, &Thresholds::default());
    assert!(c.verdict.duplicate, "{:?}", c.verdict);
    assert!(c.distinct_copied_chars * 10 >= c.copied_chars * 6, "{} of {}", c.distinct_copied_chars, c.copied_chars);
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
