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
//!
//! A section index that keeps 1 in `m` of the winnowed keys (`section_index_sampling`)
//! knows the common keys of that sample only, about one every `m (w + 1) / 2` characters
//! of a common passage (36 with the defaults) instead of one every `(w + 1) / 2`, so
//! marking their k-grams alone would mark an eighth of the text common to many sections.
//! The profile then reads the text at its sampled winnowed keys, the keys it can judge,
//! and marks the characters between two consecutive ones that are both common (as two
//! consecutive common keys of the full layout, at most `w` apart, mark everything
//! between them), and half the way from a common one to the next key it can judge that
//! is not common: where a common passage ends between the two is unknown, and the
//! middle is the estimate that neither favours nor disfavours the page. From a common
//! key with no judged key before (after) it, the marking runs to the start (end) of the
//! text: a programme's prefix or trailer starts or ends the text it is common to. No gap
//! wider than `2 m (k + 1)` characters (four times the mean) is bridged, and no marking
//! runs further than half of that from a key. With every key (`m` = 1) this is the
//! marking above, unchanged.

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
    /// The profile knows the common keys whose value is divisible by this (a power of
    /// two; 0 and 1: every key), the sampling of the section index it was read from
    /// (see the module documentation).
    pub sampling: u64,
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
        CatalogueProfile { kgrams, token: 0, sampling: 1 }
    }

    /// The profile of the common keys a section index sampled 1 in `sampling` holds
    /// (`keys`: its keys held by at least `min_sections` sections). Keys outside the
    /// sample (from sections indexed with every key before the sampling was raised) are
    /// left out, so that every key of the sample is judged alike.
    pub fn sampled(keys: impl IntoIterator<Item = u64>, sampling: u64) -> Self {
        let kgrams = keys.into_iter().filter(|&h| zhiwen_index::kept_by_sampling(h, sampling)).collect();
        CatalogueProfile { kgrams, token: 0, sampling: sampling.max(1).next_power_of_two() }
    }

    /// For each character unit of `units`, whether it lies inside catalogue-common text
    /// (`k`: the winnowing `chars_k`; `winnowed`: the text's winnowed character keys, in
    /// the order of their positions): inside a catalogue-common k-gram, and with a
    /// sampled profile between and around its sampled common keys (see the module
    /// documentation).
    pub fn common_units(&self, units: &[u32], winnowed: &[WinnowFp], k: usize) -> Vec<bool> {
        let mut marked = vec![false; units.len()];
        if self.kgrams.is_empty() {
            return marked;
        }
        for (i, h) in kgram_hashes(units, k).iter().enumerate() {
            if self.kgrams.contains(h) {
                marked[i..i + k].iter_mut().for_each(|m| *m = true);
            }
        }
        if self.sampling > 1 {
            self.mark_between_sampled_keys(&mut marked, winnowed, k);
        }
        marked
    }

    /// The sampled profile's marking between and around the text's common sampled keys.
    fn mark_between_sampled_keys(&self, marked: &mut [bool], winnowed: &[WinnowFp], k: usize) {
        let max_gap = 2 * self.sampling as usize * (k + 1);
        let len = marked.len();
        // The keys the profile can judge: (position, common), one per position.
        let mut judged: Vec<(usize, bool)> = Vec::new();
        for f in winnowed.iter().filter(|f| zhiwen_index::kept_by_sampling(f.hash, self.sampling)) {
            let pos = f.pos as usize;
            if pos + k <= len && judged.last().is_none_or(|&(p, _)| p < pos) {
                judged.push((pos, self.kgrams.contains(&f.hash)));
            }
        }
        let mut mark = |from: usize, to: usize| marked[from..to.min(len)].iter_mut().for_each(|m| *m = true);
        for (i, &(pos, common)) in judged.iter().enumerate() {
            if !common {
                continue;
            }
            // Back towards the previous judged key (or the start of the text).
            let before = match i.checked_sub(1).map(|j| judged[j]) {
                Some((prev, true)) if pos - prev <= max_gap => prev,
                Some((prev, _)) => pos - ((pos - prev) / 2).min(max_gap / 2),
                None => pos - pos.min(max_gap / 2),
            };
            // On towards the next judged key (or the end of the text).
            let after = match judged.get(i + 1) {
                Some(&(next, true)) if next - pos <= max_gap => next,
                Some(&(next, _)) => pos + ((next - pos) / 2).min(max_gap / 2),
                None => pos + (len - k - pos).min(max_gap / 2),
            };
            mark(before, after + k);
        }
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
            let marked = self.common_units(&x.chars.units, &x.fingerprints.winnow_chars, k);
            let ranges = zhiwen_core::compare::merge_ranges(ranges);
            let mut spans = x.canonical.source_spans().cursor();
            x.chars
                .positions
                .iter()
                .zip(&marked)
                .filter(|&(&pos, &m)| !m && inside(&ranges, spans.at(pos as usize).start as usize))
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
        for sampling in [1, 8, 16] {
            common_text_does_not_accuse_a_real_excerpt_does(sampling);
        }
    }

    /// The test above with the profile a section index sampled 1 in `sampling` holds.
    fn common_text_does_not_accuse_a_real_excerpt_does(sampling: u64) {
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
        let profile = CatalogueProfile::sampled(profile.kgrams, sampling);
        assert!(!profile.kgrams.is_empty(), "the banner is common to four sections (1 in {sampling})");

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

    /// A sampled profile judges a text at its sampled winnowed keys: between two common
    /// ones everything is marked, from a common one half the way to a judged key that is
    /// not common (or to the end of the text), never across a gap wider than four mean
    /// gaps; keys outside the sample are not judged, and a profile of every key marks only
    /// the k-grams of its keys.
    #[test]
    fn a_sampled_profile_marks_between_and_around_its_common_keys() {
        let k = 8;
        // Units whose own k-gram hashes are not in any profile below.
        let units: Vec<u32> = (0..400).map(|i| 0x4e00 + i).collect();
        let key = |hash: u64, pos: u32| WinnowFp { hash, pos };
        let marked_ranges = |p: &CatalogueProfile, winnowed: &[WinnowFp]| {
            let marked = p.common_units(&units, winnowed, k);
            let mut ranges = Vec::new();
            for (i, &m) in marked.iter().enumerate() {
                match (m, ranges.last_mut()) {
                    (true, Some((_, end))) if *end == i => *end = i + 1,
                    (true, _) => ranges.push((i, i + 1)),
                    _ => {}
                }
            }
            ranges
        };
        // 1 in 8: common keys 8, 16, 24; 32 is judged and not common; 5 is not judged.
        let p = CatalogueProfile::sampled([8, 16, 24, 5], 8);
        assert_eq!(p.kgrams, FxHashSet::from_iter([8, 16, 24]));
        let winnowed = [
            key(40, 60),  // judged, not common
            key(8, 100),  // common
            key(5, 110),  // not judged
            key(16, 130), // common, 30 after the last
            key(32, 170), // judged, not common, 40 after
            key(24, 380), // common, 210 after: the gap is wider than 2 * 8 * 9 = 144
        ];
        // Back half of 40 from 100, on to 130, half of 40 on (and its k-gram); at 380,
        // back half of 210 capped at 72, forwards to the end of the text.
        assert_eq!(marked_ranges(&p, &winnowed), vec![(80, 150 + k), (308, 400)]);
        // Only the sampled keys of the text are read: without judged neighbours, a common
        // key extends half of four mean gaps (72) each way, clipped to the text.
        assert_eq!(marked_ranges(&p, &[key(8, 100)]), vec![(28, 100 + k + 72)]);
        // A profile of every key marks the k-grams of its keys, nothing between them.
        let full = CatalogueProfile { kgrams: FxHashSet::from_iter([8, 16]), token: 0, sampling: 1 };
        assert_eq!(marked_ranges(&full, &winnowed), Vec::<(usize, usize)>::new());
        let hashes = kgram_hashes(&units, k);
        let full = CatalogueProfile { kgrams: FxHashSet::from_iter([hashes[10], hashes[40]]), token: 0, sampling: 1 };
        assert_eq!(marked_ranges(&full, &[key(hashes[10], 10), key(hashes[40], 40)]), vec![(10, 18), (40, 48)]);
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
