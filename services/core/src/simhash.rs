//! Simhash-64 (Charikar; Manku, Jain, Das Sarma, WWW 2007) over TF-IDF weighted words,
//! with the pigeonhole block keys used to index it.
//!
//! Two signatures within Hamming distance k = 3 share at least one of 4 blocks of 16 bits
//! exactly, so storing each signature under its 4 block keys and looking up the 4 keys
//! of a query finds every near-duplicate; the 5-block variant (13,13,13,13,12 bits, the
//! C(5,2) = 10 two-block keys) costs 10 keys instead of 4 but returns ~2^10 fewer
//! candidates per key.

use rustc_hash::FxHashMap;

use crate::segment::Token;

/// The simhash of a token stream: each distinct word's 64-bit hash votes +w/-w on every
/// bit, w = tf * idf; the sign of each sum gives the bit. An empty stream gives 0.
///
/// A word's weight is its IDF added up in `f32`, once per occurrence in text order. The
/// votes are then counted exactly, in integers: every weight of at least 1/2 is a whole
/// number of 2^-24 (an `f32` has 24 significant bits), so `w * 2^24` converts without
/// rounding, and the vote on a bit is positive exactly when twice the weight of the words
/// having that bit exceeds the total weight. The sums go by bytes of the word hashes (one
/// addition per byte into a 256-slot table, resolved to bits once at the end) instead of
/// 64 additions per word. This is the same signature as summing `±w` in `f64` (as version
/// 2 of the algorithm defines it), because those sums are exact too while the total weight
/// stays below 2^29; outside that range (weights under 1/2, which jieba's IDF table never
/// gives, or a total above 2^28) the `f64` sums run as defined.
pub fn simhash(tokens: &[Token]) -> u64 {
    let mut weights: FxHashMap<u64, f32> = FxHashMap::with_capacity_and_hasher(tokens.len() / 4, Default::default());
    for t in tokens {
        *weights.entry(t.hash).or_insert(0.0) += t.idf;
    }
    const SCALE: f64 = (1u64 << 24) as f64;
    const EXACT_TOTAL: f64 = (1u64 << 28) as f64;
    let mut total = 0f64;
    let mut exact = true;
    for &w in weights.values() {
        exact &= w >= 0.5;
        total += w as f64;
    }
    // `total` is NaN or infinite only when a weight is, which `exact` has already refused.
    if !exact || total >= EXACT_TOTAL || total.is_nan() {
        return simhash_f64(tokens);
    }
    // by_byte[i][v]: total weight (in units of 2^-24) of the words whose hash has byte `i` equal to `v`.
    let mut by_byte = vec![[0u64; 256]; 8];
    let mut total_units = 0u64;
    for (&hash, &w) in &weights {
        // Exact: `w` is a multiple of 2^-24 below 2^28 (checked above).
        let units = (w as f64 * SCALE) as u64;
        total_units += units;
        for (i, slots) in by_byte.iter_mut().enumerate() {
            slots[(hash >> (8 * i)) as usize & 0xff] += units;
        }
    }
    let mut sig = 0u64;
    for (i, slots) in by_byte.iter().enumerate() {
        let mut set = [0u64; 8];
        for (v, &units) in slots.iter().enumerate() {
            for (j, s) in set.iter_mut().enumerate() {
                if v >> j & 1 == 1 {
                    *s += units;
                }
            }
        }
        for (j, &s) in set.iter().enumerate() {
            if 2 * s > total_units {
                sig |= 1 << (8 * i + j);
            }
        }
    }
    sig
}

/// The signature as defined: `f64` sums of `±w`, one word at a time, in the order of a
/// map sized for the whole token stream (the order the sums had when signatures were
/// first stored; it matters only where the sums round).
fn simhash_f64(tokens: &[Token]) -> u64 {
    let mut weights: FxHashMap<u64, f32> = FxHashMap::with_capacity_and_hasher(tokens.len(), Default::default());
    for t in tokens {
        *weights.entry(t.hash).or_insert(0.0) += t.idf;
    }
    let mut votes = [0f64; 64];
    for (hash, weight) in weights {
        let w = weight as f64;
        for (bit, vote) in votes.iter_mut().enumerate() {
            if hash >> bit & 1 == 1 {
                *vote += w;
            } else {
                *vote -= w;
            }
        }
    }
    votes.iter().enumerate().fold(0u64, |sig, (bit, &v)| if v > 0.0 { sig | 1 << bit } else { sig })
}

