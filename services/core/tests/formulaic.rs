//! Formulaic text is not copying: URL, id and code runs never count as copied text, a
//! template filled twice is not an excerpt, and a pirate's scattered noise still is.

use proptest::prelude::*;
use zhiwen_core::compare::{compare, Comparison, Thresholds};
use zhiwen_core::formulaic::{self, Differences, Lang};
use zhiwen_core::Params;

#[allow(dead_code)] // each test binary uses a part of it
use crate::support::{analyze, chapter, unrelated};

fn cmp(a: &str, b: &str) -> Comparison {
    compare(&analyze(a), &analyze(b), &Params::default(), &Thresholds::default())
}

/// A list of links of one blog host, one per line, with the given ids.
fn link_list(ids: &[String]) -> String {
    ids.iter().map(|id| format!("http://blog.sina.com.cn/s/blog_{id}.html\n")).collect()
}

/// Fixed wording cut from the chapter with a session number and a date every 30
/// characters: the same formula filled with `session` and `day`.
fn template(ch: &[char], session: &str, day: &str) -> String {
    let mut out = String::new();
    for (i, chunk) in ch[2000..2600].chunks(30).enumerate() {
        out.extend(chunk);
        if i % 2 == 0 {
            out.push_str(&format!("第{session}次"));
        } else {
            out.push_str(&format!("{day}日"));
        }
    }
    out
}

#[test]
fn two_link_lists_of_one_host_are_not_a_copy() {
    let other = unrelated();
    let ids_a: Vec<String> = (0..60).map(|i| format!("4b9e0f7a01{:04x}", 0x1000 + i * 7)).collect();
    let ids_b: Vec<String> = (0..60).map(|i| format!("6c2d8e1b01{:04x}", 0x2000 + i * 13)).collect();
    let a = format!("{}\n{}", &other.0.chars().take(200).collect::<String>(), link_list(&ids_a));
    let b = format!("{}\n{}", &other.1.chars().take(200).collect::<String>(), link_list(&ids_b));
    let c = cmp(&a, &b);
    assert!(!c.verdict.duplicate, "{:?}, copied {}", c.verdict, c.copied_chars);
    assert!(c.evidence.iter().all(|e| !e.a_text.contains("blog.sina")), "{:?}", c.evidence);
}

#[test]
fn a_template_filled_twice_is_not_an_excerpt() {
    let ch = chapter();
    let other = unrelated();
    let a = format!("{}\n{}", other.0, template(&ch, "十九", "22"));
    let b = format!("{}\n{}", other.1, template(&ch, "二十二", "27"));
    let c = cmp(&a, &b);
    assert!(c.copied_chars >= 500, "the fixed wording aligns: {}", c.copied_chars);
    assert!(!c.verdict.duplicate, "{:?}", c.verdict);
    assert!(c.explanation.passages.iter().any(|p| p.differences == Differences::Figures), "{:?}", c.explanation);
    assert!(c.explanation.figures_only_chars >= 500, "{:?}", c.explanation);
    let zh = formulaic::render(&c.explanation, Lang::ZhCn).join("\n");
    assert!(zh.contains("模板"), "{zh}");
}

/// A short text that is nothing but the template (more than half of it covered by the
/// aligned passage, a containment verdict before) is no copy of a page holding the
/// template filled with other figures: no verdict is reached on passages that do not
/// count.
#[test]
fn a_text_that_is_all_template_is_not_contained_in_another_filling() {
    let ch = chapter();
    let other = unrelated();
    let a = template(&ch, "十九", "22");
    let b = format!("{}\n{}", other.1, template(&ch, "二十二", "27"));
    let c = cmp(&a, &b);
    assert!(c.evidence_coverage_a >= 0.5, "the template covers the text: {}", c.evidence_coverage_a);
    assert!(!c.verdict.duplicate, "{:?}", c.verdict);
    assert_eq!(c.explanation.uncounted_copied_chars, c.copied_chars, "{:?}", c.explanation);
}

