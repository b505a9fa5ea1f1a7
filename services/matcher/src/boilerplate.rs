//! Shared boilerplate: measured per site, blanked before lookup and verification.
//!
//! A site's header, footer, ad lines or a news agency's fixed story prefix occur on most
//! of its pages; a text copied from a protected work occurs on one page (or a few) of a
//! site. So a site's profile is the set of character k-grams found on at least a share
//! of its first pages, and every page of the site is looked up and compared with those
//! k-grams blanked out of its canonical text (each character replaced by one space, so
//! the map to the original, and thus evidence quotes, stay those of the page).

use std::time::Instant;

use rustc_hash::{FxHashMap, FxHashSet};

use zhiwen_core::winnow::kgram_hashes;
use zhiwen_core::CharStream;

use crate::config::BoilerplateConfig;

/// The boilerplate k-grams of one site.
#[derive(Debug, Clone, Default)]
pub struct SiteProfile {
    /// Host.
    pub site: String,
    /// Pages the profile was measured on.
    pub pages_sampled: usize,
    /// Character k-gram hashes (winnowing `chars_k`) that are boilerplate. Fx-hashed:
    /// every k-gram of every page of the site is looked up here, and the keys are
    /// already uniform hashes, which SipHash's protection against chosen keys does not
    /// need.
    pub kgrams: FxHashSet<u64>,
    pub(crate) built: Option<Instant>,
}

impl SiteProfile {
    /// Measure a profile from the normalised character streams of a site's pages.
    pub fn measure(site: &str, pages: &[Vec<u32>], k: usize, config: &BoilerplateConfig) -> Self {
        let mut profile = SiteProfile {
            site: site.to_owned(),
            pages_sampled: pages.len(),
            kgrams: FxHashSet::default(),
            built: None,
        };
        if pages.len() < config.min_pages as usize || pages.len() < 2 {
            return profile;
        }
        let need = ((pages.len() as f64 * config.min_share).ceil() as u32).max(2);
        profile.kgrams = kgrams_on_pages(pages, k, need);
        profile
    }
}

/// The k-grams found on at least `need` of `pages`.
///
/// Each k-gram's count of pages, and the last page that counted it: a k-gram repeated on
/// a page counts once for it, without sorting each page's k-grams to find repeats. Only
/// the first `pages.len() - need + 1` pages can bring in a k-gram that reaches `need`, so
/// the later pages only count what is there; and once a k-gram's count could not reach
/// `need` with every page still to come, it is dropped. Most k-grams are a page's own, and
/// go at the first such pruning, so the later pages are counted in a small map that stays
/// in cache instead of in one of every k-gram of the sample (twice as many inserts, most
/// of them cache misses; measuring was 3.5-4.4% of `match --all`, docs/benchmarks.md).
fn kgrams_on_pages(pages: &[Vec<u32>], k: usize, need: u32) -> FxHashSet<u64> {
    let n = pages.len();
    if (need as usize) > n {
        return FxHashSet::default();
    }
    // Pages 1..=open may bring in new k-grams.
    let open = n + 1 - need as usize;
    // Sized for every k-gram of those pages being distinct, so that it does not grow (the
    // growing was a third of measuring), up to a million k-grams (~27 MB).
    let kgrams: usize = pages[..open].iter().map(|units| units.len().saturating_sub(k.saturating_sub(1))).sum();
    let mut counts: FxHashMap<u64, (u32, u32)> =
        FxHashMap::with_capacity_and_hasher(kgrams.min(1 << 20), Default::default());
    for (page, units) in (1u32..).zip(pages) {
        let brings_new = page as usize <= open;
        for h in kgram_hashes(units, k) {
            let entry = if brings_new { Some(counts.entry(h).or_default()) } else { counts.get_mut(&h) };
            if let Some((count, last)) = entry {
                if *last != page {
                    (*count, *last) = (*count + 1, page);
                }
            }
        }
        // At page `open` every k-gram counted could still reach `need`.
        if page as usize > open {
            // Pages still to come after this one.
            let left = (n - page as usize) as u32;
            let before = counts.len();
            counts.retain(|_, (count, _)| *count + left >= need);
            if counts.len() < before / 2 {
                counts.shrink_to_fit();
            }
        }
    }
    counts.into_keys().collect()
}

