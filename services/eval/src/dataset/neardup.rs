//! Near-duplicate detection between candidate texts and registered sections.

use std::collections::HashMap;

use zhiwen_core::canon::InputFormat;
use zhiwen_core::{Fingerprinter, Params};

use crate::EvalError;

/// Word-shingle overlap between a candidate text and every registered section, with the
/// core's own shingles (4 content words, stop words dropped). A candidate is a near
/// duplicate of a section when they share at least [`NearDupIndex::MIN_SHARED`]
/// shingles and at least [`NearDupIndex::MIN_SHARE`] of the smaller set: a tenth of a
/// story repeated in another is a re-aired or templated copy, not chance.
pub struct NearDupIndex {
    fingerprinter: Fingerprinter,
    postings: HashMap<u64, Vec<u32>>,
    sizes: Vec<usize>,
}

impl NearDupIndex {
    /// Shared shingles at least this many...
    pub const MIN_SHARED: usize = 3;
    /// ...and at least this share of the smaller shingle set.
    pub const MIN_SHARE: f64 = 0.1;

    /// An empty index.
    pub fn new() -> Result<Self, EvalError> {
        let fingerprinter = Fingerprinter::new(Params::default())
            .map_err(|source| EvalError::Core { what: "default parameters".into(), source })?;
        Ok(NearDupIndex { fingerprinter, postings: HashMap::new(), sizes: Vec::new() })
    }

    /// The core's shingle set of a text (empty when the core finds no text).
    pub fn shingles(&self, text: &str) -> Vec<u64> {
        self.fingerprinter.analyze_text(text, InputFormat::Text).map(|a| a.fingerprints.shingles).unwrap_or_default()
    }

    /// Add a registered text.
    pub fn add(&mut self, shingles: &[u64]) {
        let id = self.sizes.len() as u32;
        for &h in shingles {
            self.postings.entry(h).or_default().push(id);
        }
        self.sizes.push(shingles.len());
    }

    /// Is this shingle set a near duplicate of any added text?
    pub fn is_near_duplicate(&self, shingles: &[u64]) -> bool {
        let mut shared: HashMap<u32, usize> = HashMap::new();
        for h in shingles {
            for &id in self.postings.get(h).into_iter().flatten() {
                *shared.entry(id).or_default() += 1;
            }
        }
        shared.into_iter().any(|(id, n)| {
            let smaller = shingles.len().min(self.sizes[id as usize]).max(1);
            n >= Self::MIN_SHARED && n as f64 >= Self::MIN_SHARE * smaller as f64
        })
    }

    /// Check a text and add it when it is new; true when it was added.
    pub fn add_if_new(&mut self, text: &str) -> bool {
        let s = self.shingles(text);
        if s.is_empty() || self.is_near_duplicate(&s) {
            return false;
        }
        self.add(&s);
        true
    }
}
