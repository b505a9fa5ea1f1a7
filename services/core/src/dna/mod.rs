//! The pinyin-initial frequency fingerprint ("DNA", Daguan, seed 002 section 3).
//!
//! Input is the pinyin-initial stream of a canonical text ([`crate::initials`]), which
//! already absorbs charset, traditional/simplified and homophone differences. The
//! stream is cut into segments (the article's fixed offsets, or content-defined
//! boundaries that survive insertions and deletions, see
//! [`DnaSegmentation`](crate::params::DnaSegmentation)); each
//! segment's letter counts are compared with the [`ReferenceFrame`] (expected count =
//! `p(letter) * segment length`), each of the 20 [`DIGIT_LETTERS`]' residuals is
//! standardised by the binomial standard deviation and cut at normal quantiles into a
//! digit in `0..radix`, and the 20 digits, in alphabetical order, are packed into one
//! 64-bit code ([`DnaDigits::pack`]). A document's fingerprint is its list of segments;
//! [`dna_containment`] scores how many of one document's segment codes occur in
//! another's.
//!
//! Cost: one pass over the letters (rolling hash and two-pointer letter counts), 20
//! digits per segment, no allocation besides the output vector. Measurements, the
//! choice of defaults and the exact command reproducing them are in `docs/dna.md`.

use serde::{Deserialize, Serialize};

use crate::initials::INITIAL_LETTERS;
use crate::params::DnaParams;

mod code;
mod frame;
mod score;
mod segment;

pub use code::{for_each_near_code, render_code, DnaDigits};
pub use frame::ReferenceFrame;
pub use score::{dna_containment, dna_containment_with, DnaCodeSet, DnaMatch};

/// The 20 consonant letters that carry a digit of the fingerprint. The zero-initial
/// vowels are counted in the segment but carry no digit: for a segment of known size
/// their count is implied by the others.
pub const DIGIT_LETTERS: [u8; 20] = *b"bcdfghjklmnpqrstwxyz";

/// One segment's fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DnaSegment {
    /// First letter of the segment in the initial stream (inclusive).
    pub start: u32,
    /// End of the segment in the initial stream (exclusive).
    pub end: u32,
    /// The packed digits (base `radix`, letters in alphabetical order; see
    /// [`DnaDigits::pack`] for radix 10).
    pub code: u64,
}

/// Slot used for bytes that are not initial letters: they occupy stream positions but
/// are not counted as letters (the initial stream never contains them).
const OTHER: u8 = 23;

