//! MinHash signatures, super-shingles, mega-shingles and LSH bands.
//!
//! 84 hash functions (seed 000/003), each the minimum over the shingle set; P(equal
//! minimum) = Jaccard. The shingles are already uniform 64-bit hashes, so function `i`
//! is the cheap bijection `a_i * x + b_i (mod 2^64)` with odd `a_i` (multiply-shift:
//! the high bits, which decide the minimum, depend on every bit of `x`): one multiply
//! and one add per function instead of a full mixer, 2-3x faster on large documents
//! (docs/benchmarks.md). Super-shingles hash 6 groups of 14 consecutive minima; two
//! documents are similar when at least 2 coincide. Mega-shingles hash the 15 pairs of
//! super-shingles, so ONE equal mega-shingle means >= 2 equal super-shingles: one index
//! lookup per mega-shingle finds candidates. High precision, low recall below ~0.9
//! similarity (q = p^14). LSH banding (seed 002): b bands of r rows; candidate iff one
//! band is equal; P = 1 - (1 - s^r)^b.

use crate::hash::{hash_u64s, mix64};

const SUPER_SEED: u64 = 0x5355_5045_5253_4849;
const MEGA_SEED: u64 = 0x4d45_4741_5348_494e;
const BAND_SEED: u64 = 0x4c53_4842_414e_4453;

/// A family of independent hash functions for MinHash.
#[derive(Debug, Clone)]
pub struct MinHasher {
    /// `a_i` per function, odd.
    mul: Vec<u64>,
    /// `b_i` per function.
    add: Vec<u64>,
}

impl MinHasher {
    /// `functions` hash functions, derived deterministically (stored signatures stay comparable).
    pub fn new(functions: usize) -> Self {
        let (mul, add) = (0..functions as u64)
            .map(|i| {
                let a = mix64(0x9e37_79b9_7f4a_7c15 ^ i.wrapping_mul(0x2545_f491_4f6c_dd1d)) | 1;
                let b = mix64(a ^ 0x6a09_e667_f3bc_c909);
                (a, b)
            })
            .unzip();
        MinHasher { mul, add }
    }

    /// Number of hash functions.
    pub fn len(&self) -> usize {
        self.mul.len()
    }

    /// True when there are no functions.
    pub fn is_empty(&self) -> bool {
        self.mul.is_empty()
    }

    /// The signature of a shingle set (uniform 64-bit hashes): per function, the minimum
    /// hash. An empty set gives `u64::MAX` everywhere.
    pub fn signature(&self, shingles: &[u64]) -> Vec<u64> {
        let mut sig = vec![u64::MAX; self.mul.len()];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512dq") {
            // SAFETY: the CPU has just been checked for the features the function is compiled with.
            unsafe { signature_avx512(&self.mul, &self.add, shingles, &mut sig) };
            return sig;
        }
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: as above.
            unsafe { signature_avx2(&self.mul, &self.add, shingles, &mut sig) };
            return sig;
        }
        signature_into(&self.mul, &self.add, shingles, &mut sig);
        sig
    }
}

/// [`signature_into`] compiled for AVX-512, which has the 64-bit multiply (`vpmullq`) and
/// unsigned minimum (`vpminuq`) the loop needs, eight functions per instruction: the same
/// integer operations, so the same signature, in a fraction of the time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn signature_avx512(mul: &[u64], add: &[u64], shingles: &[u64], sig: &mut [u64]) {
    signature_into(mul, add, shingles, sig)
}

/// [`signature_into`] compiled for AVX2: no 64-bit multiply or unsigned minimum there, but
/// the compiler builds them from 32-bit multiplies and signed comparisons four functions
/// at a time, which still beats one at a time (docs/benchmarks.md).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn signature_avx2(mul: &[u64], add: &[u64], shingles: &[u64], sig: &mut [u64]) {
    signature_into(mul, add, shingles, sig)
}

