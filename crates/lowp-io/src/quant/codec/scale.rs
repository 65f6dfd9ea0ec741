//! Each block's scale: the schemes' formulas, the tensor scales of nvfp4, the bits stored
//! for a block and the value they stand for when decoded.

use super::element::Elem;
use super::options::ScaleType;
use super::source::{QuantSource, Scan};
use crate::quant::Scheme;
use crate::quant::divisor::{Divisor, SEG, SEG_BLOCKS, floor_log2, pow2_f32, pow2_f64};
use lowp::f8e4m3fn;
use lowp::prelude::*;

/// fp8-block's scale: `scale_inv = amax / 448`.
pub(super) const E4M3_MAX: f64 = 448.0;
/// nvfp4's per-tensor scale: `scale_2 = amax / (448 * 6)`.
pub(super) const NVFP4_TENSOR_DIVISOR: f64 = 448.0 * 6.0;
/// The largest E2M1 value, which nvfp4's block scales map each block's amax to.
pub(super) const E2M1_MAX: f64 = 6.0;

impl ScaleType {
    /// The scale of a block of finite positive `amax` under fp8's rule `amax / 448` times
    /// `factor` (1 for the rule itself, below 1 for [`ScaleSearch::Mse`](super::ScaleSearch::Mse)'s candidates),
    /// rounded to nearest in this type from the f64 quotient, then clamped to the type's
    /// smallest positive and largest finite value, so that a positive amax never gets scale 0
    /// nor infinity. Exact by the lemma of `source`: the f64 quotient cannot land on a tie of
    /// an f32 (25 bits), bf16 (9) or f16 (12) where the real quotient is not one.
    pub(super) fn fp8_scale(self, amax: f64, factor: f64) -> f32 {
        let q = amax / E4M3_MAX * factor;
        match self {
            ScaleType::F32 => (q as f32).clamp(pow2_f32(-149), f32::MAX),
            ScaleType::Bf16 => lowp::bf16::from_f64(q)
                .clamp(lowp::bf16::from_bits(1), lowp::bf16::MAX)
                .to_f32(),
            ScaleType::F16 => lowp::f16::from_f64(q)
                .clamp(lowp::f16::from_bits(1), lowp::f16::MAX)
                .to_f32(),
        }
    }
}

/// The largest finite `|x|` of `src`, as an exact f64 (0 when there is none; NaN and ±infinity
/// are ignored): the first pass that gives nvfp4's [`nvfp4_tensor_scale`].
///
/// ```
/// assert_eq!(lowp_io::quant::amax(&[1.0f32, -7.5, f32::INFINITY, f32::NAN]), 7.5);
/// ```
pub fn amax<S: QuantSource>(src: &[S]) -> f64 {
    lowp::vectorized(
        #[inline(always)]
        || src.chunks(SEG).map(|c| S::scan(c).amax).fold(0.0, f64::max),
    )
}

/// nvfp4's per-tensor `scale_2 = amax / (448 * 6)`, correctly rounded to f32 from the exact
/// quotient; `amax` is the tensor's largest finite magnitude ([`amax`]; its sign is ignored).
///
/// 0 for `amax` 0 (then every block scale is 0 and every element ±0). A positive `amax` never
/// gives 0: a quotient below the smallest f32 gives that smallest subnormal, 2^-149, so tiny
/// tensors keep their values. Beyond `f32::MAX` it saturates to `f32::MAX`; NaN gives NaN.
///
/// ```
/// use lowp_io::quant::nvfp4_tensor_scale;
/// assert_eq!(nvfp4_tensor_scale(2688.0), 1.0);
/// assert_eq!(nvfp4_tensor_scale(0.0), 0.0);
/// ```
pub fn nvfp4_tensor_scale(amax: f64) -> f32 {
    let a = amax.abs();
    if a.is_nan() || a == 0.0 {
        return a as f32;
    }
    // One f64 division then one rounding to f32: exact by the lemma of `source` (2688 has 5 bits).
    ((a / NVFP4_TENSOR_DIVISOR) as f32).clamp(pow2_f32(-149), f32::MAX)
}

