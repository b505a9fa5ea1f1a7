//! Winnowing (Schleimer, Wilkerson, Aiken, SIGMOD 2003) and passage evidence.
//!
//! Every k-gram of a unit stream (pinyin initials, or normalised characters) is hashed
//! with a Rabin-Karp rolling hash; in each window of `w` consecutive hashes the minimum
//! (rightmost on ties) is kept with its position. Any shared run of at least `w + k - 1`
//! units is guaranteed to produce a shared fingerprint; density is about 2 / (w + 1).
//! [`find_passages`] chains matching fingerprints of two documents into passages and
//! extends them unit by unit, so reports can quote the copied text side by side.

use serde::{Deserialize, Serialize};

use crate::hash::mix64;

/// A winnowed fingerprint: the hash of the k-gram starting at unit `pos`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WinnowFp {
    /// Hash of the k-gram.
    pub hash: u64,
    /// Index of the k-gram's first unit in the stream.
    pub pos: u32,
}

/// Base of the rolling hash (odd, so multiplication is invertible mod 2^64).
const BASE: u64 = 0x100_0000_01b3;

/// Hashes of every k-gram of `units`, in order (`units.len() - k + 1` of them).
///
/// Units are code points or letters; a unit's value, not its type, decides the hash.
pub fn kgram_hashes<U: Copy + Into<u64>>(units: &[U], k: usize) -> Vec<u64> {
    if k == 0 || units.len() < k {
        return Vec::new();
    }
    let top = (1..k).fold(1u64, |p, _| p.wrapping_mul(BASE));
    let mut h = units[..k].iter().fold(0u64, |h, &u| h.wrapping_mul(BASE).wrapping_add(u.into() + 1));
    let mut out = Vec::with_capacity(units.len() - k + 1);
    // mix64 turns the polynomial value into a uniformly ordered hash, which the minimum
    // selection of winnowing needs.
    out.push(mix64(h));
    for i in k..units.len() {
        h = h.wrapping_sub((units[i - k].into() + 1).wrapping_mul(top));
        h = h.wrapping_mul(BASE).wrapping_add(units[i].into() + 1);
        out.push(mix64(h));
    }
    out
}

/// Winnow a unit stream: k-gram length `k`, window `w`. A stream shorter than `k` but
/// not empty gives one fingerprint of the whole stream, so short texts still compare.
/// Units are code points or letters (the pinyin initials need no widening to `u32`).
pub fn winnow<U: Copy + Into<u64>>(units: &[U], k: usize, w: usize) -> Vec<WinnowFp> {
    if units.is_empty() {
        return Vec::new();
    }
    if units.len() < k {
        return vec![WinnowFp { hash: kgram_hashes(units, units.len())[0], pos: 0 }];
    }
    let w = w.max(1);
    let count = units.len() - k + 1;
    if count <= w {
        let hashes = kgram_hashes(units, k);
        let (pos, &hash) = hashes.iter().enumerate().rev().min_by_key(|(_, h)| **h).unwrap_or((0, &hashes[0]));
        return vec![WinnowFp { hash, pos: pos as u32 }];
    }
    // The k-gram hashes are rolled on the fly into a ring of the last `w` (no vector of
    // every hash); the window keeps the position of its rightmost minimum and rescans
    // only when that minimum leaves the window (about once per window on random hashes).
    let top = (1..k).fold(1u64, |p, _| p.wrapping_mul(BASE));
    let mut roll = units[..k].iter().fold(0u64, |h, &u| h.wrapping_mul(BASE).wrapping_add(u.into() + 1));
    let mut ring = vec![0u64; w];
    // Winnowing keeps 2 / (w + 1) of the positions of random text on average: room for
    // an eighth more, so that a list is rarely doubled (and held at up to twice its size)
    // for running a little over the mean.
    let expected = 2 * count / (w + 1);
    let mut out: Vec<WinnowFp> = Vec::with_capacity(expected + expected / 8 + 8);
    let (mut min_pos, mut min_hash) = (0usize, u64::MAX);
    let mut last_out = usize::MAX;
    // `i % w`, kept by counting: a division per unit (the window is not a constant) cost
    // more than the rest of the loop.
    let mut slot = 0usize;
    for i in 0..count {
        if i > 0 {
            let (gone, new) = (units[i - 1], units[i + k - 1]);
            roll = roll.wrapping_sub((gone.into() + 1).wrapping_mul(top));
            roll = roll.wrapping_mul(BASE).wrapping_add(new.into() + 1);
        }
        let h = mix64(roll);
        ring[slot] = h;
        if h <= min_hash {
            (min_pos, min_hash) = (i, h);
        } else if min_pos + w <= i {
            // The minimum left the window: rescan it, keeping the rightmost minimum.
            let lo = i + 1 - w;
            (min_pos, min_hash) = (i, h);
            let mut at = slot;
            for j in (lo..i).rev() {
                at = if at == 0 { w - 1 } else { at - 1 };
                let v = ring[at];
                if v < min_hash {
                    (min_pos, min_hash) = (j, v);
                }
            }
        }
        if i + 1 >= w && last_out != min_pos {
            out.push(WinnowFp { hash: min_hash, pos: min_pos as u32 });
            last_out = min_pos;
        }
        slot = if slot + 1 == w { 0 } else { slot + 1 };
    }
    out
}