/// Lower `sig[i]` to the minimum of `mul[i] * x + add[i]` over the shingles `x`.
#[inline(always)]
fn signature_into(mul: &[u64], add: &[u64], shingles: &[u64], sig: &mut [u64]) {
    let n = sig.len().min(mul.len()).min(add.len());
    let (mul, add, sig) = (&mul[..n], &add[..n], &mut sig[..n]);
    // Four shingles per pass over the functions: each coefficient pair and running
    // minimum is loaded and stored once per four multiplies, not once per multiply.
    let mut blocks = shingles.chunks_exact(4);
    for block in &mut blocks {
        let [x0, x1, x2, x3] = [block[0], block[1], block[2], block[3]];
        for ((m, &a), &b) in sig.iter_mut().zip(mul).zip(add) {
            let h0 = a.wrapping_mul(x0).wrapping_add(b);
            let h1 = a.wrapping_mul(x1).wrapping_add(b);
            let h2 = a.wrapping_mul(x2).wrapping_add(b);
            let h3 = a.wrapping_mul(x3).wrapping_add(b);
            *m = (*m).min(h0.min(h1)).min(h2.min(h3));
        }
    }
    for &x in blocks.remainder() {
        for ((m, &a), &b) in sig.iter_mut().zip(mul).zip(add) {
            *m = (*m).min(a.wrapping_mul(x).wrapping_add(b));
        }
    }
}

/// Estimated Jaccard similarity: the share of equal minima.
pub fn estimate_jaccard(a: &[u64], b: &[u64]) -> f64 {
    if a.is_empty() || a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / a.len() as f64
}

/// Super-shingles: `groups` hashes of consecutive runs of minima.
pub fn super_shingles(signature: &[u64], groups: usize) -> Vec<u64> {
    if groups == 0 || signature.is_empty() {
        return Vec::new();
    }
    let size = signature.len() / groups;
    (0..groups).map(|g| hash_u64s(&signature[g * size..(g + 1) * size], SUPER_SEED ^ g as u64)).collect()
}