/// nvfp4's per-tensor `scale_2` where a loader divides by its inverse (compressed-tensors'
/// `global_scale = 1 / scale_2`): the smallest power of two at or above the exact quotient
/// `amax / (448 * 6)`, so that the inverse is exact and the block scales stay within E4M3
/// (each block's `amax / (6 * scale_2)` is at most 448). Clamped to `2^-126 ..= 2^127`, whose
/// inverses are normal f32s; 1 for `amax` 0 or NaN (every block scale is then 0).
///
/// *Exactness.* With `2^f <= amax < 2^(f+1)` (`floor_log2`, exact) and `2688 = 1.3125 *
/// 2^11`, `2688 * 2^(f-12) < 2^f <= amax`, so the answer is `2^(f-11)` when `amax <= 2688 *
/// 2^(f-11)` and `2^(f-10)` otherwise; that product is exact in f64.
///
/// ```
/// use lowp_io::quant::nvfp4_pow2_tensor_scale;
/// assert_eq!(nvfp4_pow2_tensor_scale(2688.0), 1.0);
/// assert_eq!(nvfp4_pow2_tensor_scale(2688.0 * (1.0 + 2f64.powi(-30))), 2.0);
/// assert_eq!(nvfp4_pow2_tensor_scale(0.0), 1.0);
/// ```
pub fn nvfp4_pow2_tensor_scale(amax: f64) -> f32 {
    let a = amax.abs();
    if a.is_nan() || a == 0.0 {
        return 1.0;
    }
    let f = floor_log2(a);
    let k = if f - 10 <= -126 {
        -126
    } else if f - 11 >= 127 {
        127
    } else if a <= NVFP4_TENSOR_DIVISOR * pow2_f64(f - 11) {
        f - 11
    } else {
        f - 10
    };
    pow2_f32(k.clamp(-126, 127))
}

/// A block's scale: its stored bits and what the elements are divided by.
#[derive(Clone, Copy, Debug)]
pub(super) struct Choice {
    /// The E8M0 byte, the E4M3 byte or the f32 bits of the scale.
    pub(super) bits: u32,
    /// The divisor the elements use.
    pub(super) div: Divisor,
}

impl Choice {
    /// Scale 0 (a placeholder for buffers).
    pub(super) const ZERO: Choice = Choice {
        bits: 0,
        div: Divisor::Zero,
    };
}

/// The scale the scheme's formula gives a block of finite amax `amax` (`scale_type`: the
/// type of fp8 scales).
#[inline]
pub(super) fn spec_choice<T: Elem>(
    scheme: Scheme,
    amax: f64,
    scale_2: f32,
    scale_type: ScaleType,
) -> Choice {
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel => {
            if amax == 0.0 {
                return Choice {
                    bits: 0,
                    div: Divisor::Zero,
                };
            }
            let s = scale_type.fp8_scale(amax, 1.0);
            Choice {
                bits: s.to_bits(),
                div: Divisor::Div(s as f64),
            }
        }
        Scheme::Mxfp8 | Scheme::Mxfp4 => {
            // X = floor(log2(amax)) - emax, stored as X + 127 in 0..=254; zero amax gives 0.
            let biased = if amax == 0.0 {
                0
            } else {
                (floor_log2(amax) - T::EMAX + 127).clamp(0, 254)
            };
            mx_choice(biased)
        }
        Scheme::Nvfp4 => {
            if amax == 0.0 || scale_2 == 0.0 {
                return nv_choice(0, scale_2);
            }
            // amax / (6 * scale_2): 6 * scale_2 is exact in f64, the quotient exact by the
            // lemma; saturating at 448 when the caller's scale_2 is too small for this block.
            let s = f8e4m3fn::from_f64_saturating(amax / (E2M1_MAX * scale_2 as f64));
            // ModelOpt clamps a block scale at E4M3's smallest subnormal rather than letting a
            // small non-zero block round to scale 0 and vanish: every element then rounds to
            // its nearest, which is never worse than 0.
            nv_choice(s.to_bits().max(1) as u32, scale_2)
        }
    }
}

