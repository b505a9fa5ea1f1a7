//! Every tunable parameter of the pipeline, in one serialisable struct.
//!
//! Defaults are the values chosen on the evaluation set (see `docs/evaluation.md`).
//! [`Params::tag`] condenses the parameters into a short stable string that is stored
//! with every fingerprint, so a change of parameters is detected, never silently mixed.

use serde::{Deserialize, Serialize};

use crate::hash::hash_bytes;
use crate::CoreError;

/// All parameters of the fingerprint pipeline.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Params {
    /// Canonicalisation.
    pub canon: CanonParams,
    /// Segmentation and word filtering.
    pub segment: SegmentParams,
    /// Pinyin-initial DNA fingerprint.
    pub dna: DnaParams,
    /// Simhash.
    pub simhash: SimhashParams,
    /// Word shingles and their samples.
    pub shingle: ShingleParams,
    /// MinHash, super-/mega-shingles, LSH.
    pub minhash: MinhashParams,
    /// Winnowing (local fingerprints for passage evidence).
    pub winnow: WinnowParams,
}

/// Canonicalisation parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CanonParams {
    /// Convert traditional Chinese to simplified (OpenCC phrase tables).
    pub traditional_to_simplified: bool,
    /// For HTML input, keep only the main content (drop navigation, footers, link lists).
    pub extract_main_content: bool,
    /// Inputs above this many bytes are refused.
    pub max_input_bytes: usize,
}

impl Default for CanonParams {
    fn default() -> Self {
        CanonParams { traditional_to_simplified: true, extract_main_content: true, max_input_bytes: 64 << 20 }
    }
}

impl CanonParams {
    /// A short stable tag of what shapes a canonical text: the parameters that change it
    /// and the algorithm version, e.g. `c2-3f9a0c12d4e5b6a7`. Ingest stores it with the
    /// canonical text of every page; a page whose tag is the current one is analysed from
    /// that text, not from its body canonicalised again. The size limit is left out: it
    /// refuses input, it never changes a text.
    pub fn tag(&self) -> String {
        let shape = format!("{:?}|{:?}", self.traditional_to_simplified, self.extract_main_content);
        format!("c{}-{:016x}", crate::ALGORITHM_VERSION, hash_bytes(shape.as_bytes()))
    }
}

/// Segmentation parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SegmentParams {
    /// Drop stop words (particles, prepositions, conjunctions ...).
    pub drop_stop_words: bool,
    /// Use jieba's HMM for words missing from the dictionary. Off by default: slower,
    /// and unknown words split into characters still make stable shingles.
    pub hmm: bool,
    /// Also drop adjectives (jieba part-of-speech tags `a`, `ad`, `an`, `ag`) before the
    /// word-level fingerprints, as the seeds do. Off by default: measured in
    /// docs/evaluation.md (no detection gain on the labelled set; tagging costs a little
    /// segmentation speed).
    pub drop_adjectives: bool,
}

impl Default for SegmentParams {
    fn default() -> Self {
        SegmentParams { drop_stop_words: true, hmm: false, drop_adjectives: false }
    }
}

/// How the pinyin-initial stream is cut into DNA segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DnaSegmentation {
    /// Fixed offsets: segments of `granularity` letters every `granularity * (1 - overlap)` letters.
    Fixed,
    /// Content-defined boundaries: a rolling hash of the letter stream picks cut points, so
    /// an insertion or deletion shifts only the segments around it.
    ContentDefined,
}

/// Pinyin-initial DNA fingerprint parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DnaParams {
    /// Segment size in letters (the article's granularity `n`); for content-defined
    /// segmentation, the average segment size (default 128, see `docs/dna.md`).
    pub granularity: usize,
    /// Overlap rate between consecutive segments, in [0, 0.9]. Content-defined segments
    /// span `round(1 / (1 - overlap))` consecutive chunks of `granularity / k` letters
    /// on average, so 0.5 means two chunks per segment, each shared with a neighbour.
    pub overlap: f64,
    /// Digits per letter: 10, 8, 4 or 2.
    pub radix: u8,
    /// Fixed offsets or content-defined boundaries.
    pub segmentation: DnaSegmentation,
}

