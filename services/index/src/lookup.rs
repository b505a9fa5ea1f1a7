//! Lookup results and the hit accumulation every implementation shares.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use zhiwen_core::{IndexFamily, IndexKey};

use crate::DocId;

/// Hits per fingerprint family, indexed by [`IndexFamily::ALL`] order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FamilyHits(pub [u32; 6]);

impl FamilyHits {
    /// Hits of `family`.
    pub fn get(&self, family: IndexFamily) -> u32 {
        self.0[slot(family)]
    }

    /// Count one more hit of `family`.
    pub fn bump(&mut self, family: IndexFamily) {
        self.0[slot(family)] += 1;
    }

    /// All hits.
    pub fn total(&self) -> u32 {
        self.0.iter().sum()
    }

    /// `(family, hits)` for the families with at least one hit.
    pub fn iter(&self) -> impl Iterator<Item = (IndexFamily, u32)> + '_ {
        IndexFamily::ALL.into_iter().map(|f| (f, self.get(f))).filter(|&(_, n)| n > 0)
    }
}

fn slot(family: IndexFamily) -> usize {
    // Codes are 1..=6 (core guarantees stable one-byte codes).
    usize::from(family.code().saturating_sub(1)).min(5)
}

/// One candidate document.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Candidate {
    /// The document.
    pub doc: DocId,
    /// Shared keys per family.
    pub hits: FamilyHits,
    /// Shared keys in all families.
    pub total: u32,
}

/// What a lookup found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LookupResult {
    /// Candidates, most shared keys first, then lowest id; at most the limit.
    pub candidates: Vec<Candidate>,
    /// Query keys whose posting list is a big bucket (not expanded), sorted.
    pub big_buckets: Vec<IndexKey>,
    /// Distinct query keys looked up.
    pub keys_queried: usize,
    /// Candidates found before the limit was applied.
    pub candidates_total: usize,
    /// Query keys that had a posting list (or a big bucket). Most keys of an unrelated
    /// page have none: this is what the Redis section filter saves reading.
    #[serde(default)]
    pub keys_found: usize,
    /// 1 when every query key was looked up; `m` when the winnowed keys were sampled
    /// to those whose value is divisible by `m` (see [`sample_query_keys`]), so winnow
    /// hit counts are about `1/m` of the shared winnowed keys.
    #[serde(default = "one")]
    pub sample_modulus: u64,
}

fn one() -> u64 {
    1
}

/// Consistent sampling of a large query's winnowed keys, to bound the work of one lookup.
///
/// Returns `keys` unchanged (modulus 1) when they are at most `budget` (or `budget` is
/// 0). Otherwise every non-winnow key is kept (simhash blocks, DNA codes, mega-shingles,
/// LSH bands: few, and each decisive) and the winnowed keys (WinnowInitials,
/// WinnowChars: ~95% of a real page's keys) are kept when their value is divisible by
/// the smallest power of two `m` that brings the expected count within the budget.
/// Winnowed values are uniform hashes, and the choice depends on the value alone, so
/// the same passage keeps the same keys in every query and in the index: a copied
/// passage still shares about `1/m` of its winnowed keys (a 10 KB page has ~1,300 keys;
/// the default budget of 768 gives m = 2, so a 24-character passage still shares ~6).
pub fn sample_query_keys(keys: Vec<IndexKey>, budget: usize) -> (Vec<IndexKey>, u64) {
    if budget == 0 || keys.len() <= budget {
        return (keys, 1);
    }
    let winnowed = keys.iter().filter(|k| k.family.is_winnowed()).count();
    let m = query_sample_modulus(keys.len() - winnowed, winnowed, budget);
    if m == 1 {
        return (keys, 1);
    }
    (sample_winnowed_keys(keys, m), m)
}

/// The modulus [`sample_query_keys`] samples a query of `fixed` non-winnow keys and
/// `winnowed` winnowed keys with: the smallest power of two (at most 64) that brings the
/// expected count within `budget` (0: no budget, 1). A caller that knows the counts before
/// it has the keys (a matcher that looks a page's winnowed keys up before its word stage)
/// samples exactly as the whole query would be sampled.
pub fn query_sample_modulus(fixed: usize, winnowed: usize, budget: usize) -> u64 {
    if budget == 0 || fixed + winnowed <= budget {
        return 1;
    }
    let mut m = 1u64;
    while m < 64 && fixed + winnowed / m as usize > budget {
        m *= 2;
    }
    m
}

