//! Digits of a segment and their packing into one 64-bit code.
//!
//! Each of the 20 [`DIGIT_LETTERS`](super::DIGIT_LETTERS) gets one digit in `0..radix`:
//! its count in the segment minus the expected count (reference frame), divided by the
//! binomial standard deviation, cut at the quantiles of the standard normal
//! distribution, so that each digit value is about equally likely in general text (as
//! far as small integer counts allow). Only `+`, `*`, `sqrt` and comparisons are used:
//! all correctly rounded IEEE operations, so codes are identical on every platform.

use std::fmt;

/// `Φ⁻¹(k / radix)` for `k = 1 .. radix-1`: the cut points between digit values, in
/// standard deviations from the expected count.
pub(crate) fn normal_cuts(radix: u8) -> &'static [f64] {
    const R2: [f64; 1] = [0.0];
    const R4: [f64; 3] = [-0.6744897501960817, 0.0, 0.6744897501960817];
    const R8: [f64; 7] = [
        -1.1503493803760079,
        -0.6744897501960817,
        -0.31863936396437514,
        0.0,
        0.31863936396437514,
        0.6744897501960817,
        1.1503493803760079,
    ];
    const R10: [f64; 9] = [
        -1.2815515655446008,
        -0.8416212335729142,
        -0.5244005127080407,
        -0.2533471031357998,
        0.0,
        0.2533471031357998,
        0.5244005127080407,
        0.8416212335729144,
        1.2815515655446008,
    ];
    match radix {
        2 => &R2,
        4 => &R4,
        8 => &R8,
        _ => &R10,
    }
}

/// The radix actually used for a configured value: 2, 4, 8 or 10 (out-of-range values
/// are rounded up to the next supported one and capped at 10; `Params::validate`
/// refuses them before they get here).
pub(crate) fn effective_radix(radix: u8) -> u8 {
    match radix {
        0..=2 => 2,
        3..=4 => 4,
        5..=8 => 8,
        _ => 10,
    }
}

/// `10^20`: one more than the largest radix-10 value before folding.
const TEN_POW_20: u128 = 100_000_000_000_000_000_000;

/// The 20 digits of one segment, in the alphabetical order of the digit letters
/// (`b c d f g h j k l m n p q r s t w x y z`); displays as `"30120..."`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct DnaDigits(pub [u8; 20]);

impl DnaDigits {
    /// Pack the digits into one code, base `radix`, first letter most significant.
    ///
    /// Radix 2, 4 and 8 take 20, 40 and 60 bits exactly. Radix 10 needs up to 66.4
    /// bits: the value is computed in `u128` and folded to 64 bits as
    /// `low64 XOR high bits` (the high part is at most 5, so only the 3 lowest bits of
    /// the code absorb it). The fold is deterministic but not invertible: keep the
    /// digits (see [`super::dna_fingerprint_digits`]) to display radix-10 codes.
    pub fn pack(&self, radix: u8) -> u64 {
        let radix = effective_radix(radix);
        if radix == 10 {
            let value = self.0.iter().fold(0u128, |v, &d| v * 10 + u128::from(d.min(9)));
            fold_u128(value)
        } else {
            let bits = radix.trailing_zeros();
            let mask = u64::from(radix - 1);
            self.0.iter().fold(0u64, |v, &d| (v << bits) | (u64::from(d) & mask))
        }
    }

    /// Unpack a code of radix 2, 4 or 8; `None` for radix 10, whose fold lost the
    /// high bits.
    pub fn unpack(code: u64, radix: u8) -> Option<DnaDigits> {
        let radix = effective_radix(radix);
        if radix == 10 {
            return None;
        }
        let bits = radix.trailing_zeros();
        let mask = u64::from(radix - 1);
        let mut digits = [0u8; 20];
        for (i, d) in digits.iter_mut().enumerate() {
            let shift = bits * (19 - i as u32);
            // The mask keeps the value below 8, so the cast is lossless.
            *d = ((code >> shift) & mask) as u8;
        }
        Some(DnaDigits(digits))
    }
}

