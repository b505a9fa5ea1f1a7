//! Where DNA segments start and end in the letter stream.
//!
//! Two strategies ([`DnaSegmentation`]):
//!
//! - **Fixed offsets** (the Daguan article): segments of `n` letters starting every
//!   `round(n * (1 - o))` letters; only whole segments (a stream shorter than `n` has
//!   none). One inserted letter moves every later boundary, so after an edit the copy's
//!   segments no longer line up with the original's.
//! - **Content-defined** boundaries: a Buzhash over the last [`WINDOW`] letters, mixed,
//!   compared with a threshold, marks cut points, so a boundary depends only on the
//!   letters just before it (and on the minimum chunk size) and an edit moves only the
//!   boundaries near it. The stream is cut into chunks of `n / k` letters on average
//!   (`k = round(1 / (1 - o))`, so 2 for the default 50% overlap); a segment spans `k`
//!   consecutive chunks and the next segment starts one chunk later. With `o = 0.5`
//!   a segment is two chunks, `n` letters on average, overlapping its neighbours by
//!   half: the article's layout, with boundaries chosen by content.
//!
//! Both strategies produce segments whose starts and ends never decrease, which lets
//! the caller keep letter counts with two pointers in O(letters).

use crate::hash::mix64;
use crate::params::{DnaParams, DnaSegmentation};

/// Letters in the rolling-hash window of content-defined cuts: long enough to have far
/// more distinct contents than cut points (23^8), short enough that an edit disturbs
/// cut decisions only in the 8 letters after it (16 and 5 were measured too, see
/// `docs/dna.md`: shorter windows survive edits better but raise chance matches).
pub(crate) const WINDOW: usize = 8;

/// Largest number of chunks per segment (overlap 0.9 gives 10).
const MAX_CHUNKS: usize = 10;

/// One fixed pseudo-random 64-bit value per byte (SplitMix64 of the byte), for Buzhash.
const BUZ: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut z = (i as u64).wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        table[i] = z ^ (z >> 31);
        i += 1;
    }
    table
};

/// The sizes that shape content-defined chunks, derived from the parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChunkShape {
    /// Chunks per segment.
    pub chunks_per_segment: usize,
    /// Target average chunk size in letters (`n / k`).
    pub average: usize,
    /// No cut closer than this to the previous one (a quarter of the average: a small
    /// minimum keeps cut decisions independent of the previous cut, so cuts resynchronise
    /// quickly after an edit; `docs/dna.md` measured a half as worse under edits).
    pub min: usize,
    /// A cut is forced at this size (four times the average; about 2% of chunks).
    pub max: usize,
    /// A position is a cut when the mixed hash is below this (probability
    /// `1 / (average - min)`, which makes the mean chunk about `average` letters).
    pub threshold: u64,
    /// Streams shorter than this (half the granularity) give no segment at all.
    pub min_stream: usize,
}

impl ChunkShape {
    pub(crate) fn of(params: &DnaParams) -> ChunkShape {
        let n = granularity(params);
        let overlap = overlap(params);
        // 1 / (1 - o) for o in [0, 0.9] is in [1, 10]; the cast is of a small positive value.
        let k = ((1.0 / (1.0 - overlap)).round() as usize).clamp(1, MAX_CHUNKS);
        let average = (n / k).max(2);
        let min = (average / 4).max(1);
        let max = average * 4;
        let threshold = u64::MAX / (average - min).max(1) as u64;
        ChunkShape { chunks_per_segment: k, average, min, max, threshold, min_stream: (n / 2).max(1) }
    }
}

/// Granularity clamped to what the algorithm can use (Params::validate refuses more).
pub(crate) fn granularity(params: &DnaParams) -> usize {
    params.granularity.clamp(2, 1 << 20)
}

/// Overlap clamped to [0, 0.9]; NaN counts as 0.
pub(crate) fn overlap(params: &DnaParams) -> f64 {
    if params.overlap.is_nan() {
        0.0
    } else {
        params.overlap.clamp(0.0, 0.9)
    }
}

/// Step between fixed segments: `round(n * (1 - o))`, at least 1.
pub(crate) fn fixed_step(params: &DnaParams) -> usize {
    let n = granularity(params);
    // A finite value in [0.1 n, n]: the cast cannot overflow.
    (((n as f64) * (1.0 - overlap(params))).round() as usize).clamp(1, n)
}