/// Whether sampling 1 in `modulus` (rounded up to a power of two; 0 and 1 keep every
/// value) keeps a winnowed key of this value: the value is divisible by it. The one rule
/// of every sampled namespace, query and reader of their keys.
pub fn kept_by_sampling(value: u64, modulus: u64) -> bool {
    value & (modulus.max(1).next_power_of_two() - 1) == 0
}

/// The keys a document keeps when its winnowed keys are sampled 1 in `modulus` (a power
/// of two; 1 keeps everything): every non-winnow key, and the winnowed keys whose value
/// is divisible by `modulus`. The rule of [`sample_query_keys`], for a namespace whose
/// documents are indexed sampled (queries against it are sampled the same way, so a
/// shared passage shares about `1/modulus` of its winnowed keys).
pub fn sample_winnowed_keys(keys: Vec<IndexKey>, modulus: u64) -> Vec<IndexKey> {
    if modulus <= 1 {
        return keys;
    }
    keys.into_iter().filter(|k| !k.family.is_winnowed() || kept_by_sampling(k.value, modulus)).collect()
}

/// Only the winnowed keys of `keys` whose value is divisible by `modulus` (a power of two;
/// 1 keeps every winnowed key): the keys of a namespace read only to find shared
/// passages. A candidate must share winnowed keys to be worth verifying, so coarse keys
/// (simhash blocks, DNA, super-shingles, LSH bands) would add only chance hits, and the
/// most writes: DNA and simhash values recur across unrelated documents, and every
/// recurrence appends to a posting list.
pub fn sample_winnowed_keys_only(keys: impl IntoIterator<Item = IndexKey>, modulus: u64) -> Vec<IndexKey> {
    keys.into_iter().filter(|k| k.family.is_winnowed() && kept_by_sampling(k.value, modulus)).collect()
}

/// Accumulates hits while postings are read.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    hits: HashMap<DocId, FamilyHits>,
    big: Vec<IndexKey>,
    keys_found: usize,
}

impl Accumulator {
    /// An accumulator sized for about `keys` query keys.
    pub(crate) fn with_capacity(keys: usize) -> Self {
        Accumulator { hits: HashMap::with_capacity(keys.min(4_096)), big: Vec::new(), keys_found: 0 }
    }

    /// The posting list of one query key of `family`.
    pub(crate) fn posting(&mut self, family: IndexFamily, docs: impl IntoIterator<Item = DocId>) {
        self.keys_found += 1;
        for doc in docs {
            self.hits.entry(doc).or_default().bump(family);
        }
    }

    pub(crate) fn big(&mut self, key: IndexKey) {
        self.keys_found += 1;
        self.big.push(key);
    }

    pub(crate) fn finish_sampled(mut self, keys_queried: usize, limit: usize, sample_modulus: u64) -> LookupResult {
        let candidates_total = self.hits.len();
        let candidates = best(self.hits, limit);
        self.big.sort_unstable();
        self.big.dedup();
        LookupResult {
            candidates,
            big_buckets: self.big,
            keys_queried,
            candidates_total,
            keys_found: self.keys_found,
            sample_modulus,
        }
    }
}

/// The candidates of `hits`, most shared keys first, then lowest id; at most `limit`.
fn best(hits: HashMap<DocId, FamilyHits>, limit: usize) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> =
        hits.into_iter().map(|(doc, hits)| Candidate { doc, total: hits.total(), hits }).collect();
    let order = |a: &Candidate, b: &Candidate| b.total.cmp(&a.total).then(a.doc.cmp(&b.doc));
    if candidates.len() > limit {
        if limit > 0 {
            candidates.select_nth_unstable_by(limit - 1, order);
        }
        candidates.truncate(limit);
    }
    candidates.sort_unstable_by(order);
    candidates
}