/// Mega-shingles: one hash per pair of super-shingles (15 for 6).
pub fn mega_shingles(supers: &[u64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(supers.len() * supers.len().saturating_sub(1) / 2);
    for i in 0..supers.len() {
        for j in i + 1..supers.len() {
            out.push(hash_u64s(&[supers[i], supers[j]], MEGA_SEED ^ ((i as u64) << 8 | j as u64)));
        }
    }
    out
}

/// Number of equal super-shingles at the same position.
pub fn matching_super_shingles(a: &[u64], b: &[u64]) -> usize {
    a.iter().zip(b).filter(|(x, y)| x == y).count()
}

/// LSH band keys: `bands` hashes of `rows` consecutive minima each, band index mixed in.
pub fn lsh_bands(signature: &[u64], bands: usize, rows: usize) -> Vec<u64> {
    (0..bands)
        .filter(|b| (b + 1) * rows <= signature.len())
        .map(|b| hash_u64s(&signature[b * rows..(b + 1) * rows], BAND_SEED ^ b as u64))
        .collect()
}

/// Probability that two documents of Jaccard similarity `s` share at least one band.
pub fn lsh_probability(s: f64, bands: usize, rows: usize) -> f64 {
    1.0 - (1.0 - s.powi(rows as i32)).powi(bands as i32)
}

/// Probability that two documents of Jaccard similarity `p` share a mega-shingle
/// (>= 2 of `groups` super-shingles of `size` minima each).
pub fn mega_shingle_probability(p: f64, groups: usize, size: usize) -> f64 {
    let q = p.powi(size as i32);
    let g = groups as i32;
    1.0 - (1.0 - q).powi(g) - g as f64 * q * (1.0 - q).powi(g - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_minimum_of_each_function_on_every_code_path() {
        // `signature` takes the AVX-512 or AVX2 path where the CPU has it (AVX2 is also
        // tried on its own: a machine with AVX-512 never takes it); the definition is the
        // plain minimum per function, for every remainder of the four-shingle blocks.
        for functions in [1, 7, 8, 84, 100] {
            let h = MinHasher::new(functions);
            for n in [0usize, 1, 3, 4, 5, 63, 1001] {
                let set: Vec<u64> = (0..n as u64).map(|i| mix64(i ^ 0xabcd)).collect();
                let expected: Vec<u64> = h
                    .mul
                    .iter()
                    .zip(&h.add)
                    .map(|(&a, &b)| set.iter().map(|&x| a.wrapping_mul(x).wrapping_add(b)).min().unwrap_or(u64::MAX))
                    .collect();
                assert_eq!(h.signature(&set), expected, "{functions} functions, {n} shingles");
                let mut portable = vec![u64::MAX; functions];
                signature_into(&h.mul, &h.add, &set, &mut portable);
                assert_eq!(portable, expected);
                #[cfg(target_arch = "x86_64")]
                if std::is_x86_feature_detected!("avx2") {
                    let mut avx2 = vec![u64::MAX; functions];
                    // SAFETY: the CPU has just been checked for AVX2.
                    unsafe { signature_avx2(&h.mul, &h.add, &set, &mut avx2) };
                    assert_eq!(avx2, expected, "AVX2, {functions} functions, {n} shingles");
                }
            }
        }
    }

    #[test]
    fn estimate_tracks_jaccard() {
        let h = MinHasher::new(84);
        let a: Vec<u64> = (0..2000).map(mix64).collect();
        let b: Vec<u64> = (500..2500).map(mix64).collect();
        // Jaccard = 1500 / 2500 = 0.6
        let est = estimate_jaccard(&h.signature(&a), &h.signature(&b));
        assert!((est - 0.6).abs() < 0.15, "estimate {est}");
        assert_eq!(estimate_jaccard(&h.signature(&a), &h.signature(&a)), 1.0);
    }

    #[test]
    fn estimates_are_unbiased_with_the_binomial_spread() {
        // 300 pairs of random sets of Jaccard 1/3: the mean estimate must sit on 1/3 and the
        // mean squared error near the binomial J(1-J)/84 of independent functions; a family
        // with correlated functions would show a larger spread.
        let h = MinHasher::new(84);
        let j = 1.0 / 3.0;
        let (mut sum, mut sq) = (0.0, 0.0);
        let pairs = 300u64;
        for p in 0..pairs {
            let base = p * 1_000_000;
            let a: Vec<u64> = (base..base + 1000).map(mix64).collect();
            let b: Vec<u64> = (base + 500..base + 1500).map(mix64).collect();
            let est = estimate_jaccard(&h.signature(&a), &h.signature(&b));
            sum += est;
            sq += (est - j) * (est - j);
        }
        let mean = sum / pairs as f64;
        let mse = sq / pairs as f64;
        let binomial = j * (1.0 - j) / 84.0;
        assert!((mean - j).abs() < 0.01, "mean {mean}");
        assert!(mse < 1.4 * binomial && mse > 0.6 * binomial, "mse {mse} vs {binomial}");
    }

    #[test]
    fn identical_sets_share_every_mega_shingle_and_band() {
        let h = MinHasher::new(84);
        let a: Vec<u64> = (0..300).map(mix64).collect();
        let sig = h.signature(&a);
        let supers = super_shingles(&sig, 6);
        assert_eq!(supers.len(), 6);
        assert_eq!(mega_shingles(&supers).len(), 15);
        assert_eq!(lsh_bands(&sig, 21, 4).len(), 21);
    }

    #[test]
    fn the_seed_probability_formula_holds() {
        // Seed 003: about 0.9 at p = 0.95 for 6 groups of 14.
        let p = mega_shingle_probability(0.95, 6, 14);
        assert!((0.85..0.95).contains(&p), "{p}");
        assert!(lsh_probability(0.9, 21, 4) > 0.99);
    }

    #[test]
    fn unrelated_sets_rarely_share_a_mega_shingle() {
        let h = MinHasher::new(84);
        let a: Vec<u64> = (0..300).map(mix64).collect();
        let b: Vec<u64> = (1000..1300).map(mix64).collect();
        let ma = mega_shingles(&super_shingles(&h.signature(&a), 6));
        let mb = mega_shingles(&super_shingles(&h.signature(&b), 6));
        assert!(ma.iter().all(|x| !mb.contains(x)));
    }
}