/// A report that cites its templated paragraph's wording again elsewhere (as a list of
/// attachments names the documents the paragraph names, with other figures and a word
/// changed) is no copy of a short page holding the paragraph filled otherwise: the
/// citation aligns onto the filled paragraph, but only repeats the template's wording.
#[test]
fn a_citation_of_the_template_elsewhere_is_not_a_copy_of_another_filling() {
    let ch = chapter();
    let other = unrelated();
    let cited: String = template(&ch, "三", "15").chars().take(200).collect();
    let cited =
        format!("{}罡{}", &cited.chars().take(100).collect::<String>(), &cited.chars().skip(101).collect::<String>());
    let a = format!("{}\n{}\n附件：{}", other.0, template(&ch, "十九", "22"), cited);
    let b = format!("{}\n{}", other.1.chars().take(120).collect::<String>(), template(&ch, "二十二", "27"));
    let c = cmp(&a, &b);
    assert!(
        c.explanation.passages.iter().any(|p| p.template_wording && p.chars >= 50),
        "the citation aligns onto the filled paragraph: {:?}",
        c.explanation
    );
    assert!(!c.verdict.duplicate, "{:?}", c.verdict);
    assert_eq!(c.explanation.uncounted_copied_chars, c.copied_chars, "{:?}", c.explanation);
    // The page holding the same filling is still a copy.
    let copy = format!("{}\n{}", other.1.chars().take(120).collect::<String>(), template(&ch, "十九", "22"));
    assert!(cmp(&a, &copy).verdict.duplicate);
}

/// A paragraph whose figures all sit at its start (`转发集满20个赞可以打九折`) and then runs on
/// in fixed wording: filled twice, the fingerprints cannot span the differing figures, so
/// the aligned passage is the fixed wording alone, equal on both sides. The text before it
/// goes on as the same template with other figures: not an excerpt. The same filling, and
/// a real excerpt followed by a number on both sides, are still copies.
#[test]
fn the_fixed_wording_after_a_templates_figures_is_not_an_excerpt() {
    let ch = chapter();
    let other = unrelated();
    let fixed: String = ch[3000..3150].iter().collect();
    let page_text: String = other.1.chars().take(300).collect();
    let a = format!("{}\n“转发集满20个赞可以打九折，{fixed}", other.0);
    let b = format!("{page_text}\n“转发集满53个赞可以打二折，{fixed}");
    let c = cmp(&a, &b);
    assert!(c.copied_chars >= 100, "the fixed wording aligns: {}", c.copied_chars);
    assert!(!c.verdict.duplicate, "{:?} {:?}", c.verdict, c.explanation);
    assert!(c.explanation.passages.iter().any(|p| p.differences == Differences::Figures), "{:?}", c.explanation);
    // The same filling is a copy.
    let same = format!("{page_text}\n“转发集满20个赞可以打九折，{fixed}");
    assert!(cmp(&a, &same).verdict.duplicate);
    // A real excerpt followed by a number on both sides, then other text, is a copy.
    let tail: String = ch[4000..4100].iter().collect();
    let a = format!("{}\n{fixed}2019{tail}", other.0);
    let b = format!("{page_text}\n{fixed}2024明天我们一起去上海看望外婆");
    let c = cmp(&a, &b);
    assert!(c.verdict.duplicate, "{:?} {:?}", c.verdict, c.explanation);
}

#[test]
fn the_same_template_filled_the_same_way_is_still_a_copy() {
    let ch = chapter();
    let other = unrelated();
    let a = format!("{}\n{}", other.0, template(&ch, "十九", "22"));
    let b = format!("{}\n{}", other.1, template(&ch, "十九", "22"));
    let c = cmp(&a, &b);
    assert!(c.verdict.duplicate, "{:?}", c.verdict);
}

#[test]
fn a_pirates_scattered_noise_is_still_a_copy() {
    let ch = chapter();
    let other = unrelated();
    let original: String = ch[2000..2600].iter().collect();
    // Every 37th character replaced with another Han character, as a pirate's noise does.
    let noisy: String = ch[2000..2600]
        .iter()
        .enumerate()
        .map(|(i, &c)| if i % 37 == 36 && c > '\u{4e00}' { '罡' } else { c })
        .collect();
    let a = format!("{}\n{}", other.0, original);
    let b = format!("{}\n{}", other.1, noisy);
    let c = cmp(&a, &b);
    assert!(c.verdict.duplicate, "{:?}", c.verdict);
    assert!(c.explanation.passages.iter().any(|p| p.differences == Differences::Edits && p.counted));
    assert!(c.explanation.passages.iter().all(|p| p.rarity.is_some()));
}