/// The canonical offsets of the characters of `chars` that belong to a boilerplate k-gram
/// of `profile`, ascending; none when the page holds no boilerplate. `chars` is the
/// character stream of a canonical text ([`CharStream::of`]): nothing else of an analysis
/// is needed to find boilerplate, and the text is blanked where it was found
/// ([`zhiwen_core::canon::CanonicalText::into_blanked`]).
pub fn boilerplate_positions(chars: &CharStream, profile: &SiteProfile, k: usize) -> Vec<u32> {
    if profile.kgrams.is_empty() {
        return Vec::new();
    }
    let units = &chars.units;
    let hashes = kgram_hashes(units, k);
    let mut flagged = vec![false; units.len()];
    let mut any = false;
    for (i, h) in hashes.iter().enumerate() {
        if profile.kgrams.contains(h) {
            any = true;
            flagged[i..i + k].iter_mut().for_each(|f| *f = true);
        }
    }
    if !any {
        return Vec::new();
    }
    // Units are in text order, so their positions ascend.
    flagged.iter().zip(&chars.positions).filter(|(f, _)| **f).map(|(_, &pos)| pos).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The plain count: every page's distinct k-grams, counted over all pages.
    fn kgrams_on_pages_by_sets(pages: &[Vec<u32>], k: usize, need: u32) -> FxHashSet<u64> {
        let mut counts: FxHashMap<u64, u32> = FxHashMap::default();
        for units in pages {
            let distinct: FxHashSet<u64> = kgram_hashes(units, k).into_iter().collect();
            distinct.into_iter().for_each(|h| *counts.entry(h).or_default() += 1);
        }
        counts.into_iter().filter(|&(_, c)| c >= need).map(|(h, _)| h).collect()
    }

    proptest! {
        /// Counting only what can still reach the share gives the plain count's k-grams.
        #[test]
        fn pruned_counting_keeps_what_the_plain_count_keeps(
            pages in prop::collection::vec(prop::collection::vec(0u32..4, 0..24), 0..12),
            k in 1usize..4,
            need in 2u32..14,
        ) {
            prop_assert_eq!(kgrams_on_pages(&pages, k, need), kgrams_on_pages_by_sets(&pages, k, need));
        }
    }

    /// A k-gram counts once per page however often the page repeats it: a line repeated
    /// on a few pages is not boilerplate, a line on most pages is.
    #[test]
    fn a_kgram_counts_once_per_page() {
        let units = |s: &str| s.chars().map(|c| c as u32).collect::<Vec<u32>>();
        let k = 4;
        let config = BoilerplateConfig { min_pages: 2, min_share: 0.5, ..BoilerplateConfig::default() };
        let repeated = "本章未完请翻页".repeat(9);
        // 8 pages: the footer on 5 of them, the repeated line 9 times on each of 2.
        let mut pages = Vec::new();
        for i in 0..8 {
            let mut text = format!("第{i}章正文各不相同{}", "甲乙丙丁戊己庚辛".chars().nth(i).unwrap_or('子'));
            if i < 5 {
                text.push_str("欢迎访问本站收藏");
            }
            if i < 2 {
                text.push_str(&repeated);
            }
            pages.push(units(&text));
        }
        let profile = SiteProfile::measure("site", &pages, k, &config);
        let footer = kgram_hashes(&units("欢迎访问本站收藏"), k);
        assert!(footer.iter().all(|h| profile.kgrams.contains(h)), "the footer is on 5 of 8 pages");
        let line = kgram_hashes(&units("本章未完请翻页"), k);
        assert!(line.iter().all(|h| !profile.kgrams.contains(h)), "the repeated line is on 2 of 8 pages");
        // What every page has is boilerplate too; what one page has is not.
        assert!(profile.kgrams.contains(&kgram_hashes(&units("正文各不"), k)[0]));
        assert!(!profile.kgrams.contains(&kgram_hashes(&units("第0章正"), k)[0]));
    }
}
