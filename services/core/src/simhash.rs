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
pub fn simhash(tokens: &[Token]) -> u64 {
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