/// [`spec_choice`] of the blocks of one segment (at most [`SEG_BLOCKS`]), into `out`. nvfp4's
/// E4M3 block scales are rounded in one bulk conversion of the segment's quotients, which
/// takes lowp's vector path, rather than one scalar conversion per block of 16 values; the
/// result is the same, the rounding being the same saturating one.
#[inline(always)]
pub(super) fn spec_choices<T: Elem>(
    scheme: Scheme,
    scans: &[Scan],
    scale_2: f32,
    out: &mut [Choice],
) {
    debug_assert!(scans.len() == out.len() && out.len() <= SEG_BLOCKS);
    if scheme != Scheme::Nvfp4 || scale_2 == 0.0 {
        for (c, scan) in out.iter_mut().zip(scans) {
            *c = spec_choice::<T>(scheme, scan.amax, scale_2, ScaleType::F32);
        }
        return;
    }
    let divisor = E2M1_MAX * scale_2 as f64;
    let mut quotients = [0f64; SEG_BLOCKS];
    for (q, scan) in quotients.iter_mut().zip(scans) {
        *q = scan.amax / divisor;
    }
    let mut scales = [f8e4m3fn::ZERO; SEG_BLOCKS];
    scales.convert_from_f64_slice_saturating(&quotients);
    for ((c, scan), s) in out.iter_mut().zip(scans).zip(scales) {
        *c = if scan.amax == 0.0 {
            nv_choice(0, scale_2)
        } else {
            nv_choice(s.to_bits().max(1) as u32, scale_2)
        };
    }
}

/// The MX scale of biased exponent `biased` (0..=254).
#[inline]
pub(super) fn mx_choice(biased: i32) -> Choice {
    Choice {
        bits: biased as u32,
        div: Divisor::Pow2(biased - 127),
    }
}

/// The nvfp4 block scale of E4M3 bits `bits` (finite, non-negative).
#[inline]
pub(super) fn nv_choice(bits: u32, scale_2: f32) -> Choice {
    let s = f8e4m3fn::from_bits(bits as u8).to_f64();
    // Both factors are exact f64s of 4 and 24 bits: the product is exact.
    let d = s * scale_2 as f64;
    Choice {
        bits,
        div: if d == 0.0 {
            Divisor::Zero
        } else {
            Divisor::Div(d)
        },
    }
}

/// The stored scale bits of a block: the choice's, or the NaN/infinity marks of a non-finite
/// block (see the documentation of `encode`).
pub(super) fn stored_bits(scheme: Scheme, choice: Choice, scan: Scan) -> u32 {
    if scan.nonfinite == 0 {
        return choice.bits;
    }
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel if scan.nan => f32::NAN.to_bits(),
        Scheme::Fp8Block | Scheme::Fp8Channel => f32::INFINITY.to_bits(),
        Scheme::Mxfp8 | Scheme::Mxfp4 => 0xff,
        Scheme::Nvfp4 => 0x7f,
    }
}

/// What a block's elements are multiplied by, exactly in f64, for its stored scale `bits`
/// ([`scale_bits`]): the fp8 scale itself, `2^(s - 127)` for an E8M0 byte (NaN for 255), or
/// nvfp4's E4M3 scale times `second`.
pub(super) fn scale_factor_f64(scheme: Scheme, bits: u32, second: f64) -> f64 {
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel => f32::from_bits(bits) as f64,
        Scheme::Mxfp8 | Scheme::Mxfp4 if bits == 0xff => f64::NAN,
        Scheme::Mxfp8 | Scheme::Mxfp4 => pow2_f64(bits as i32 - 127),
        Scheme::Nvfp4 => f8e4m3fn::from_bits(bits as u8).to_f64() * second,
    }
}