/// The share of `a`'s distinct fingerprint hashes that also occur in `b`, and of `b`'s
/// that occur in `a` (each 0 when that side has none): `(a in b, b in a)`, each list
/// sorted once.
pub fn winnow_containments(a: &[WinnowFp], b: &[WinnowFp]) -> (f64, f64) {
    let distinct = |fps: &[WinnowFp]| {
        let mut h: Vec<u64> = fps.iter().map(|f| f.hash).collect();
        h.sort_unstable();
        h.dedup();
        h
    };
    let (ha, hb) = (distinct(a), distinct(b));
    let shared = crate::shingle::intersection_size(&ha, &hb) as f64;
    let share = |of: &[u64]| if of.is_empty() { 0.0 } else { shared / of.len() as f64 };
    (share(&ha), share(&hb))
}

/// A copied passage: half-open unit ranges in both streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Passage {
    /// Start unit in stream A.
    pub a_start: u32,
    /// End unit in stream A (exclusive).
    pub a_end: u32,
    /// Start unit in stream B.
    pub b_start: u32,
    /// End unit in stream B (exclusive).
    pub b_end: u32,
    /// Number of fingerprint matches that support the passage.
    pub support: u32,
}

/// How passages are assembled.
#[derive(Debug, Clone, Copy)]
pub struct PassageOptions {
    /// k-gram length the fingerprints were made with.
    pub k: usize,
    /// Largest gap (units) between two matches of one passage, on either side.
    pub max_gap: usize,
    /// A hash occurring more often than this in B is boilerplate, not evidence.
    pub max_occurrences: usize,
}

struct Chain {
    first: (u32, u32),
    last: (u32, u32),
    support: u32,
}

/// The fingerprints of one stream by hash (positions in stream order), built once to
/// search many other streams against it with [`find_passages_in`].
#[derive(Debug, Clone, Default)]
pub struct FingerprintIndex {
    /// (hash, position), sorted: the positions of one hash are in stream order.
    entries: Vec<(u64, u32)>,
}

impl FingerprintIndex {
    /// Index the fingerprints of a stream.
    pub fn new(fps: &[WinnowFp]) -> Self {
        let mut entries: Vec<(u64, u32)> = fps.iter().map(|f| (f.hash, f.pos)).collect();
        entries.sort_unstable();
        FingerprintIndex { entries }
    }