/// Hamming distance between two signatures.
#[inline]
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// The 4 block keys of a signature: block index in the top bits, the 16-bit block below.
pub fn block_keys_4x16(sig: u64) -> [u64; 4] {
    std::array::from_fn(|i| ((i as u64) << 16) | (sig >> (16 * i) & 0xffff))
}

/// Bit widths of the 5-block variant.
const FIVE_BLOCKS: [(u32, u32); 5] = [(0, 13), (13, 13), (26, 13), (39, 13), (52, 12)];

/// The 10 two-block keys of the 5-block variant: pair index, then the two blocks.
pub fn block_keys_5x2(sig: u64) -> [u64; 10] {
    let block = |i: usize| {
        let (shift, width) = FIVE_BLOCKS[i];
        sig >> shift & ((1u64 << width) - 1)
    };
    let mut keys = [0u64; 10];
    let mut n = 0;
    for i in 0..5 {
        for j in i + 1..5 {
            keys[n] = ((n as u64) << 26) | (block(i) << 13) | block(j);
            n += 1;
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // The pigeonhole guarantee that makes the block index exact for k = 3.
        #[test]
        fn signatures_within_three_bits_share_a_block_key(sig: u64, flips in proptest::collection::vec(0u32..64, 0..=3)) {
            let mut other = sig;
            for f in flips { other ^= 1 << f; }
            prop_assume!(hamming(sig, other) <= 3);
            let a = block_keys_4x16(sig);
            let b = block_keys_4x16(other);
            prop_assert!(a.iter().zip(&b).any(|(x, y)| x == y));
        }

        #[test]
        fn signatures_within_three_bits_share_a_two_block_key(sig: u64, flips in proptest::collection::vec(0u32..64, 0..=3)) {
            let mut other = sig;
            for f in flips { other ^= 1 << f; }
            let a = block_keys_5x2(sig);
            let b = block_keys_5x2(other);
            prop_assert!(a.iter().zip(&b).any(|(x, y)| x == y));
        }
    }

    fn token(hash: u64, idf: f32) -> Token {
        Token { start: 0, end: 1, hash, idf }
    }

    proptest! {
        // The exact integer count gives the signature of the f64 sums, bit for bit.
        #[test]
        fn the_exact_count_equals_the_f64_sums(
            words in proptest::collection::vec((any::<u64>(), 0.5f32..14.0), 1..60),
            picks in proptest::collection::vec(0usize..1000, 0..400),
        ) {
            let tokens: Vec<Token> = picks.iter().map(|&p| { let (h, w) = words[p % words.len()]; token(h, w) }).collect();
            prop_assert_eq!(simhash(&tokens), simhash_f64(&tokens));
        }
    }

    #[test]
    fn ties_and_light_weights_match_the_definition() {
        // Complementary hashes of equal weight: every vote is exactly zero, so no bit is set.
        let tie = [token(0x0123_4567_89ab_cdef, 3.25), token(!0x0123_4567_89ab_cdef, 3.25)];
        assert_eq!(simhash(&tie), 0);
        assert_eq!(simhash(&tie), simhash_f64(&tie));
        // A weight under 1/2 takes the f64 sums as defined.
        let light = [token(0xff, 0.1), token(0xf0f0, 0.3), token(0xf0f0, 0.3)];
        assert_eq!(simhash(&light), simhash_f64(&light));
        assert_eq!(simhash(&[]), 0);
    }

    #[test]
    fn real_text_gives_the_same_signature_both_ways() {
        let text = include_str!("../../../samples/hongloumeng-01.txt");
        let tokens = crate::segment::segment(text, &crate::params::SegmentParams::default());
        assert!(tokens.len() > 1000);
        assert_eq!(simhash(&tokens), simhash_f64(&tokens));
    }

    #[test]
    fn block_keys_of_different_blocks_never_collide() {
        let keys = block_keys_4x16(0);
        let set: std::collections::HashSet<_> = keys.iter().collect();
        assert_eq!(set.len(), 4);
        let keys = block_keys_5x2(0);
        let set: std::collections::HashSet<_> = keys.iter().collect();
        assert_eq!(set.len(), 10);
    }
}