/// The stored bits of block `i`'s scale in a row of scales as the codec lays them out: a
/// little-endian f32 for fp8, one byte otherwise.
#[inline(always)]
pub(super) fn scale_bits(scheme: Scheme, srow: &[u8], i: usize) -> u32 {
    if scheme.float_scales() {
        u32::from_le_bytes([
            srow[4 * i],
            srow[4 * i + 1],
            srow[4 * i + 2],
            srow[4 * i + 3],
        ])
    } else {
        srow[i] as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lowp::f4e2m1fn;

    #[test]
    fn a_segments_nvfp4_scales_are_each_blocks() {
        // Block amaxes from every binade of f32 and beyond (f64 sources), E4M3 ties and their
        // neighbours, zero; tensor scales from tiny to large: the segment's bulk rounding gives
        // each block what the block's own scalar rounding gives.
        let mut state = 5u64;
        let mut amaxes: Vec<f64> = (0..4000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                f32::from_bits((state >> 33) as u32 & 0x7f7f_ffff) as f64
            })
            .collect();
        for bits in 0..0x7eu8 {
            let lo = f8e4m3fn::from_bits(bits).to_f64();
            let hi = f8e4m3fn::from_bits(bits + 1).to_f64();
            let tie = (lo + hi) / 2.0 * 6.0;
            amaxes.extend([tie, tie.next_up(), tie.next_down(), lo * 6.0]);
        }
        amaxes.extend([0.0, 1e300, f64::MAX, 5e-324]);
        for scale_2 in [1.0f32, 2f32.powi(-149), 3.7e-3, 0.5, 1e30] {
            for blocks in amaxes.chunks(SEG_BLOCKS) {
                let scans: Vec<Scan> = blocks
                    .iter()
                    .map(|&amax| Scan {
                        amax,
                        ..Scan::default()
                    })
                    .collect();
                let mut got = vec![Choice::ZERO; blocks.len()];
                spec_choices::<f4e2m1fn>(Scheme::Nvfp4, &scans, scale_2, &mut got);
                for (c, &amax) in got.iter().zip(blocks) {
                    let want =
                        spec_choice::<f4e2m1fn>(Scheme::Nvfp4, amax, scale_2, ScaleType::F32);
                    assert_eq!(
                        (c.bits, c.div),
                        (want.bits, want.div),
                        "amax {amax:e} scale_2 {scale_2:e}"
                    );
                }
            }
        }
    }

    #[test]
    fn nvfp4_pow2_tensor_scale_is_the_least_power_of_two_at_or_above() {
        // Against a search from 2^-126 up with exact comparisons, around every binade.
        let least = |a: f64| {
            (-126..=127)
                .find(|&k| pow2_f64(k) * NVFP4_TENSOR_DIVISOR >= a)
                .unwrap_or(127)
        };
        for e in -1074..1024 {
            let p = f64::from_bits(if e < -1022 {
                1u64 << (e + 1074)
            } else {
                ((e + 1023) as u64) << 52
            });
            for a in [
                p,
                p * 1.3125,
                (p * 1.3125).next_up(),
                (p * 1.3125).next_down(),
                p * 1.9,
            ] {
                if a.is_finite() && a > 0.0 {
                    assert_eq!(nvfp4_pow2_tensor_scale(a), pow2_f32(least(a)), "{a:e}");
                }
            }
        }
        assert_eq!(nvfp4_pow2_tensor_scale(f64::NAN), 1.0);
    }

    #[test]
    fn nvfp4_tensor_scale_is_clamped_never_zero() {
        assert_eq!(nvfp4_tensor_scale(1e-300), pow2_f32(-149));
        assert_eq!(nvfp4_tensor_scale(1e300), f32::MAX);
        assert!(nvfp4_tensor_scale(f64::NAN).is_nan());
        assert_eq!(nvfp4_tensor_scale(-2688.0), 1.0);
    }
}
