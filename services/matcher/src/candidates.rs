//! Candidate selection: which of the index's candidates are worth the full verification.
//!
//! The index ranks candidates by the keys they share in every family. The simhash
//! blocks, DNA codes and LSH bands of unrelated Chinese texts collide by chance, and the
//! pinyin-initial stream has a small alphabet, so a candidate is only verified when it
//! also shares winnowed keys (characters or initials): a copied passage of
//! `min_copied_chars` characters shares several of them, in both the index and the
//! verification's own passage search (which builds passages from exactly these
//! fingerprints). Candidates are verified most shared winnowed keys first.
//!
//! Before the full comparison, [`may_be_copy`] computes only the copied passages of the
//! pair (the part of the comparison every verdict depends on): fewer copied characters
//! than `min_copied_chars` never make a copy, whatever the other measures say (the
//! contract of [`Thresholds::min_copied_chars`]), so such a pair skips the set measures,
//! the DNA and winnowing containments and the quoting of evidence.

use zhiwen_core::compare::{evidence_passages_with, PassageIndex, Thresholds};
use zhiwen_core::{Analysis, IndexFamily, Params};
use zhiwen_index::{Candidate, LookupResult};

use crate::config::MatcherConfig;

/// Winnowed keys (characters and initials) a candidate shares with the query.
pub(crate) fn winnow_hits(c: &Candidate) -> u32 {
    c.hits.get(IndexFamily::WinnowChars) + c.hits.get(IndexFamily::WinnowInitials)
}

/// The candidates of `found` that pass both minimums, most shared winnowed keys first
/// (then most shared keys, then lowest id, so the order is reproducible).
pub(crate) fn worth_verifying<'a>(found: &'a LookupResult, config: &MatcherConfig) -> Vec<&'a Candidate> {
    // Sampled keys (1 in m winnowed keys) give about 1/m of the hits: both minimums
    // are divided by m, rounded up.
    let sampled = found.sample_modulus.max(1);
    let min_winnow = (u64::from(config.min_winnow_hits)).div_ceil(sampled) as u32;
    let min_total = (u64::from(config.min_candidate_hits)).div_ceil(sampled) as u32;
    let mut out: Vec<&Candidate> =
        found.candidates.iter().filter(|c| c.total >= min_total && winnow_hits(c) >= min_winnow).collect();
    out.sort_by(|a, b| winnow_hits(b).cmp(&winnow_hits(a)).then(b.total.cmp(&a.total)).then(a.doc.cmp(&b.doc)));
    out
}

/// Can `a` (a section) and `b` (a page) be a copy? `false` only when their canonical
/// texts differ and the copied passages (exactly those the comparison would report)
/// cover fewer than `thresholds.min_copied_chars` content characters of `a`: such a
/// pair is unrelated whatever its other measures. `b_index`: the passage index of `b`.
pub(crate) fn may_be_copy(
    a: &Analysis,
    b: &Analysis,
    b_index: &PassageIndex,
    params: &Params,
    thresholds: &Thresholds,
) -> bool {
    if a.fingerprints.content_hash == b.fingerprints.content_hash {
        return true;
    }
    let mut ranges: Vec<(u32, u32)> =
        evidence_passages_with(a, b, b_index, params).iter().map(|p| (p.a_start, p.a_end)).collect();
    copied_units(&a.chars.positions, &mut ranges) >= thresholds.min_copied_chars
}

