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
}

/// Accumulates hits while postings are read.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    hits: HashMap<DocId, FamilyHits>,
    big: Vec<IndexKey>,
}

impl Accumulator {
    pub(crate) fn hit(&mut self, doc: DocId, family: IndexFamily) {
        self.hits.entry(doc).or_default().bump(family);
    }

    pub(crate) fn big(&mut self, key: IndexKey) {
        self.big.push(key);
    }

    pub(crate) fn finish(mut self, keys_queried: usize, limit: usize) -> LookupResult {
        let candidates_total = self.hits.len();
        let mut candidates: Vec<Candidate> =
            self.hits.into_iter().map(|(doc, hits)| Candidate { doc, total: hits.total(), hits }).collect();
        let order = |a: &Candidate, b: &Candidate| b.total.cmp(&a.total).then(a.doc.cmp(&b.doc));
        if candidates.len() > limit {
            if limit > 0 {
                candidates.select_nth_unstable_by(limit - 1, order);
            }
            candidates.truncate(limit);
        }
        candidates.sort_unstable_by(order);
        self.big.sort_unstable();
        self.big.dedup();
        LookupResult { candidates, big_buckets: self.big, keys_queried, candidates_total }
    }
}