/// Index of each byte in [`INITIAL_LETTERS`], or [`OTHER`].
const SLOT: [u8; 256] = {
    let mut table = [OTHER; 256];
    let mut i = 0;
    while i < INITIAL_LETTERS.len() {
        table[INITIAL_LETTERS[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Index of `letter` in [`INITIAL_LETTERS`], if it is one (a table lookup).
#[inline]
pub(crate) fn letter_slot(letter: u8) -> Option<usize> {
    let slot = SLOT[usize::from(letter)];
    (slot != OTHER).then_some(usize::from(slot))
}

/// Slot in [`INITIAL_LETTERS`] of each digit letter.
const DIGIT_SLOTS: [usize; 20] = {
    let mut slots = [0usize; 20];
    let mut i = 0;
    while i < 20 {
        slots[i] = SLOT[DIGIT_LETTERS[i] as usize] as usize;
        i += 1;
    }
    slots
};

/// Call `f` with each segment of `letters` and its digits, in stream order.
///
/// Parameters out of range are clamped rather than refused (granularity to
/// `2..=2^20`, overlap to `[0, 0.9]`, radix up to the next of 2, 4, 8, 10);
/// `Params::validate` refuses them before fingerprints are made.
pub fn for_each_dna_segment(
    letters: &[u8],
    params: &DnaParams,
    frame: &ReferenceFrame,
    mut f: impl FnMut(DnaSegment, &DnaDigits),
) {
    let radix = code::effective_radix(params.radix);
    let cuts = code::normal_cuts(radix);
    // Per digit letter: its probability and binomial standard deviation per sqrt(letter).
    let mut p = [0.0f64; 20];
    let mut sd = [0.0f64; 20];
    for (j, &slot) in DIGIT_SLOTS.iter().enumerate() {
        let q = frame.probabilities.get(slot).copied().unwrap_or(0.0);
        let q = if (0.0..=1.0).contains(&q) { q } else { 0.0 };
        p[j] = q;
        sd[j] = (q * (1.0 - q)).sqrt();
    }
    let mut counts = [0u32; 24];
    let (mut lo, mut hi) = (0usize, 0usize);
    segment::for_each_span(letters, params, |start, end| {
        // Spans only move forward: add the new letters, then drop the passed ones.
        while hi < end {
            if let Some(&l) = letters.get(hi) {
                counts[usize::from(SLOT[usize::from(l)])] += 1;
            }
            hi += 1;
        }
        while lo < start {
            if let Some(&l) = letters.get(lo) {
                let c = &mut counts[usize::from(SLOT[usize::from(l)])];
                *c = c.saturating_sub(1);
            }
            lo += 1;
        }
        let total: u32 = counts[..23].iter().sum();
        let len = f64::from(total);
        let root = len.sqrt();
        let mut digits = [0u8; 20];
        for (j, d) in digits.iter_mut().enumerate() {
            let deviation = f64::from(counts[DIGIT_SLOTS[j]]) - p[j] * len;
            let sigma = sd[j] * root;
            // At most 9 cut points: the count fits a digit.
            *d = cuts.iter().take_while(|&&z| deviation > z * sigma).count() as u8;
        }
        let digits = DnaDigits(digits);
        let segment = DnaSegment {
            start: u32::try_from(start).unwrap_or(u32::MAX),
            end: u32::try_from(end).unwrap_or(u32::MAX),
            code: digits.pack(radix),
        };
        f(segment, &digits);
    });
}

/// The DNA fingerprint of an initial-letter stream: its segments, in stream order.
pub fn dna_fingerprint(letters: &[u8], params: &DnaParams, frame: &ReferenceFrame) -> Vec<DnaSegment> {
    let mut out = Vec::with_capacity(expected_segments(letters.len(), params));
    for_each_dna_segment(letters, params, frame, |segment, _| out.push(segment));
    out
}

/// The fingerprint with each segment's digits, for human output (radix-10 codes cannot
/// be unpacked, see [`DnaDigits::pack`]); `digits.to_string()` gives `"30120..."`.
pub fn dna_fingerprint_digits(
    letters: &[u8],
    params: &DnaParams,
    frame: &ReferenceFrame,
) -> Vec<(DnaSegment, DnaDigits)> {
    let mut out = Vec::with_capacity(expected_segments(letters.len(), params));
    for_each_dna_segment(letters, params, frame, |segment, digits| out.push((segment, *digits)));
    out
}

/// A capacity hint: about one segment per step.
fn expected_segments(len: usize, params: &DnaParams) -> usize {
    let step = segment::fixed_step(params);
    len / step + 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::DnaSegmentation;

    #[test]
    fn slots_match_initial_letters() {
        for (i, &l) in INITIAL_LETTERS.iter().enumerate() {
            assert_eq!(letter_slot(l), Some(i));
        }
        assert_eq!(letter_slot(b'v'), None);
        assert_eq!(letter_slot(b'i'), None);
        assert_eq!(letter_slot(0xff), None);
        for (j, &slot) in DIGIT_SLOTS.iter().enumerate() {
            assert_eq!(INITIAL_LETTERS[slot], DIGIT_LETTERS[j]);
        }
    }

    #[test]
    fn a_segment_rich_in_one_letter_gets_its_top_digit() {
        let frame = ReferenceFrame::uniform();
        let letters: Vec<u8> = b"bbbbbbbbbbbbbbbbacdefghjklmnopqrstwxyz".repeat(2);
        let params =
            DnaParams { granularity: letters.len(), segmentation: DnaSegmentation::Fixed, ..DnaParams::default() };
        for radix in [2, 4, 8, 10] {
            let p = DnaParams { radix, ..params.clone() };
            let fp = dna_fingerprint_digits(&letters, &p, &frame);
            assert_eq!(fp.len(), 1);
            let digits = fp[0].1;
            // b is far above its expected count; each other letter is below it.
            assert_eq!(digits.0[0], radix - 1, "radix {radix}");
            assert!(digits.0[1..].iter().all(|&d| d < radix / 2 + 1), "radix {radix}: {digits}");
        }
    }

    #[test]
    fn incremental_counts_equal_recounting() {
        let frame = ReferenceFrame::builtin();
        let letters: Vec<u8> = (0..3000u64).map(|i| INITIAL_LETTERS[(crate::hash::mix64(i) % 23) as usize]).collect();
        for segmentation in [DnaSegmentation::Fixed, DnaSegmentation::ContentDefined] {
            let params = DnaParams { granularity: 48, overlap: 0.5, radix: 8, segmentation };
            for s in dna_fingerprint(&letters, &params, frame) {
                let (a, b) = (s.start as usize, s.end as usize);
                let alone = DnaParams {
                    granularity: b - a,
                    overlap: 0.0,
                    segmentation: DnaSegmentation::Fixed,
                    ..params.clone()
                };
                let again = dna_fingerprint(&letters[a..b], &alone, frame);
                assert_eq!(again.len(), 1);
                assert_eq!(again[0].code, s.code);
            }
        }
    }
}