impl Default for DnaParams {
    fn default() -> Self {
        // Measured in docs/dna.md (examples/dna_segmentation.rs): content-defined segments
        // keep recall 1.0 under ads, prefixes, excerpts and reordering where fixed offsets
        // fall to 0-0.3; radix 4 has the fewest chance matches per recall (radix 2 lets
        // unrelated news reach 0.25-1.0); 128 letters gives the lowest chance-match
        // ceiling (0.014) and the best recall under 5-10% random edits.
        DnaParams { granularity: 128, overlap: 0.5, radix: 4, segmentation: DnaSegmentation::ContentDefined }
    }
}

/// Simhash parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimhashParams {
    /// Hamming distance up to which two signatures are near-duplicates (k).
    pub max_distance: u32,
}

impl Default for SimhashParams {
    fn default() -> Self {
        SimhashParams { max_distance: 3 }
    }
}

/// Shingle parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ShingleParams {
    /// Words per shingle (w).
    pub width: usize,
    /// Modulus of the "divisible by m" sample.
    pub sample_modulus: u64,
    /// Size of the "n smallest" sample.
    pub sample_smallest: usize,
}

impl Default for ShingleParams {
    fn default() -> Self {
        ShingleParams { width: 4, sample_modulus: 25, sample_smallest: 160 }
    }
}

/// MinHash parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MinhashParams {
    /// Number of hash functions (84 in the seeds).
    pub functions: usize,
    /// Number of super-shingles (6); `functions` must be divisible by it.
    pub super_shingles: usize,
    /// LSH bands (b).
    pub bands: usize,
    /// Rows per LSH band (r); `bands * rows` must not exceed `functions`.
    pub rows: usize,
}

impl Default for MinhashParams {
    fn default() -> Self {
        MinhashParams { functions: 84, super_shingles: 6, bands: 21, rows: 4 }
    }
}

/// Winnowing parameters (Schleimer, Wilkerson, Aiken 2003).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WinnowParams {
    /// k-gram length over the pinyin-initial stream.
    pub initials_k: usize,
    /// Window size over the pinyin-initial stream.
    pub initials_window: usize,
    /// k-gram length over normalised characters.
    pub chars_k: usize,
    /// Window size over normalised characters.
    pub chars_window: usize,
    /// Two matching fingerprints at most this many units apart (on both sides) belong to
    /// the same passage.
    pub max_gap: usize,
    /// Passages shorter than this many characters in either text are not reported.
    pub min_passage_chars: usize,
}

impl Default for WinnowParams {
    fn default() -> Self {
        WinnowParams {
            initials_k: 12,
            initials_window: 8,
            chars_k: 8,
            chars_window: 8,
            max_gap: 40,
            min_passage_chars: 24,
        }
    }
}