impl LookupResult {
    /// One lookup of the keys of `self` and `other` together, as [`CandidateIndex::lookup`]
    /// of all of them at once gives it (at most `limit` candidates), from two unlimited
    /// lookups of disjoint key sets sampled alike
    /// ([`CandidateIndex::lookup_sampled`]).
    ///
    /// [`CandidateIndex::lookup`]: crate::CandidateIndex::lookup
    /// [`CandidateIndex::lookup_sampled`]: crate::CandidateIndex::lookup_sampled
    pub fn merged(self, other: LookupResult, limit: usize) -> LookupResult {
        let mut hits: HashMap<DocId, FamilyHits> = HashMap::with_capacity(self.candidates.len());
        for c in self.candidates.into_iter().chain(other.candidates) {
            let slot = hits.entry(c.doc).or_default();
            for (a, b) in slot.0.iter_mut().zip(c.hits.0) {
                *a += b;
            }
        }
        let candidates_total = hits.len();
        let mut big_buckets = self.big_buckets;
        big_buckets.extend(other.big_buckets);
        big_buckets.sort_unstable();
        big_buckets.dedup();
        LookupResult {
            candidates: best(hits, limit),
            big_buckets,
            keys_queried: self.keys_queried + other.keys_queried,
            candidates_total,
            keys_found: self.keys_found + other.keys_found,
            sample_modulus: self.sample_modulus.max(other.sample_modulus),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(family: IndexFamily, value: u64) -> IndexKey {
        IndexKey { family, value }
    }

    #[test]
    fn sampling_keeps_the_values_divisible_by_its_power_of_two() {
        let kept = |m| (0..64u64).filter(|&v| kept_by_sampling(v, m)).collect::<Vec<_>>();
        assert_eq!(kept(0), (0..64).collect::<Vec<_>>());
        assert_eq!(kept(1), (0..64).collect::<Vec<_>>());
        assert_eq!(kept(8), vec![0, 8, 16, 24, 32, 40, 48, 56]);
        assert_eq!(kept(6), kept(8));
    }

    #[test]
    fn small_queries_are_not_sampled() {
        let keys: Vec<IndexKey> = (0..100).map(|v| key(IndexFamily::WinnowChars, v)).collect();
        assert_eq!(sample_query_keys(keys.clone(), 768), (keys.clone(), 1));
        assert_eq!(sample_query_keys(keys.clone(), 0), (keys, 1));
    }

    #[test]
    fn large_queries_keep_every_non_winnow_key_and_a_consistent_share_of_winnowed_ones() {
        let mut keys: Vec<IndexKey> = (0..40).map(|v| key(IndexFamily::LshBand, v * 7 + 1)).collect();
        keys.extend((0..1_300u64).map(|v| key(IndexFamily::WinnowChars, v.wrapping_mul(0x9E37_79B9_7F4A_7C15))));
        let (kept, m) = sample_query_keys(keys.clone(), 768);
        assert_eq!(m, 2);
        assert!(kept.len() <= 768 + 40, "{}", kept.len());
        assert_eq!(kept.iter().filter(|k| k.family == IndexFamily::LshBand).count(), 40);
        // The same key is kept in every query that contains it.
        let (other, _) = sample_query_keys(keys[20..].to_vec(), 768);
        for k in other.iter().filter(|k| k.family == IndexFamily::WinnowChars) {
            assert!(kept.contains(k));
        }
    }

    #[test]
    fn a_sampled_document_keeps_its_coarse_keys_and_the_winnowed_keys_a_query_keeps() {
        let mut keys: Vec<IndexKey> = (0..10).map(|v| key(IndexFamily::Dna, v)).collect();
        // A 10 KB page: ~1,300 winnowed keys.
        keys.extend((0..1_300u64).map(|v| key(IndexFamily::WinnowInitials, v.wrapping_mul(0x9E37_79B9_7F4A_7C15))));
        assert_eq!(sample_winnowed_keys(keys.clone(), 1), keys);
        let kept = sample_winnowed_keys(keys.clone(), 4);
        assert_eq!(kept.iter().filter(|k| k.family == IndexFamily::Dna).count(), 10);
        let winnowed = kept.len() - 10;
        assert!((250..=400).contains(&winnowed), "{winnowed} of 1,300 winnowed keys kept with 1 in 4");
        // A query sampled with a smaller modulus keeps a superset of them.
        let (query, m) = sample_query_keys(keys.clone(), 768);
        assert_eq!(m, 2);
        assert!(kept.iter().all(|k| query.contains(k)));
        // Winnowed keys only: the same winnowed keys, no coarse ones.
        let only = sample_winnowed_keys_only(keys, 4);
        assert_eq!(only.len(), winnowed);
        assert!(only.iter().all(|k| kept.contains(k) && k.family == IndexFamily::WinnowInitials));
    }
}