/// Content characters (`positions`: their canonical offsets, sorted) inside the union of
/// half-open canonical ranges: the comparison's copied characters.
fn copied_units(positions: &[u32], ranges: &mut [(u32, u32)]) -> usize {
    ranges.sort_unstable();
    let (mut total, mut end) = (0usize, 0u32);
    for &mut (s, e) in ranges {
        let s = s.max(end);
        if e > s {
            total += positions.partition_point(|&p| p < e) - positions.partition_point(|&p| p < s);
            end = e;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use zhiwen_core::canon::InputFormat;
    use zhiwen_core::compare::compare;
    use zhiwen_core::Fingerprinter;

    /// The pre-check passes every pair with enough copied characters (or equal texts),
    /// so every pair the full comparison calls a copy, and rejects unrelated ones.
    #[test]
    fn the_pre_check_passes_every_pair_the_comparison_calls_a_copy() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/hongloumeng-01.txt");
        let text = std::fs::read_to_string(path).expect("bundled sample");
        let chars: Vec<char> = text.chars().collect();
        let part = |from: usize, len: usize| -> String {
            chars[from.min(chars.len())..(from + len).min(chars.len())].iter().collect()
        };
        let fp = Fingerprinter::new(Params::default()).expect("default parameters");
        let t = Thresholds::default();
        let section = part(0, 1500);
        // Copies (whole, embedded, excerpts of several lengths, edited) and non-copies
        // (other parts of the same chapter, a few shared characters).
        let mut edited: Vec<char> = section.chars().collect();
        for i in (0..edited.len()).step_by(9) {
            edited[i] = '某';
        }
        let pages = vec![
            section.clone(),
            format!("{}{}{}", part(3000, 800), section, part(5000, 800)),
            format!("{}{}", part(3000, 1200), part(200, 40)),
            format!("{}{}", part(3000, 1200), part(200, 60)),
            format!("{}{}", part(3000, 1200), part(300, 200)),
            edited.iter().collect(),
            part(2000, 2000),
            part(1400, 1500),
            part(6000, 3000),
        ];
        let a = fp.analyze_text(&section, InputFormat::Text).expect("section");
        let (mut copies, mut rejected) = (0, 0);
        for page in &pages {
            let b = fp.analyze_text(page, InputFormat::Text).expect("page");
            let c = compare(&a, &b, fp.params(), &t);
            let pass = may_be_copy(&a, &b, &PassageIndex::new(&b), fp.params(), &t);
            let identical = a.fingerprints.content_hash == b.fingerprints.content_hash;
            // The comparison counts copied characters on both sides and keeps the
            // smaller count: the pre-check (section side) never undercounts it.
            if identical || c.copied_chars >= t.min_copied_chars {
                assert!(pass, "enough copied characters filtered out: {c:?}");
            }
            if c.verdict.duplicate {
                assert!(pass, "a copy was filtered out: {c:?}");
                copies += 1;
            }
            rejected += usize::from(!pass);
        }
        assert!(copies >= 2, "only {copies} copies found");
        assert!(rejected >= 2, "{rejected} pairs rejected");
    }
    use zhiwen_index::FamilyHits;

    fn cand(doc: u64, family_hits: &[(IndexFamily, u32)]) -> Candidate {
        let mut hits = FamilyHits::default();
        for &(f, n) in family_hits {
            for _ in 0..n {
                hits.bump(f);
            }
        }
        Candidate { doc, total: hits.total(), hits }
    }

    fn found(candidates: Vec<Candidate>, sample_modulus: u64) -> LookupResult {
        LookupResult { candidates, sample_modulus, ..Default::default() }
    }

    #[test]
    fn chance_hits_of_the_coarse_families_are_not_verified() {
        // The mechanism, at the minimum these cases were written for.
        let config = MatcherConfig { min_winnow_hits: 2, ..MatcherConfig::default() };
        let r = found(
            vec![
                // Simhash blocks and DNA codes only: a chance collision.
                cand(1, &[(IndexFamily::SimhashBlock, 2), (IndexFamily::Dna, 3)]),
                // One winnowed key besides: still chance.
                cand(2, &[(IndexFamily::Dna, 4), (IndexFamily::WinnowInitials, 1)]),
                // A shared passage.
                cand(3, &[(IndexFamily::WinnowChars, 5), (IndexFamily::WinnowInitials, 4)]),
                cand(4, &[(IndexFamily::WinnowChars, 2), (IndexFamily::Dna, 1)]),
            ],
            1,
        );
        let ids: Vec<u64> = worth_verifying(&r, &config).iter().map(|c| c.doc).collect();
        assert_eq!(ids, vec![3, 4]);
    }

    #[test]
    fn most_winnowed_hits_come_first_and_sampling_lowers_the_minimum() {
        // The mechanism, at the minimum these cases were written for.
        let config = MatcherConfig { min_winnow_hits: 2, ..MatcherConfig::default() };
        let r = found(
            vec![
                cand(7, &[(IndexFamily::WinnowChars, 1), (IndexFamily::Dna, 9)]),
                cand(8, &[(IndexFamily::WinnowChars, 6), (IndexFamily::WinnowInitials, 1)]),
            ],
            2,
        );
        let ids: Vec<u64> = worth_verifying(&r, &config).iter().map(|c| c.doc).collect();
        assert_eq!(ids, vec![8, 7]);
        let ids: Vec<u64> = worth_verifying(&found(r.candidates.clone(), 1), &config).iter().map(|c| c.doc).collect();
        assert_eq!(ids, vec![8]);
    }

    #[test]
    fn sampled_keys_lower_both_minimums() {
        // 1 in 4 winnowed keys kept: a copied passage shares about a quarter of its keys.
        let config = MatcherConfig { min_candidate_hits: 3, min_winnow_hits: 5, ..MatcherConfig::default() };
        let r = found(
            vec![
                cand(1, &[(IndexFamily::WinnowChars, 1), (IndexFamily::WinnowInitials, 1)]),
                cand(2, &[(IndexFamily::WinnowChars, 1)]),
                cand(3, &[(IndexFamily::Dna, 2)]),
            ],
            4,
        );
        let ids: Vec<u64> = worth_verifying(&r, &config).iter().map(|c| c.doc).collect();
        assert_eq!(ids, vec![1]);
        assert!(worth_verifying(&found(r.candidates.clone(), 1), &config).is_empty());
    }
}