    /// Positions of `hash`, in stream order.
    fn positions(&self, hash: u64) -> impl Iterator<Item = u32> + '_ {
        let start = self.entries.partition_point(|e| e.0 < hash);
        self.entries[start..].iter().take_while(move |e| e.0 == hash).map(|e| e.1)
    }
}

/// Chain the matching fingerprints of A and B into passages, extend each passage while
/// the units agree, and merge overlapping ones. Sorted by start in A.
pub fn find_passages<U: Copy + Eq>(
    a_units: &[U],
    a_fps: &[WinnowFp],
    b_units: &[U],
    b_fps: &[WinnowFp],
    opts: &PassageOptions,
) -> Vec<Passage> {
    find_passages_in(a_units, a_fps, b_units, &FingerprintIndex::new(b_fps), opts)
}

/// [`find_passages`] with B's fingerprints already indexed (`b_index`, made from the
/// fingerprints of `b_units`): one index of a page serves all its candidates.
pub fn find_passages_in<U: Copy + Eq>(
    a_units: &[U],
    a_fps: &[WinnowFp],
    b_units: &[U],
    b_index: &FingerprintIndex,
    opts: &PassageOptions,
) -> Vec<Passage> {
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    for f in a_fps {
        let start = pairs.len();
        let mut n = 0;
        for pb in b_index.positions(f.hash) {
            n += 1;
            if n > opts.max_occurrences {
                break;
            }
            pairs.push((f.pos, pb));
        }
        if n > opts.max_occurrences {
            pairs.truncate(start);
        }
    }
    pairs.sort_unstable();
    let gap = opts.max_gap as i64;
    let mut active: Vec<Chain> = Vec::new();
    let mut done: Vec<Chain> = Vec::new();
    for (pa, pb) in pairs {
        // Retire chains that can no longer be extended.
        let mut i = 0;
        while i < active.len() {
            if (pa as i64) - (active[i].last.0 as i64) > gap {
                done.push(active.swap_remove(i));
            } else {
                i += 1;
            }
        }
        let best = active
            .iter_mut()
            .filter(|c| pa > c.last.0 && pb > c.last.1 && (pb as i64 - c.last.1 as i64) <= gap)
            .min_by_key(|c| ((pb as i64 - c.last.1 as i64) - (pa as i64 - c.last.0 as i64)).abs());
        match best {
            Some(c) if ((pb as i64 - c.last.1 as i64) - (pa as i64 - c.last.0 as i64)).abs() <= gap => {
                c.last = (pa, pb);
                c.support += 1;
            }
            _ => active.push(Chain { first: (pa, pb), last: (pa, pb), support: 1 }),
        }
    }
    done.extend(active);
    let k = opts.k as u32;
    let mut passages: Vec<Passage> = done
        .into_iter()
        .map(|c| {
            let mut p = Passage {
                a_start: c.first.0,
                a_end: (c.last.0 + k).min(a_units.len() as u32),
                b_start: c.first.1,
                b_end: (c.last.1 + k).min(b_units.len() as u32),
                support: c.support,
            };
            extend(&mut p, a_units, b_units);
            p
        })
        // One k-gram alone can be chance; a single match must extend to twice its length.
        .filter(|p| p.support >= 2 || (p.a_end - p.a_start) >= 2 * k)
        .collect();
    merge_overlapping(&mut passages);
    passages
}

/// Grow a passage outwards while the units on both sides agree.
fn extend<U: Copy + Eq>(p: &mut Passage, a: &[U], b: &[U]) {
    while p.a_start > 0 && p.b_start > 0 && a[p.a_start as usize - 1] == b[p.b_start as usize - 1] {
        p.a_start -= 1;
        p.b_start -= 1;
    }
    while (p.a_end as usize) < a.len() && (p.b_end as usize) < b.len() && a[p.a_end as usize] == b[p.b_end as usize] {
        p.a_end += 1;
        p.b_end += 1;
    }
}

