//! Comparing two DNA fingerprints: the share of one's segments found in the other.

use serde::{Deserialize, Serialize};

use super::code::for_each_near_code;
use super::DnaSegment;

/// How a segment code is looked up in the other fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DnaMatch {
    /// The codes must be equal: the article's rule, and the default because it is one
    /// index lookup per segment.
    #[default]
    Exact,
    /// Equal, or differing in one digit by ±1: tolerates an edit that tips one
    /// letter's count over a cut point. Needs the radix the codes were made with.
    /// Costs up to 40 lookups more per segment (240 for radix 10). Measured in
    /// `docs/dna.md`: at radix 4-10 it raises recall under 5-10% random edits (0.31 to
    /// 0.71 at the defaults) without raising the highest negative score; at radix 2 it
    /// lets unrelated texts score up to 0.4-0.9, so never use it there.
    Near {
        /// Radix of both fingerprints' codes.
        radix: u8,
    },
}

/// The codes of one fingerprint, sorted, for repeated containment queries against it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DnaCodeSet {
    codes: Vec<u64>,
}

impl DnaCodeSet {
    /// The set of `segments`' codes.
    pub fn new(segments: &[DnaSegment]) -> DnaCodeSet {
        let mut codes: Vec<u64> = segments.iter().map(|s| s.code).collect();
        codes.sort_unstable();
        codes.dedup();
        DnaCodeSet { codes }
    }

    /// Number of distinct codes.
    pub fn len(&self) -> usize {
        self.codes.len()
    }

    /// True when the fingerprint had no segments.
    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// Whether `code` is in the set.
    pub fn contains(&self, code: u64) -> bool {
        self.codes.binary_search(&code).is_ok()
    }

    /// Whether `code` matches a code of the set under `mode`.
    pub fn matches(&self, code: u64, mode: DnaMatch) -> bool {
        if self.contains(code) {
            return true;
        }
        match mode {
            DnaMatch::Exact => false,
            DnaMatch::Near { radix } => {
                let mut found = false;
                for_each_near_code(code, radix, |c| found = found || self.contains(c));
                found
            }
        }
    }

    /// Share of `a`'s segments that match this set under `mode` (0 when `a` is empty).
    pub fn containment_of(&self, a: &[DnaSegment], mode: DnaMatch) -> f64 {
        if a.is_empty() {
            return 0.0;
        }
        let hits = a.iter().filter(|s| self.matches(s.code, mode)).count();
        hits as f64 / a.len() as f64
    }
}

/// Share of `a`'s segments whose code also occurs among `b`'s (0 when `a` has none):
/// how much of `a` is inside `b`. Not symmetric.
pub fn dna_containment(a: &[DnaSegment], b: &[DnaSegment]) -> f64 {
    DnaCodeSet::new(b).containment_of(a, DnaMatch::Exact)
}

/// [`dna_containment`] with a choice of exact or near matching of codes.
pub fn dna_containment_with(a: &[DnaSegment], b: &[DnaSegment], mode: DnaMatch) -> f64 {
    DnaCodeSet::new(b).containment_of(a, mode)
}
