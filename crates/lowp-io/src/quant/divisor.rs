//! What an element of a block is worth, and the segments a row's blocks are handled in: what
//! the codec and its f32 routes (`nearest_f32`) share.

/// Elements of a row handled at a time by the row-wise schemes (32 MX or 64 nvfp4 blocks):
/// small enough for stack buffers and L1, large enough to amortise lowp's dispatch.
pub(super) const SEG: usize = 1024;

/// Blocks of a row-wise segment.
pub(super) const SEG_BLOCKS: usize = SEG / 16;

/// What an element of a block is worth: `x̂ = q * step`, and `q = round(x / step)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Divisor {
    /// The scale is zero: every element is ±0 with its value's sign (a NaN stays NaN);
    /// nothing is divided by zero.
    Zero,
    /// The scale is `2^e` (MX): `q = round(x * 2^-e)`.
    Pow2(i32),
    /// The scale is this positive finite f64 of at most 28 significant bits: `q = round(x /
    /// d)` from the f64 quotient (exact, by the lemma of the codec's `source` module).
    Div(f64),
}

impl Divisor {
    /// The value of one unit of an element.
    pub(super) fn step(self) -> f64 {
        match self {
            Divisor::Zero => 0.0,
            Divisor::Pow2(e) => pow2_f64(e),
            Divisor::Div(d) => d,
        }
    }
}

/// An element under a zero scale: ±0 with the sign of `x`, infinities included (never
/// `inf * 0`, whose NaN's sign is the CPU's choice); a NaN stays itself.
#[inline]
pub fn zeroed(x: f64) -> f64 {
    if x.is_nan() { x } else { 0f64.copysign(x) }
}

/// `2^k` as an f64, for `-1022 <= k <= 1023`.
#[inline]
pub(super) fn pow2_f64(k: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// `2^k` as an f32 (subnormal below 2^-126), for `-149 <= k <= 127`.
#[inline]
pub(super) fn pow2_f32(k: i32) -> f32 {
    debug_assert!((-149..=127).contains(&k));
    if k >= -126 {
        f32::from_bits(((k + 127) as u32) << 23)
    } else {
        f32::from_bits(1 << (k + 149))
    }
}

/// `floor(log2(x))` for a positive finite `x`, exactly (subnormals included).
#[inline]
pub(super) fn floor_log2(x: f64) -> i32 {
    let bits = x.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i32;
    if field == 0 {
        // Subnormal: the leading one of the mantissa sets the exponent.
        -1074 + 63 - (bits & ((1 << 52) - 1)).leading_zeros() as i32
    } else {
        field - 1023
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_log2_is_exact_across_the_range() {
        // 2^k by halving and doubling 1, exact down to the smallest subnormal (`powi` is not).
        let pow2 =
            |k: i32| (0..k.unsigned_abs()).fold(1f64, |p, _| if k < 0 { p / 2.0 } else { p * 2.0 });
        for k in -1074..=1023 {
            let x = pow2(k);
            assert_eq!(floor_log2(x), k, "2^{k}");
            if k > -1074 {
                assert_eq!(floor_log2(x * 1.5), k, "1.5 * 2^{k}");
            }
            if k > -1022 {
                assert_eq!(floor_log2(x.next_down()), k - 1, "below 2^{k}");
            }
        }
    }

    #[test]
    fn powers_of_two_in_f32_reach_the_subnormals() {
        for k in -149i32..=127 {
            let want =
                (0..k.unsigned_abs()).fold(1f64, |p, _| if k < 0 { p / 2.0 } else { p * 2.0 });
            assert_eq!(pow2_f32(k) as f64, want, "2^{k}");
        }
    }
}