/// Call `f(start, end)` for each segment of a stream of `len` letters, in order; both
/// `start` and `end` are non-decreasing and `start < end <= len`.
pub(crate) fn for_each_span(letters: &[u8], params: &DnaParams, mut f: impl FnMut(usize, usize)) {
    let len = letters.len();
    match params.segmentation {
        DnaSegmentation::Fixed => {
            let n = granularity(params);
            let step = fixed_step(params);
            let mut start = 0;
            while start + n <= len {
                f(start, start + n);
                start += step;
            }
        }
        DnaSegmentation::ContentDefined => {
            let shape = ChunkShape::of(params);
            if len < shape.min_stream {
                return;
            }
            let k = shape.chunks_per_segment;
            // The last k + 1 cuts (chunk boundaries), as a ring; cut 0 is the stream start.
            let mut ring = [0usize; MAX_CHUNKS + 1];
            let mut cuts = 1usize;
            let mut push = |cut: usize, ring: &mut [usize; MAX_CHUNKS + 1], cuts: &mut usize| {
                ring[*cuts % ring.len()] = cut;
                if *cuts >= k {
                    f(ring[(*cuts - k) % ring.len()], cut);
                }
                *cuts += 1;
            };
            for_each_cut(letters, &shape, |cut| push(cut, &mut ring, &mut cuts));
            push(len, &mut ring, &mut cuts);
            // Fewer than k chunks: the whole stream is the one segment.
            if cuts <= k {
                f(0, len);
            }
        }
    }
}

/// Call `f` with every interior content-defined cut position (exclusive chunk end),
/// in increasing order. No cut leaves a final chunk shorter than `shape.min`.
pub(crate) fn for_each_cut(letters: &[u8], shape: &ChunkShape, mut f: impl FnMut(usize)) {
    let len = letters.len();
    let mut hash = 0u64;
    let mut last = 0usize;
    let out_rotation = (WINDOW % 64) as u32;
    for (i, &letter) in letters.iter().enumerate() {
        hash = hash.rotate_left(1) ^ BUZ[usize::from(letter)];
        if let Some(&old) = i.checked_sub(WINDOW).and_then(|j| letters.get(j)) {
            hash ^= BUZ[usize::from(old)].rotate_left(out_rotation);
        }
        let pos = i + 1;
        let size = pos - last;
        if size < shape.min || len - pos < shape.min {
            continue;
        }
        if size >= shape.max || mix64(hash) < shape.threshold {
            f(pos);
            last = pos;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(letters: &[u8], params: &DnaParams) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for_each_span(letters, params, |s, e| out.push((s, e)));
        out
    }

    fn pseudo_letters(len: usize, seed: u64) -> Vec<u8> {
        let alphabet = crate::initials::INITIAL_LETTERS;
        (0..len as u64).map(|i| alphabet[(mix64(i ^ seed.rotate_left(17)) % 23) as usize]).collect()
    }

    #[test]
    fn fixed_spans_follow_the_article() {
        let p =
            DnaParams { granularity: 8, overlap: 0.5, segmentation: DnaSegmentation::Fixed, ..DnaParams::default() };
        assert_eq!(spans(&[b'a'; 16], &p), vec![(0, 8), (4, 12), (8, 16)]);
        assert!(spans(&[b'a'; 7], &p).is_empty());
        let q = DnaParams { overlap: 0.0, ..p };
        assert_eq!(spans(&[b'a'; 17], &q), vec![(0, 8), (8, 16)]);
    }

    #[test]
    fn content_defined_chunks_average_near_the_target() {
        let letters = pseudo_letters(200_000, 7);
        for n in [32, 64, 128] {
            let p = DnaParams { granularity: n, overlap: 0.5, ..DnaParams::default() };
            let shape = ChunkShape::of(&p);
            let mut cuts = 0;
            for_each_cut(&letters, &shape, |_| cuts += 1);
            let mean = letters.len() as f64 / (cuts + 1) as f64;
            let target = (n / 2) as f64;
            assert!((mean - target).abs() < 0.15 * target, "n={n}: mean chunk {mean}");
            let sp = spans(&letters, &p);
            assert!(sp.iter().all(|&(s, e)| e - s >= 2 * shape.min && e - s <= 2 * shape.max + shape.min));
        }
    }

    #[test]
    fn consecutive_content_defined_segments_share_one_chunk() {
        let letters = pseudo_letters(5_000, 3);
        let p = DnaParams { granularity: 64, overlap: 0.5, ..DnaParams::default() };
        let sp = spans(&letters, &p);
        for w in sp.windows(2) {
            // With two chunks per segment, the next segment starts where the first chunk ends.
            assert!(w[1].0 > w[0].0 && w[1].0 < w[0].1 && w[1].1 > w[0].1, "{w:?}");
        }
        assert_eq!(sp.first().map(|s| s.0), Some(0));
        assert_eq!(sp.last().map(|s| s.1), Some(letters.len()));
    }

    #[test]
    fn short_streams_give_one_segment_or_none() {
        let p = DnaParams { granularity: 64, ..DnaParams::default() };
        assert!(spans(&[b'a'; 31], &p).is_empty());
        assert_eq!(spans(&[b'a'; 40], &p), vec![(0, 40)]);
    }
}
