//! f16 and bf16 to and from f32, written out for these two formats: the conversions behind
//! `to_f32`, `from_f32` and the arithmetic of [`f16`](crate::f16) and [`bf16`](crate::bf16).
//!
//! The engine in [`crate::round`] gives the same bits for every format, but it is written over a
//! `&Format` whose constants fold away only when the optimizer runs and overflow checks are off.
//! Crates that depend on lowp are mostly tested in builds where neither holds (every `dev` and
//! `test` profile checks overflow; `dev` does not optimize), and there the engine costs several
//! times what the `half` crate's conversions cost. These functions are what the engine computes,
//! with the format's constants written in: a few integer operations on one branch, no call.
//! Each `+` and `-` below is proven not to wrap (a comment says why), so overflow checks never
//! fire and cost one predictable branch where they are compiled in; each shift amount is below
//! 32. Being `const`, they also serve the `_const` conversions. The tests compare them with the
//! engine on every input: all 2^32 f32s and all 65,536 patterns of each format.

/// f32 bits rounded to nearest even into f16 bits.
///
/// * Normal range (from 2^-14 up to the midpoint above MAX): add just under half of the 13
///   dropped bits plus the kept parity bit, shift, and rebias the exponent (127 - 15 = 112);
///   a mantissa carry moves into the exponent field as it should.
/// * Below 2^-14: the significand shifted down to f16's quantum 2^-24 with the same rounding;
///   at most 2^-25 (half the smallest subnormal, a tie that goes to the even zero) gives zero.
/// * From the midpoint above MAX, 65520, to infinity: infinity (65520 is a tie, and MAX's
///   significand is odd).
/// * NaN: the sign, the quiet bit and the top 9 payload bits, as F16C's `vcvtps2ph` gives it.
#[inline(always)]
pub(crate) const fn f16_from_f32_bits(x: u32) -> u16 {
    let sign = ((x >> 16) & 0x8000) as u16;
    let abs = x & 0x7fff_ffff;
    if abs >= 0x3880_0000 {
        if abs < 0x477f_f000 {
            // `abs + 0x1000 < 2^32`; the shifted sum is at least 0x1c400 (2^-14's field), so
            // subtracting the rebias 112 << 10 leaves at least 0x400.
            let rounded = (abs + 0x0fff + ((abs >> 13) & 1)) >> 13;
            return sign | (rounded - 0x1_c000) as u16;
        }
        if abs <= 0x7f80_0000 {
            return sign | 0x7c00;
        }
        return sign | 0x7e00 | ((abs >> 13) & 0x01ff) as u16;
    }
    if abs <= 0x3300_0000 {
        return sign;
    }
    // 2^-25 < |x| < 2^-14: a normal f32 with exponent field 102..=112, so its significand
    // `m < 2^24` moves down by 14..=24 bits to the quantum 2^-24; `m + 2^23 < 2^32`.
    let shift = 126 - (abs >> 23);
    let m = (abs & 0x007f_ffff) | 0x0080_0000;
    let rounded = (m + (1 << (shift - 1)) - 1 + ((m >> shift) & 1)) >> shift;
    sign | rounded as u16
}

/// f16 bits widened to f32 bits, exactly. A NaN keeps its sign and payload and is quiet, as
/// F16C's `vcvtph2ps` gives it.
#[inline(always)]
pub(crate) const fn f16_to_f32_bits(h: u16) -> u32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let abs = (h & 0x7fff) as u32;
    if abs >= 0x0400 {
        if abs < 0x7c00 {
            // Rebias the exponent by 112: `abs << 13 < 2^28`, no carry.
            return sign | ((abs << 13) + 0x3800_0000);
        }
        if abs == 0x7c00 {
            return sign | 0x7f80_0000;
        }
        return sign | 0x7fc0_0000 | ((abs & 0x03ff) << 13);
    }
    if abs == 0 {
        return sign;
    }
    // A subnormal `abs * 2^-24`, `abs < 2^10`: its top bit at `31 - lz` (`lz` in 22..=31)
    // gives the f32 exponent field `(31 - lz) - 24 + 127 = 134 - lz`; the bits below it, moved
    // up to f32's 23-bit mantissa, are the fraction.
    let lz = abs.leading_zeros();
    sign | ((134 - lz) << 23) | ((abs << (lz - 8)) & 0x007f_ffff)
}

/// f32 bits rounded to nearest even into bf16 bits: bf16 is the top half of an f32, so one
/// rounding shift of the whole pattern does every case (subnormals line up, a carry out of MAX
/// gives infinity, an infinity stays one). A NaN becomes the canonical quiet NaN of its sign.
#[inline(always)]
pub(crate) const fn bf16_from_f32_bits(x: u32) -> u16 {
    // Both results, then a choice without a branch, which lets loops over slices vectorize.
    // The sum wraps only for a NaN (above 0xffff_7fff), whose rounded bits are not used.
    let rounded = (x.wrapping_add(0x7fff + ((x >> 16) & 1)) >> 16) as u16;
    let nan = ((x >> 16) & 0x8000) as u16 | 0x7fc0;
    if x & 0x7fff_ffff > 0x7f80_0000 {
        nan
    } else {
        rounded
    }
}

/// bf16 bits widened to f32 bits: a shift, which keeps every bit (a signalling NaN too).
#[inline(always)]
pub(crate) const fn bf16_to_f32_bits(b: u16) -> u32 {
    (b as u32) << 16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::formats;
    use crate::round;

    #[test]
    fn widening_equals_the_engine_on_every_pattern() {
        for h in 0..=u16::MAX {
            let engine = round::to_f32_bits(&formats::F16, h as u32);
            assert_eq!(f16_to_f32_bits(h), engine, "f16 {h:#06x}");
            let engine = round::to_f32_bits(&formats::BF16, h as u32);
            assert_eq!(bf16_to_f32_bits(h), engine, "bf16 {h:#06x}");
        }
    }

    /// All 2^32 f32 inputs, in both formats (a few seconds optimized).
    #[test]
    fn rounding_equals_the_engine_on_every_f32() {
        for x in 0..=u32::MAX {
            let f = f32::from_bits(x);
            let ours = f16_from_f32_bits(x);
            let engine = round::from_f32_nearest(&formats::F16, f, false);
            assert!(
                ours as u32 == engine,
                "f16 of {x:#010x}: {ours:#06x} {engine:#06x}"
            );
            let ours = bf16_from_f32_bits(x);
            let engine = round::from_f32_nearest(&formats::BF16, f, false);
            assert!(
                ours as u32 == engine,
                "bf16 of {x:#010x}: {ours:#06x} {engine:#06x}"
            );
        }
    }
}
