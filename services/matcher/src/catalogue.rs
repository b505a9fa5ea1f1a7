//! Catalogue-common text: passages found in many registered sections.
//!
//! A slogan every 新闻联播 story of a season carries, the programme's fixed prefix and
//! link trailer, a set phrase of officialese, a list of names 水浒传 repeats from chapter
//! to chapter: such text occurs in many registered sections, so a page sharing it has not
//! shown that it copies one of them. Boilerplate of a *site* is measured on the site's
//! pages ([`crate::boilerplate`]); this is the same idea on the *catalogue*: the profile
//! is the set of winnowed character keys (exactly the keys the index holds for sections)
//! found in at least `min_sections` registered sections.
//!
//! A comparison's copied characters under such keys (on either side) do not count
//! towards an excerpt ([`zhiwen_core::compare::decide_excerpt`]): a passage that is a
//! small part of both texts must be long enough without them. Verdicts by containment
//! and the evidence passages are unchanged.
//!
//! The winnowing guarantee makes the keys enough: every run of `w + k - 1` characters
//! holds a winnowed key, chosen by the run's own characters, so a common passage of that
//! length has the same keys in every section that holds it, and every k-gram of a text
//! whose hash is one of them is marked (a page is marked over all its k-grams, not only
//! its own winnowed ones).

use rustc_hash::{FxHashMap, FxHashSet};

use zhiwen_core::compare::{decide_excerpt, Comparison, Thresholds};
use zhiwen_core::winnow::{kgram_hashes, WinnowFp};
use zhiwen_core::Analysis;

use crate::config::CatalogueConfig;

/// The catalogue-common character keys of the registered sections.
#[derive(Debug, Clone, Default)]
pub struct CatalogueProfile {
    /// Winnowed character k-gram hashes found in at least `min_sections` sections
    /// (Fx-hashed: every k-gram of a compared passage is looked up here).
    pub kgrams: FxHashSet<u64>,
    /// The section index's write token read before the profile was measured from it
    /// ([`zhiwen_index::CandidateIndex::write_token`]): the same token read later means
    /// that no section changed since.
    pub(crate) token: u64,
}