impl fmt::Display for DnaDigits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for &d in &self.0 {
            let c = char::from_digit(u32::from(d), 10).unwrap_or('?');
            fmt::Write::write_char(f, c)?;
        }
        Ok(())
    }
}

/// Render a code as its 20 digits (e.g. `"30120..."`); `None` for radix 10 (see
/// [`DnaDigits::pack`]).
pub fn render_code(code: u64, radix: u8) -> Option<String> {
    DnaDigits::unpack(code, radix).map(|d| d.to_string())
}

fn fold_u128(value: u128) -> u64 {
    // Truncations are the point of the fold: low 64 bits XOR the (tiny) high part.
    (value as u64) ^ ((value >> 64) as u64)
}

/// Call `f` with every code whose digits differ from `code`'s in exactly one digit by
/// ±1 (at most 40 codes for radix 2-8). For radix 10 the fold hides which of up to 6
/// values produced `code`, so the neighbours of each candidate value are produced
/// (up to 240 codes; a few more chance matches, documented in `docs/dna.md`).
pub fn for_each_near_code(code: u64, radix: u8, mut f: impl FnMut(u64)) {
    let radix = effective_radix(radix);
    if radix == 10 {
        for high in 0u64..=5 {
            let value = (u128::from(high) << 64) | u128::from(code ^ high);
            if value >= TEN_POW_20 {
                continue;
            }
            let mut power = 1u128;
            for _ in 0..20 {
                let digit = (value / power) % 10;
                if digit > 0 {
                    f(fold_u128(value - power));
                }
                if digit < 9 {
                    f(fold_u128(value + power));
                }
                power *= 10;
            }
        }
    } else {
        let bits = radix.trailing_zeros();
        let mask = u64::from(radix - 1);
        for i in 0..20 {
            let shift = bits * i;
            let digit = (code >> shift) & mask;
            if digit > 0 {
                f(code - (1 << shift));
            }
            if digit < mask {
                f(code + (1 << shift));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pack_unpack_round_trip_for_power_of_two_radixes() {
        let digits = DnaDigits([1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0, 1, 0, 1]);
        for radix in [2, 4, 8] {
            let code = digits.pack(radix);
            assert_eq!(DnaDigits::unpack(code, radix), Some(digits));
        }
        assert_eq!(digits.pack(2) >> 20, 0);
        let top = DnaDigits([7; 20]);
        assert_eq!(top.pack(8), (1u64 << 60) - 1);
        assert_eq!(DnaDigits([3; 20]).pack(4), (1u64 << 40) - 1);
    }

    #[test]
    fn radix_10_folds_the_high_bits() {
        let nines = DnaDigits([9; 20]);
        let value = TEN_POW_20 - 1;
        assert_eq!(nines.pack(10), (value as u64) ^ 5);
        let small = DnaDigits([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 2]);
        assert_eq!(small.pack(10), 42);
        assert_eq!(small.to_string(), "00000000000000000042");
        assert_eq!(DnaDigits::unpack(42, 10), None);
    }

    #[test]
    fn near_codes_differ_in_one_digit_by_one() {
        let digits = DnaDigits([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
        let code = digits.pack(4);
        let mut near = Vec::new();
        for_each_near_code(code, 4, |c| near.push(c));
        // Digits 0 and 3 have one neighbour, 1 and 2 have two: 5 * (1 + 2 + 2 + 1).
        assert_eq!(near.len(), 30);
        for c in near {
            let other = DnaDigits::unpack(c, 4).expect("radix 4");
            let diffs: Vec<i16> =
                digits.0.iter().zip(&other.0).map(|(&a, &b)| i16::from(a) - i16::from(b)).filter(|&d| d != 0).collect();
            assert!(diffs == [1] || diffs == [-1], "{diffs:?}");
        }
        let dec = DnaDigits([5; 20]);
        let mut near10 = Vec::new();
        for_each_near_code(dec.pack(10), 10, |c| near10.push(c));
        let mut one_up = dec;
        one_up.0[19] = 6;
        assert!(near10.contains(&one_up.pack(10)));
    }
}
