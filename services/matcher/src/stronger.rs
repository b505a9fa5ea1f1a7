//! A page's fuller copy of one section explains its weaker match with another section of
//! the same work.
//!
//! Sections of one work share text: a novel repeats its lists of heroes and the set
//! descriptions of its battles, a serial recaps the last chapter. A page that copies one
//! of them whole also aligns, passage by passage, with the other, and those passages can
//! add up to an excerpt: the page would be reported twice, once against a section it did
//! not copy. When a page copies section S by containment (most of S is on the page, or
//! most of the page is S's text) and matches section W of the same work by less, W's
//! counted passages that lie, on the page, mostly inside S's counted evidence are evidence
//! of the copy of S, not of W ([`within_stronger`]): they are set aside
//! ([`crate::catalogue::CatalogueProfile::discount_passages`]) and W is decided again. It
//! stays a copy on what else it shares with the page: a page holding S whole and an
//! excerpt of W elsewhere keeps both.
//!
//! Only sections of one work explain each other: a page that copies one holder's story
//! whole and holds another holder's text inside it is left to the other rules (the
//! catalogue's common text, text seen elsewhere). The copies compared are those found for
//! the page in one run (a page against every section, or a work's sections against the
//! stored pages); a copy recorded earlier is not re-read.
//!
//! Pure: no I/O.

use zhiwen_core::compare::{merge_ranges, Comparison, Thresholds, VerdictKind};

/// Does `c` hold most of one text inside the other (a copy by containment, not an
/// excerpt)?
pub fn by_containment(c: &Comparison, t: &Thresholds) -> bool {
    c.verdict.duplicate
        && (c.verdict.kind == VerdictKind::Identical || c.a_inside_b().max(c.b_inside_a()) >= t.containment)
}

/// The counted evidence passages of `weak` (a section compared with a page) that lie, on
/// the page, at least half inside the counted evidence of one of `stronger` (other
/// sections of the same work compared with the same page) that is a copy by containment
/// and shares more distinct characters with the page: indices in `weak`'s evidence.
/// Empty when `weak` is itself a copy by containment.
pub fn within_stronger(weak: &Comparison, stronger: &[&Comparison], t: &Thresholds) -> Vec<usize> {
    if !weak.verdict.duplicate || by_containment(weak, t) {
        return Vec::new();
    }
    let counted = |c: &Comparison| -> Vec<(usize, usize)> {
        c.explanation
            .passages
            .iter()
            .filter(|p| p.counted)
            .filter_map(|p| c.evidence.get(p.evidence))
            .map(|e| (e.b_start, e.b_end))
            .collect()
    };
    let held: Vec<(usize, usize)> = merge_ranges(
        stronger
            .iter()
            .filter(|s| by_containment(s, t) && s.distinct_copied_chars > weak.distinct_copied_chars)
            .flat_map(|s| counted(s))
            .collect(),
    );
    if held.is_empty() {
        return Vec::new();
    }
    weak.explanation
        .passages
        .iter()
        .filter(|p| p.counted)
        .filter_map(|p| weak.evidence.get(p.evidence).map(|e| (p.evidence, e.b_start, e.b_end)))
        .filter(|&(_, start, end)| {
            let inside: usize = held.iter().map(|&(s, e)| end.min(e).saturating_sub(start.max(s))).sum();
            end > start && inside * 2 >= end - start
        })
        .map(|(i, _, _)| i)
        .collect()
}

#[cfg(test)]
mod tests {
    use zhiwen_core::canon::InputFormat;
    use zhiwen_core::compare::compare;
    use zhiwen_core::{Analysis, Fingerprinter, Params};
    use zhiwen_testkit::corpus::classic_texts as classics;

    use super::*;
    use crate::catalogue::{CatalogueProfile, SetAside};
    use crate::config::CatalogueConfig;

    /// Shuihu chapters 76 and 109 describe two battle arrays with the same heroes in the
    /// same words (`左手是“丑郡马”宣赞，右手是“井水犴”郝思文，三员大将…`): compared with a
    /// page that copies chapter 76 whole, chapter 109 shares 850 distinct characters in
    /// 21 passages, an excerpt by length. Those passages lie inside the copy of 76 on the
    /// page and count for it only; the page holding, besides, an excerpt of chapter 109's
    /// own text is still a copy of 109.
    #[test]
    fn a_passage_two_chapters_share_counts_for_the_chapter_the_page_copies() {
        let c = classics();
        let params = Params::default();
        let fp = Fingerprinter::new(params.clone()).expect("default parameters");
        let t = Thresholds::default();
        let k = params.winnow.chars_k;
        let analyse = |text: &str| fp.analyze_text(text, InputFormat::Text).expect("text analysable");
        let (s, w) = (analyse(&c["novel-shuihu-076"]), analyse(&c["novel-shuihu-109"]));
        let none = CatalogueProfile::measure(std::iter::empty(), &CatalogueConfig { enabled: true, min_sections: 3 });
        let judge = |page: &Analysis| {
            let strong = compare(&s, page, &params, &t);
            let mut weak = compare(&w, page, &params, &t);
            assert!(by_containment(&strong, &t), "{:?}", strong.verdict);
            assert!(weak.verdict.duplicate && !by_containment(&weak, &t), "{:?}", weak.verdict);
            // The fuller copy is never explained by the weaker one, nor a copy by itself.
            assert!(within_stronger(&strong, &[&weak], &t).is_empty());
            assert!(within_stronger(&weak, &[&weak], &t).is_empty());
            let aside = within_stronger(&weak, &[&strong], &t);
            none.discount_passages(&mut weak, &w, page, k, &t, SetAside::WithinStrongerCopy(&aside));
            (aside.len(), weak)
        };

        let page = analyse(&c["novel-shuihu-076"]);
        let (aside, weak) = judge(&page);
        assert!(aside >= 15, "{aside} of {} passages set aside", weak.evidence.len());
        assert!(!weak.verdict.duplicate, "chapter 109 is not copied: {:?}", weak.verdict);
        let e = &weak.explanation;
        assert!(e.within_stronger_copy_chars >= 700 && e.passages.iter().any(|p| p.within_stronger_copy), "{e:?}");

        // The page also quotes 109's opening, which 76 does not hold.
        let own: String = c["novel-shuihu-109"].chars().take(600).collect();
        let page = analyse(&format!("{}\n{own}", c["novel-shuihu-076"]));
        let (aside, weak) = judge(&page);
        assert!(aside >= 15);
        assert!(weak.verdict.duplicate, "the excerpt of 109 is still a copy: {:?}", weak.verdict);
    }
}
