//! Hashing primitives shared by every fingerprint family.
//!
//! All fingerprints are built on XXH3-64, a strong, fast, stable 64-bit hash: its output
//! is fixed by its specification, so fingerprints stored today compare with fingerprints
//! computed by a later build.

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

/// Hash bytes to 64 bits.
#[inline]
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    xxh3_64(bytes)
}

/// Hash bytes to 64 bits with a seed (for independent hash families).
#[inline]
pub fn hash_bytes_seeded(bytes: &[u8], seed: u64) -> u64 {
    xxh3_64_with_seed(bytes, seed)
}

/// Hash a sequence of 64-bit values (for example a run of word hashes) to 64 bits.
///
/// Runs of up to 32 values (every shingle and MinHash band) are hashed from a stack
/// buffer: this is called once per shingle, so it must not allocate.
#[inline]
pub fn hash_u64s(values: &[u64], seed: u64) -> u64 {
    const STACK: usize = 32;
    if values.len() <= STACK {
        let mut buf = [0u8; STACK * 8];
        for (chunk, v) in buf.chunks_exact_mut(8).zip(values) {
            chunk.copy_from_slice(&v.to_le_bytes());
        }
        return xxh3_64_with_seed(&buf[..values.len() * 8], seed);
    }
    let buf: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    xxh3_64_with_seed(&buf, seed)
}

/// A cheap, well-mixing bijection on 64-bit integers (SplitMix64's finaliser).
///
/// Used where a value is already a good hash and only needs to be permuted, e.g. to
/// derive MinHash functions from one base hash.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_stable_across_builds() {
        // Stored fingerprints depend on these exact values: a change here is a format break.
        assert_eq!(hash_bytes(b"zhiwen"), xxh3_64(b"zhiwen"));
        assert_ne!(hash_bytes_seeded(b"a", 1), hash_bytes_seeded(b"a", 2));
        assert_ne!(mix64(1), mix64(2));
    }

    #[test]
    fn short_and_long_runs_hash_the_same_bytes() {
        let long: Vec<u64> = (0..40).collect();
        let bytes: Vec<u8> = long.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(hash_u64s(&long, 7), xxh3_64_with_seed(&bytes, 7));
        assert_eq!(hash_u64s(&long[..4], 7), xxh3_64_with_seed(&bytes[..32], 7));
    }
}
