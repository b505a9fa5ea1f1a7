//! Word shingles, their samples, and the set measures of the seeds.
//!
//! A shingle is `w` consecutive content words, hashed to 64 bits. A document's shingle
//! set is kept sorted and deduplicated, so every measure is a linear merge. Samples
//! (seed 003): hashes divisible by `m` (grows with the document, serves resemblance and
//! containment), or the `n` smallest (fixed size, resemblance only).

use serde::{Deserialize, Serialize};

use crate::hash::hash_u64s;
use crate::segment::Token;

/// Seed of the shingle hash, distinct from every other family's.
const SHINGLE_SEED: u64 = 0x5a48_4957_454e_5348;

/// The sorted, deduplicated shingle set of a token stream. A stream shorter than `w`
/// (but not empty) gives one shingle of all its words, so short texts still compare.
pub fn shingles(tokens: &[Token], w: usize) -> Vec<u64> {
    let hashes: Vec<u64> = tokens.iter().map(|t| t.hash).collect();
    let mut set: Vec<u64> = if hashes.is_empty() {
        Vec::new()
    } else if hashes.len() < w {
        vec![hash_u64s(&hashes, SHINGLE_SEED)]
    } else {
        hashes.windows(w).map(|win| hash_u64s(win, SHINGLE_SEED)).collect()
    };
    set.sort_unstable();
    set.dedup();
    set
}

/// Shingle positions: for each shingle in text order, its hash and the range of tokens
/// it spans (for evidence and boilerplate analysis).
pub fn shingles_in_order(tokens: &[Token], w: usize) -> Vec<(u64, usize)> {
    let hashes: Vec<u64> = tokens.iter().map(|t| t.hash).collect();
    if hashes.len() < w {
        return Vec::new();
    }
    hashes.windows(w).enumerate().map(|(i, win)| (hash_u64s(win, SHINGLE_SEED), i)).collect()
}

/// The hashes of a sorted set divisible by `m`.
pub fn sample_mod(set: &[u64], m: u64) -> Vec<u64> {
    set.iter().copied().filter(|h| h % m.max(1) == 0).collect()
}

/// The `n` smallest hashes of a sorted set.
pub fn sample_smallest(set: &[u64], n: usize) -> Vec<u64> {
    set[..n.min(set.len())].to_vec()
}

/// Size of the intersection of two sorted sequences: of two sets, or of two multisets (an
/// item repeated counts as often as both hold it).
///
/// The merge steps without a branch on the comparison (each side advances by whether its
/// item is the smaller or equal one): on keys that are hashes the branch is a coin toss the
/// processor mispredicts half the time, and this merge of a page's compact keys with each
/// of its candidates' was the largest item of matching new pages at 100k sections with the
/// sampled layout (7%, docs/benchmarks.md).
pub fn intersection_size<T: Ord + Copy>(a: &[T], b: &[T]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while let (Some(&x), Some(&y)) = (a.get(i), b.get(j)) {
        n += usize::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    n
}

/// Resemblance, containment both ways and Dice of two sets.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SetMeasures {
    /// |A ∩ B| / |A ∪ B| (Jaccard).
    pub resemblance: f64,
    /// |A ∩ B| / |A|: how much of A is inside B.
    pub containment_ab: f64,
    /// |A ∩ B| / |B|: how much of B is inside A.
    pub containment_ba: f64,
    /// 2 |A ∩ B| / (|A| + |B|) (seed 004).
    pub dice: f64,
}

impl SetMeasures {
    /// The measures of two sorted, deduplicated sets. Two empty sets are identical (1.0);
    /// one empty set shares nothing (0.0).
    pub fn of(a: &[u64], b: &[u64]) -> Self {
        if a.is_empty() && b.is_empty() {
            return SetMeasures { resemblance: 1.0, containment_ab: 1.0, containment_ba: 1.0, dice: 1.0 };
        }
        let common = intersection_size(a, b) as f64;
        let (na, nb) = (a.len() as f64, b.len() as f64);
        let ratio = |num: f64, den: f64| if den > 0.0 { num / den } else { 0.0 };
        SetMeasures {
            resemblance: ratio(common, na + nb - common),
            containment_ab: ratio(common, na),
            containment_ba: ratio(common, nb),
            dice: ratio(2.0 * common, na + nb),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sorted(mut v: Vec<u64>) -> Vec<u64> {
        v.sort_unstable();
        v.dedup();
        v
    }

    #[test]
    fn containment_sees_an_excerpt_that_resemblance_misses() {
        let big: Vec<u64> = (0..1000).collect();
        let excerpt: Vec<u64> = (100..300).collect();
        let m = SetMeasures::of(&excerpt, &big);
        assert_eq!(m.containment_ab, 1.0);
        assert!((m.containment_ba - 0.2).abs() < 1e-9);
        assert!((m.resemblance - 0.2).abs() < 1e-9);
    }

    #[test]
    fn samples_are_subsets_of_the_set() {
        let set: Vec<u64> = (0..1000u64).map(crate::hash::mix64).collect::<Vec<_>>();
        let set = sorted(set);
        let m = sample_mod(&set, 25);
        assert!(m.iter().all(|h| h % 25 == 0 && set.binary_search(h).is_ok()));
        let n = sample_smallest(&set, 160);
        assert_eq!(n.len(), 160);
        assert_eq!(n[..], set[..160]);
    }

    proptest! {
        #[test]
        fn intersection_size_counts_what_both_hold(mut a in proptest::collection::vec(0u32..60, 0..120), mut b in proptest::collection::vec(0u32..60, 0..120)) {
            // Sorted multisets (an item may repeat): an item counts as often as both hold it.
            a.sort_unstable();
            b.sort_unstable();
            let count = |v: &[u32], x: u32| v.iter().filter(|&&y| y == x).count();
            let mut items = a.clone();
            items.dedup();
            let want: usize = items.iter().map(|&x| count(&a, x).min(count(&b, x))).sum();
            prop_assert_eq!(intersection_size(&a, &b), want);
            prop_assert_eq!(intersection_size(&b, &a), want);
        }

        #[test]
        fn measures_are_bounded_and_symmetric(a in proptest::collection::vec(0u64..200, 0..100), b in proptest::collection::vec(0u64..200, 0..100)) {
            let (a, b) = (sorted(a), sorted(b));
            let ab = SetMeasures::of(&a, &b);
            let ba = SetMeasures::of(&b, &a);
            prop_assert_eq!(ab.resemblance, ba.resemblance);
            prop_assert_eq!(ab.dice, ba.dice);
            prop_assert_eq!(ab.containment_ab, ba.containment_ba);
            for v in [ab.resemblance, ab.containment_ab, ab.containment_ba, ab.dice] {
                prop_assert!((0.0..=1.0).contains(&v));
            }
            let same = SetMeasures::of(&a, &a);
            prop_assert_eq!(same.resemblance, 1.0);
        }
    }
}