/// Merge passages that overlap (or touch) on both sides; sorts by start in A.
pub fn merge_overlapping(passages: &mut Vec<Passage>) {
    passages.sort_unstable_by_key(|p| (p.a_start, p.b_start));
    let mut merged: Vec<Passage> = Vec::with_capacity(passages.len());
    for p in passages.drain(..) {
        if let Some(last) = merged
            .iter_mut()
            .rev()
            .take(4)
            .find(|m| p.a_start <= m.a_end && m.a_start <= p.a_end && p.b_start <= m.b_end && m.b_start <= p.b_end)
        {
            last.a_start = last.a_start.min(p.a_start);
            last.a_end = last.a_end.max(p.a_end);
            last.b_start = last.b_start.min(p.b_start);
            last.b_end = last.b_end.max(p.b_end);
            last.support += p.support;
        } else {
            merged.push(p);
        }
    }
    *passages = merged;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn units(s: &str) -> Vec<u32> {
        s.chars().map(|c| c as u32).collect()
    }

    #[test]
    fn rolling_hash_equals_direct_hash() {
        let u = units("abcdefghijklmnop");
        let rolled = kgram_hashes(&u, 5);
        for (i, h) in rolled.iter().enumerate() {
            assert_eq!(*h, kgram_hashes(&u[i..i + 5], 5)[0]);
        }
    }

    /// The textbook monotone-deque winnowing over a vector of every k-gram hash: the
    /// optimised [`winnow`] must give exactly the same fingerprints.
    fn reference_winnow(units: &[u32], k: usize, w: usize) -> Vec<WinnowFp> {
        if units.is_empty() {
            return Vec::new();
        }
        if units.len() < k {
            return vec![WinnowFp { hash: kgram_hashes(units, units.len())[0], pos: 0 }];
        }
        let hashes = kgram_hashes(units, k);
        let w = w.max(1);
        if hashes.len() <= w {
            let (pos, &hash) = hashes.iter().enumerate().rev().min_by_key(|(_, h)| **h).unwrap_or((0, &hashes[0]));
            return vec![WinnowFp { hash, pos: pos as u32 }];
        }
        let mut deque = std::collections::VecDeque::new();
        let mut out: Vec<WinnowFp> = Vec::new();
        for (i, &h) in hashes.iter().enumerate() {
            while deque.back().is_some_and(|&j| hashes[j] >= h) {
                deque.pop_back();
            }
            deque.push_back(i);
            if deque.front().is_some_and(|&j| j + w <= i) {
                deque.pop_front();
            }
            if i + 1 >= w {
                if let Some(&m) = deque.front() {
                    if out.last().is_none_or(|f| f.pos as usize != m) {
                        out.push(WinnowFp { hash: hashes[m], pos: m as u32 });
                    }
                }
            }
        }
        out
    }

    proptest! {
        #[test]
        fn winnow_equals_the_textbook_algorithm(
            u in proptest::collection::vec(0u32..4, 0..400),
            k in 1usize..14,
            w in 1usize..12,
        ) {
            // A 4-letter alphabet makes repeated k-grams (equal hashes, ties) common.
            prop_assert_eq!(winnow(&u, k, w), reference_winnow(&u, k, w));
        }

        // Letters winnowed as bytes give the fingerprints of the same values as `u32`.
        #[test]
        fn byte_units_hash_like_their_values(
            letters in proptest::collection::vec(b'a'..=b'z', 0..300),
            k in 1usize..14,
            w in 1usize..12,
        ) {
            let wide: Vec<u32> = letters.iter().map(|&l| u32::from(l)).collect();
            prop_assert_eq!(winnow(&letters, k, w), winnow(&wide, k, w));
        }
    }

    #[test]
    fn containment_counts_distinct_hashes_each_way() {
        let fps = |hashes: &[u64]| -> Vec<WinnowFp> {
            hashes.iter().enumerate().map(|(i, &hash)| WinnowFp { hash, pos: i as u32 }).collect()
        };
        // a: {1, 2, 3, 4} (2 twice), b: {3, 4, 5}.
        let (a, b) = (fps(&[4, 2, 1, 2, 3]), fps(&[5, 3, 4, 3]));
        assert_eq!(winnow_containments(&a, &b), (0.5, 2.0 / 3.0));
        assert_eq!(winnow_containments(&b, &a), (2.0 / 3.0, 0.5));
        assert_eq!(winnow_containments(&[], &b), (0.0, 0.0));
        assert_eq!(winnow_containments(&a, &[]), (0.0, 0.0));
    }

    #[test]
    fn density_is_about_two_over_w_plus_one() {
        let text: Vec<u32> = (0..20_000u64).map(|i| (mix64(i) % 23) as u32).collect();
        let fps = winnow(&text, 8, 8);
        let density = fps.len() as f64 / text.len() as f64;
        assert!((0.17..0.28).contains(&density), "density {density}");
    }

    #[test]
    fn a_copied_run_is_found_as_one_passage_at_the_right_place() {
        let filler_a: Vec<u32> = (0..500u64).map(|i| (mix64(i) % 23) as u32).collect();
        let filler_b: Vec<u32> = (1000..1700u64).map(|i| (mix64(i) % 23) as u32).collect();
        let copied: Vec<u32> = (5000..5200u64).map(|i| (mix64(i) % 23) as u32).collect();
        let a: Vec<u32> = filler_a[..200].iter().chain(&copied).chain(&filler_a[200..]).copied().collect();
        let b: Vec<u32> = filler_b[..450].iter().chain(&copied).chain(&filler_b[450..]).copied().collect();
        let (fa, fb) = (winnow(&a, 8, 8), winnow(&b, 8, 8));
        let ps = find_passages(&a, &fa, &b, &fb, &PassageOptions { k: 8, max_gap: 40, max_occurrences: 16 });
        assert_eq!(ps.len(), 1, "{ps:?}");
        let p = ps[0];
        // Extension recovers the exact copied run (give or take chance agreement at the edges).
        assert!(p.a_start <= 200 && p.a_start >= 195, "{p:?}");
        assert!(p.a_end >= 400 && p.a_end <= 405, "{p:?}");
        assert_eq!(p.b_start as i64 - p.a_start as i64, 250);
    }

    proptest! {
        // The winnowing guarantee: a shared run of w + k - 1 units shares a fingerprint.
        #[test]
        fn shared_runs_of_w_plus_k_minus_one_share_a_fingerprint(
            prefix_a in proptest::collection::vec(0u32..23, 0..60),
            prefix_b in proptest::collection::vec(0u32..23, 0..60),
            shared in proptest::collection::vec(0u32..23, 15..40),
        ) {
            let (k, w) = (8, 8);
            let a: Vec<u32> = prefix_a.iter().chain(&shared).copied().collect();
            let b: Vec<u32> = prefix_b.iter().chain(&shared).copied().collect();
            let ha: std::collections::HashSet<u64> = winnow(&a, k, w).iter().map(|f| f.hash).collect();
            prop_assert!(winnow(&b, k, w).iter().any(|f| ha.contains(&f.hash)));
        }

        #[test]
        fn passages_stay_inside_both_streams(
            a in proptest::collection::vec(0u32..5, 0..300),
            b in proptest::collection::vec(0u32..5, 0..300),
        ) {
            let (fa, fb) = (winnow(&a, 4, 4), winnow(&b, 4, 4));
            for p in find_passages(&a, &fa, &b, &fb, &PassageOptions { k: 4, max_gap: 10, max_occurrences: 8 }) {
                prop_assert!(p.a_start < p.a_end && p.a_end as usize <= a.len());
                prop_assert!(p.b_start < p.b_end && p.b_end as usize <= b.len());
            }
        }
    }
}