/// One prosecution reported with the procuratorate's formula, filled with a defendant,
/// a province and a city.
fn prosecution(person: &str, province: &str, city: &str) -> String {
    format!(
        "{person}涉嫌受贿一案，经最高人民检察院指定，由{province}人民检察院侦查终结后移送{province}{city}人民检察院审查起诉。\
         近日，{province}{city}人民检察院已向{province}{city}中级人民法院提起公诉。检察机关在审查起诉阶段依法告知了被告人\
         {person}享有的诉讼权利，并讯问了被告人，听取了辩护人的意见。检察机关起诉指控：被告人{person}利用担任职务上的便利，\
         为他人谋取利益，非法收受他人巨额财物，依法应当以受贿罪追究其刑事责任。"
    )
}

#[test]
fn a_template_filled_with_other_names_is_not_an_excerpt() {
    // A short page of its own around each, so that the shared wording would be a share
    // large enough for an excerpt.
    let other = unrelated();
    let other: (String, String) = (other.0.chars().take(800).collect(), other.1.chars().take(800).collect());
    let a = format!(
        "{}\n{}{}",
        other.0,
        prosecution("项俊波", "江苏省", "常州市"),
        prosecution("杨崇勇", "天津市", "滨海新区")
    );
    let b = format!(
        "{}\n{}{}",
        other.1,
        prosecution("冯新柱", "浙江省", "杭州市"),
        prosecution("虞海燕", "重庆市", "万州区")
    );
    let c = cmp(&a, &b);
    assert!(c.copied_chars >= 150, "the fixed wording aligns: {} {:?}", c.copied_chars, c.explanation);
    assert!(!c.verdict.duplicate, "{:?} {:?}", c.verdict, c.explanation);
    assert!(c.explanation.passages.iter().any(|p| p.differences == Differences::Names), "{:?}", c.explanation);
    assert!(c.explanation.names_only_chars >= 100, "{:?}", c.explanation);
    let zh = formulaic::render(&c.explanation, Lang::ZhCn).join("\n");
    assert!(zh.contains("仅人名、地名、机构名"), "{zh}");
}

#[test]
fn the_same_prosecution_reported_twice_is_still_a_copy() {
    let other = unrelated();
    let other: (String, String) = (other.0.chars().take(800).collect(), other.1.chars().take(800).collect());
    let report =
        format!("{}{}", prosecution("项俊波", "江苏省", "常州市"), prosecution("杨崇勇", "天津市", "滨海新区"));
    let c = cmp(&format!("{}\n{report}", other.0), &format!("{}\n{report}", other.1));
    assert!(c.verdict.duplicate, "{:?} {:?}", c.verdict, c.explanation);
}

/// A text whose every name is changed, the rest left as it is, holds most of the other:
/// a pirate's renamed copy, judged by containment. Only texts that are an excerpt of each
/// other at most have their names-only passages set aside.
#[test]
fn a_text_renamed_throughout_is_still_a_copy() {
    let a = format!("{}{}", prosecution("项俊波", "江苏省", "常州市"), prosecution("杨崇勇", "天津市", "滨海新区"));
    let b = format!("{}{}", prosecution("冯新柱", "浙江省", "杭州市"), prosecution("虞海燕", "重庆市", "万州区"));
    let c = cmp(&a, &b);
    assert!(c.verdict.duplicate, "{:?} {:?}", c.verdict, c.explanation);
    assert!(c.explanation.passages.iter().all(|p| p.differences != Differences::Names), "{:?}", c.explanation);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Whatever ids two link lists of one host hold, their characters never count as
    /// copied text.
    #[test]
    fn url_runs_never_count_as_copied_text(
        ids_a in prop::collection::vec("[0-9a-f]{16}", 20..50),
        ids_b in prop::collection::vec("[0-9a-f]{16}", 20..50),
    ) {
        let c = cmp(&link_list(&ids_a), &link_list(&ids_b));
        prop_assert_eq!(c.copied_chars, 0);
        prop_assert!(!c.verdict.duplicate || ids_a == ids_b, "{:?}", c.verdict);
    }
}