impl CatalogueProfile {
    /// Measure the profile from the winnowed character keys of every registered section:
    /// the definition. A matcher reads the same set from the section index instead
    /// ([`zhiwen_index::CandidateIndex::common_keys`]), without counting every key of the
    /// catalogue in memory.
    pub fn measure<'a>(sections: impl IntoIterator<Item = &'a [WinnowFp]>, config: &CatalogueConfig) -> Self {
        let mut counts: FxHashMap<u64, u32> = FxHashMap::default();
        let mut keys: Vec<u64> = Vec::new();
        for fps in sections {
            keys.clear();
            keys.extend(fps.iter().map(|f| f.hash));
            keys.sort_unstable();
            keys.dedup();
            for &h in &keys {
                *counts.entry(h).or_default() += 1;
            }
        }
        let need = config.min_sections.max(2);
        let kgrams = if config.enabled {
            counts.into_iter().filter(|&(_, c)| c >= need).map(|(h, _)| h).collect()
        } else {
            FxHashSet::default()
        };
        CatalogueProfile { kgrams, token: 0 }
    }

    /// For each character unit of `units`, whether it lies inside a catalogue-common
    /// k-gram (`k`: the winnowing `chars_k`).
    pub fn common_units(&self, units: &[u32], k: usize) -> Vec<bool> {
        let mut marked = vec![false; units.len()];
        if self.kgrams.is_empty() {
            return marked;
        }
        for (i, h) in kgram_hashes(units, k).iter().enumerate() {
            if self.kgrams.contains(h) {
                marked[i..i + k].iter_mut().for_each(|m| *m = true);
            }
        }
        marked
    }

    /// Copied characters of `c` (section `a`, page `b`) outside catalogue-common text:
    /// on each side, the content characters inside the evidence passages and not under
    /// a common key; the smaller of the two counts (as the comparison's own count).
    pub fn distinctive_chars(&self, c: &Comparison, a: &Analysis, b: &Analysis, k: usize) -> usize {
        self.distinctive_chars_of(c, a, b, k, |_| true)
    }

    /// [`CatalogueProfile::distinctive_chars`] over the evidence passages `keep` keeps.
    fn distinctive_chars_of(
        &self,
        c: &Comparison,
        a: &Analysis,
        b: &Analysis,
        k: usize,
        keep: impl Fn(usize) -> bool,
    ) -> usize {
        let evidence = || c.evidence.iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, e)| e);
        let side = |x: &Analysis, ranges: Vec<(usize, usize)>| -> usize {
            let marked = self.common_units(&x.chars.units, k);
            let ranges = zhiwen_core::compare::merge_ranges(ranges);
            x.chars
                .positions
                .iter()
                .zip(&marked)
                .filter(|&(&pos, &m)| !m && inside(&ranges, x.canonical.source_of(pos as usize).start as usize))
                .count()
        };
        let da = side(a, evidence().map(|e| (e.a_start, e.a_end)).collect());
        let db = side(b, evidence().map(|e| (e.b_start, e.b_end)).collect());
        da.min(db).min(c.copied_chars)
    }

    /// Decide `c` again without the evidence passages `set_aside` lists (passages seen
    /// elsewhere, [`crate::seen`], or inside the page's fuller copy of another section of
    /// the work, [`crate::stronger`]), its catalogue-common characters discounted as well:
    /// only the counted passages not listed count towards an excerpt, and (as for a
    /// template's figures-only passages) no verdict, containment included, is reached on
    /// the characters of the listed ones alone. They are marked in the explanation (no
    /// longer counted, the reason set). Returns whether the verdict changed.
    pub fn discount_passages(
        &self,
        c: &mut Comparison,
        a: &Analysis,
        b: &Analysis,
        k: usize,
        t: &Thresholds,
        set_aside: SetAside<'_>,
    ) -> bool {
        if set_aside.is_empty() || !c.verdict.duplicate {
            return false;
        }
        let e = &mut c.explanation;
        for (i, documents) in set_aside.passages() {
            if let Some(p) = e.passages.iter_mut().find(|p| p.evidence == i) {
                if p.counted {
                    match documents {
                        Some(_) => e.seen_elsewhere_chars += p.chars,
                        None => e.within_stronger_copy_chars += p.chars,
                    }
                    e.uncounted_copied_chars += p.chars;
                }
                p.counted = false;
                match documents {
                    Some(documents) => p.seen_elsewhere = documents,
                    None => p.within_stronger_copy = true,
                }
            }
        }
        let counted = |i: usize| c.explanation.passages.iter().any(|p| p.evidence == i && p.counted);
        let distinctive = self.distinctive_chars_of(c, a, b, k, counted);
        let verdict = decide_excerpt(c, distinctive, a.chars.units.len(), b.chars.units.len(), t);
        let changed = verdict != c.verdict;
        c.verdict = verdict;
        changed
    }

    /// Decide `c` again with its catalogue-common characters discounted (see the module
    /// documentation). Returns whether the verdict changed.
    pub fn discount(&self, c: &mut Comparison, a: &Analysis, b: &Analysis, k: usize, t: &Thresholds) -> bool {
        if self.kgrams.is_empty() || !c.verdict.duplicate {
            return false;
        }
        let distinctive = self.distinctive_chars(c, a, b, k);
        if distinctive >= c.copied_chars {
            return false;
        }
        let verdict = decide_excerpt(c, distinctive, a.chars.units.len(), b.chars.units.len(), t);
        let changed = verdict != c.verdict;
        c.verdict = verdict;
        changed
    }
}

/// Evidence passages set aside by [`CatalogueProfile::discount_passages`], and why.
#[derive(Debug, Clone, Copy)]
pub enum SetAside<'a> {
    /// Passages seen elsewhere: index in the evidence, and the documents found holding it.
    SeenElsewhere(&'a [(usize, u32)]),
    /// Passages inside the page's fuller copy of another section of the work: indices in
    /// the evidence.
    WithinStrongerCopy(&'a [usize]),
}

impl SetAside<'_> {
    fn is_empty(self) -> bool {
        match self {
            SetAside::SeenElsewhere(s) => s.is_empty(),
            SetAside::WithinStrongerCopy(s) => s.is_empty(),
        }
    }

    /// Each passage's index, with the documents holding it when it was seen elsewhere.
    fn passages(self) -> Vec<(usize, Option<u32>)> {
        match self {
            SetAside::SeenElsewhere(s) => s.iter().map(|&(i, n)| (i, Some(n))).collect(),
            SetAside::WithinStrongerCopy(s) => s.iter().map(|&i| (i, None)).collect(),
        }
    }
}

/// Is `x` inside one of the sorted, merged half-open `ranges`?
fn inside(ranges: &[(usize, usize)], x: usize) -> bool {
    let i = ranges.partition_point(|r| r.1 <= x);
    ranges.get(i).is_some_and(|r| r.0 <= x)
}

#[cfg(test)]
mod tests {
    use zhiwen_core::canon::InputFormat;
    use zhiwen_core::compare::compare;
    use zhiwen_core::{Fingerprinter, Params};

    use super::*;

    use zhiwen_testkit::corpus::classic_texts as classics;

    fn content_chars(s: &str) -> usize {
        s.chars().filter(|c| c.is_alphanumeric()).count()
    }