impl Params {
    /// Check every parameter's range; the pipeline relies on these invariants.
    pub fn validate(&self) -> Result<(), CoreError> {
        let invalid = |name: &'static str, reason: String| Err(CoreError::InvalidParams { name, reason });
        let d = &self.dna;
        if !(8..=4096).contains(&d.granularity) {
            return invalid("dna.granularity", format!("{} is outside 8..=4096", d.granularity));
        }
        if !(0.0..=0.9).contains(&d.overlap) {
            return invalid("dna.overlap", format!("{} is outside 0.0..=0.9", d.overlap));
        }
        if ![2, 4, 8, 10].contains(&d.radix) {
            return invalid("dna.radix", format!("{} is not one of 2, 4, 8, 10", d.radix));
        }
        if self.simhash.max_distance > 16 {
            return invalid("simhash.max_distance", format!("{} is above 16", self.simhash.max_distance));
        }
        let s = &self.shingle;
        if !(1..=32).contains(&s.width) {
            return invalid("shingle.width", format!("{} is outside 1..=32", s.width));
        }
        if s.sample_modulus == 0 {
            return invalid("shingle.sample_modulus", "must be at least 1".into());
        }
        if s.sample_smallest == 0 {
            return invalid("shingle.sample_smallest", "must be at least 1".into());
        }
        let m = &self.minhash;
        if !(1..=1024).contains(&m.functions) {
            return invalid("minhash.functions", format!("{} is outside 1..=1024", m.functions));
        }
        if m.super_shingles == 0 || !m.functions.is_multiple_of(m.super_shingles) {
            return invalid(
                "minhash.super_shingles",
                format!("{} does not divide minhash.functions = {}", m.super_shingles, m.functions),
            );
        }
        if m.bands == 0 || m.rows == 0 || m.bands * m.rows > m.functions {
            return invalid(
                "minhash.bands",
                format!("bands {} x rows {} must be positive and at most functions {}", m.bands, m.rows, m.functions),
            );
        }
        let w = &self.winnow;
        for (name, v) in [
            ("winnow.initials_k", w.initials_k),
            ("winnow.initials_window", w.initials_window),
            ("winnow.chars_k", w.chars_k),
            ("winnow.chars_window", w.chars_window),
        ] {
            if !(1..=256).contains(&v) {
                return invalid(name, format!("{v} is outside 1..=256"));
            }
        }
        Ok(())
    }

    /// A short stable tag of the parameters that shape stored fingerprints (and of the
    /// algorithm version), e.g. `v2-3f9a0c12d4e5b6a7`. Equal tags mean comparable fingerprints.
    pub fn tag(&self) -> String {
        // serde_json is not a dependency of the core; the Debug form of plain data is
        // deterministic for a given build, and ALGORITHM_VERSION guards format changes.
        let shape = format!(
            "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
            self.canon.traditional_to_simplified,
            self.segment,
            self.dna,
            self.simhash,
            self.shingle,
            self.minhash,
            (self.winnow.initials_k, self.winnow.initials_window, self.winnow.chars_k, self.winnow.chars_window),
        );
        format!("v{}-{:016x}", crate::ALGORITHM_VERSION, hash_bytes(shape.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid_and_tag_tracks_changes() {
        let p = Params::default();
        p.validate().expect("defaults valid");
        let mut q = p.clone();
        assert_eq!(p.tag(), q.tag());
        q.shingle.width = 5;
        assert_ne!(p.tag(), q.tag());
        // Evidence-only knobs do not change stored fingerprints.
        let mut r = p.clone();
        r.winnow.min_passage_chars = 99;
        assert_eq!(p.tag(), r.tag());
    }

    #[test]
    fn canon_tag_tracks_what_changes_a_canonical_text() {
        let c = CanonParams::default();
        assert_eq!(c.tag(), CanonParams::default().tag());
        assert!(c.tag().starts_with(&format!("c{}-", crate::ALGORITHM_VERSION)), "{}", c.tag());
        let t2s = CanonParams { traditional_to_simplified: false, ..CanonParams::default() };
        let main = CanonParams { extract_main_content: false, ..CanonParams::default() };
        let limit = CanonParams { max_input_bytes: 1 << 10, ..CanonParams::default() };
        assert_ne!(c.tag(), t2s.tag());
        assert_ne!(c.tag(), main.tag());
        assert_ne!(t2s.tag(), main.tag());
        assert_eq!(c.tag(), limit.tag(), "a size limit changes no text");
    }

    #[test]
    fn out_of_range_parameters_are_refused_with_their_name() {
        let mut p = Params::default();
        p.dna.radix = 7;
        match p.validate() {
            Err(CoreError::InvalidParams { name, .. }) => assert_eq!(name, "dna.radix"),
            other => panic!("expected invalid radix, got {other:?}"),
        }
        let mut p = Params::default();
        p.minhash.super_shingles = 5;
        assert!(p.validate().is_err());
    }
}