    /// Four chapters of four classics carry the same 84-character banner of the site they
    /// were taken from (`...为每位爱好文字的人提供...`). A page sharing that banner and the
    /// line before it with one registered chapter is an excerpt by length and share
    /// without the catalogue rule; with it, only the line before the banner counts and
    /// the page is not accused. A real excerpt of the same length of the same chapter
    /// still is.
    #[test]
    fn text_common_to_many_sections_does_not_accuse_a_page_a_real_excerpt_of_that_length_does() {
        let c = classics();
        let fp = Fingerprinter::new(Params::default()).expect("default params");
        let params = Params::default();
        let t = Thresholds::default();
        let k = params.winnow.chars_k;
        let ids = [
            "novel-shuihu-044",
            "novel-xiyouji-048",
            "novel-sanguo-069",
            "novel-hongloumeng-056",
            "novel-shuihu-043",
            "novel-xiyouji-047",
        ];
        let sections: Vec<Analysis> =
            ids.iter().map(|id| fp.analyze_text(&c[*id], InputFormat::Text).expect("chapter analysable")).collect();
        let profile = CatalogueProfile::measure(
            sections.iter().map(|a| a.fingerprints.winnow_chars.as_slice()),
            &CatalogueConfig { enabled: true, min_sections: 3 },
        );
        assert!(!profile.kgrams.is_empty(), "the banner is common to four sections");

        // The page: an unrelated chapter's opening around the shared text.
        let chapter: Vec<char> = c["novel-shuihu-044"].chars().collect();
        let filler: Vec<char> = c["novel-sanguo-001"].chars().collect();
        let banner_at = c["novel-shuihu-044"].find("为每位爱好文字").expect("banner in the chapter");
        let banner_at = c["novel-shuihu-044"][..banner_at].chars().count();
        let end = banner_at + chapter[banner_at..].iter().position(|&ch| ch == '。').expect("banner ends") + 1;
        // The banner, and the chapter's own text before its separator line.
        let shared: String = chapter[banner_at - 120..end].iter().collect();
        let len = content_chars(&shared);
        assert!((110..=160).contains(&len), "shared passage of {len} content characters");
        let page_with = |quote: &str| -> Analysis {
            let before: String = filler[..300].iter().collect();
            let after: String = filler[300..560].iter().collect();
            fp.analyze_text(&format!("{before}\n{quote}\n{after}"), InputFormat::Text).expect("page analysable")
        };

        let common_page = page_with(&shared);
        let mut cmp = compare(&sections[0], &common_page, &params, &t);
        assert!(cmp.verdict.duplicate, "without the rule the shared banner accuses the page: {:?}", cmp.verdict);
        let distinctive = profile.distinctive_chars(&cmp, &sections[0], &common_page, k);
        assert!(distinctive < t.min_excerpt_chars, "{distinctive} of {} copied characters", cmp.copied_chars);
        assert!(profile.discount(&mut cmp, &sections[0], &common_page, k, &t), "the verdict changes");
        assert!(!cmp.verdict.duplicate, "{:?}", cmp.verdict);

        // A real excerpt of the same chapter, as long as the shared passage.
        let start = 2_000;
        let mut n = 0;
        let quote: String = chapter[start..]
            .iter()
            .take_while(|ch| {
                n += usize::from(ch.is_alphanumeric());
                n <= len
            })
            .collect();
        assert_eq!(content_chars(&quote), len);
        let excerpt_page = page_with(&quote);
        let mut cmp = compare(&sections[0], &excerpt_page, &params, &t);
        assert!(cmp.verdict.duplicate, "{:?}, copied {}", cmp.verdict, cmp.copied_chars);
        assert!(!profile.discount(&mut cmp, &sections[0], &excerpt_page, k, &t));
        assert!(cmp.verdict.duplicate, "a real excerpt is still a copy: {:?}", cmp.verdict);

        // A containment verdict is never discounted: the whole banner chapter as the page.
        let whole = fp.analyze_text(&c["novel-xiyouji-048"], InputFormat::Text).expect("chapter analysable");
        let mut cmp = compare(&sections[1], &whole, &params, &t);
        assert!(cmp.verdict.duplicate);
        assert!(!profile.discount(&mut cmp, &sections[1], &whole, k, &t));
    }

    #[test]
    fn a_key_must_be_in_min_sections_sections_and_repeats_in_one_section_count_once() {
        let fp = |h: u64| WinnowFp { hash: h, pos: 0 };
        let a = [fp(1), fp(1), fp(2)];
        let b = [fp(1), fp(3)];
        let c = [fp(1), fp(2)];
        let config = CatalogueConfig { enabled: true, min_sections: 3 };
        let p = CatalogueProfile::measure([&a[..], &b[..], &c[..]], &config);
        assert_eq!(p.kgrams, FxHashSet::from_iter([1]));
        let p = CatalogueProfile::measure([&a[..], &b[..], &c[..]], &CatalogueConfig { min_sections: 2, ..config });
        assert_eq!(p.kgrams, FxHashSet::from_iter([1, 2]));
        let off = CatalogueProfile::measure([&a[..], &b[..], &c[..]], &CatalogueConfig { enabled: false, ..config });
        assert!(off.kgrams.is_empty());
    }
}
