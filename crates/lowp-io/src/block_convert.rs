//! The conversion of one block of elements between two [`FloatType`]s.
//!
//! A block arrives as bytes in the machine's byte order, in a buffer aligned for its element
//! type; [`convert_block`] views it as a typed slice, converts it on lowp's bulk paths and
//! measures the result with [`FitStats`]. The dispatch is two-level (the source type, then the
//! target type, each f64, f32 or `lowp::with_format!`) over one generic body, so no code is
//! written per pair of types.

use crate::float_type::{FloatType, Kind};
use lowp::LowpFloat;
use lowp::fit::{FitSource, FitStats};
use lowp::prelude::LowpSliceExt;

/// How a block is rounded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rounding {
    /// Overflow saturates to ±MAX instead of becoming ±inf or NaN.
    pub saturate: bool,
    /// Each value is multiplied by this power of two before rounding (1: no scaling).
    pub scale: f64,
}

impl Rounding {
    /// Round to nearest even, unscaled, overflow to ±inf (or NaN where the type has no
    /// infinity).
    pub const NEAREST: Rounding = Rounding {
        saturate: false,
        scale: 1.0,
    };
}

/// One of the element types, with the conversions to the others.
///
/// The conversion from `S` to `D` is `D::store(src, dst)`, which asks `S` for the direction
/// `D` needs: to a lowp format, to f32 or to f64. Each direction is a bulk slice method of
/// lowp (or a plain cast between f32 and f64).
trait Elem: Copy + Default + bytemuck::Pod + FitSource {
    /// Whether every value is an f32 (widening to f32 is exact).
    const EXACT_IN_F32: bool;
    /// The smallest positive value.
    const SMALLEST: f64;
    /// `src` rounded into the lowp format `D`.
    fn to_lowp<D: LowpFloat>(src: &[Self], dst: &mut [D], saturate: bool);
    /// `src` as f32s (exact but from f64).
    fn to_f32(src: &[Self], dst: &mut [f32], saturate: bool);
    /// `src` as f64s (always exact).
    fn to_f64(src: &[Self], dst: &mut [f64]);
    /// Stores `src` in `dst` (this type), rounding to nearest even.
    fn store<S: Elem>(src: &[S], dst: &mut [Self], saturate: bool);
    /// What storing `src` as `dst` cost, the stored values holding `src * scale`.
    fn measure<S: Elem>(src: &[S], dst: &[Self], scale: f64) -> FitStats;
}

impl Elem for f32 {
    const EXACT_IN_F32: bool = true;
    const SMALLEST: f64 = f32::from_bits(1) as f64;
    fn to_lowp<D: LowpFloat>(src: &[f32], dst: &mut [D], saturate: bool) {
        if saturate {
            dst.convert_from_f32_slice_saturating(src);
        } else {
            dst.convert_from_f32_slice(src);
        }
    }
    fn to_f32(src: &[f32], dst: &mut [f32], _: bool) {
        dst.copy_from_slice(src);
    }
    fn to_f64(src: &[f32], dst: &mut [f64]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = s as f64;
        }
    }
    fn store<S: Elem>(src: &[S], dst: &mut [f32], saturate: bool) {
        S::to_f32(src, dst, saturate);
    }
    fn measure<S: Elem>(src: &[S], dst: &[f32], scale: f64) -> FitStats {
        FitStats::measure(src, dst, scale)
    }
}

impl Elem for f64 {
    const EXACT_IN_F32: bool = false;
    const SMALLEST: f64 = 5e-324;
    fn to_lowp<D: LowpFloat>(src: &[f64], dst: &mut [D], saturate: bool) {
        if saturate {
            dst.convert_from_f64_slice_saturating(src);
        } else {
            dst.convert_from_f64_slice(src);
        }
    }
    fn to_f32(src: &[f64], dst: &mut [f32], saturate: bool) {
        // `as` rounds to nearest even and overflows to ±inf, as the bulk paths do.
        let max = f32::MAX as f64;
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = if saturate {
                s.clamp(-max, max) as f32
            } else {
                s as f32
            };
        }
    }
    fn to_f64(src: &[f64], dst: &mut [f64]) {
        dst.copy_from_slice(src);
    }
    fn store<S: Elem>(src: &[S], dst: &mut [f64], _: bool) {
        S::to_f64(src, dst);
    }
    fn measure<S: Elem>(src: &[S], _: &[f64], _: f64) -> FitStats {
        // Every value is stored exactly in f64.
        exact_stats(src)
    }
}

/// [`Elem`] for the lowp formats whose every storage pattern is a value (the ones a block's
/// bytes can be viewed as).
macro_rules! lowp_elem {
    ($t:ident, $v:ident, $s:ty, $c:ty, $sign:ident, $values:ident, low_bits) => {};
    ($t:ident, $v:ident, $s:ty, $c:ty, $sign:ident, $values:ident, all_bits) => {
        impl Elem for lowp::$t {
            const EXACT_IN_F32: bool = true;
            const SMALLEST: f64 = lowp::$t::MIN_POSITIVE_SUBNORMAL.to_f64_const();
            fn to_lowp<D: LowpFloat>(src: &[Self], dst: &mut [D], saturate: bool) {
                if saturate {
                    dst.convert_from_slice_saturating(src);
                } else {
                    dst.convert_from_slice(src);
                }
            }
            fn to_f32(src: &[Self], dst: &mut [f32], _: bool) {
                src.convert_to_f32_slice(dst);
            }
            fn to_f64(src: &[Self], dst: &mut [f64]) {
                src.convert_to_f64_slice(dst);
            }
            fn store<S: Elem>(src: &[S], dst: &mut [Self], saturate: bool) {
                S::to_lowp(src, dst, saturate);
            }
            fn measure<S: Elem>(src: &[S], dst: &[Self], scale: f64) -> FitStats {
                FitStats::measure(src, dst, scale)
            }
        }
    };
}

lowp::for_each_format!(lowp_elem, rows);

/// The statistics of values stored exactly (widened): counts of NaN and infinite inputs, every
/// finite value exact, no error.
fn exact_stats<S: Elem>(src: &[S]) -> FitStats {
    let mut s = FitStats {
        elements: src.len() as u64,
        ..FitStats::default()
    };
    for &x in src {
        let x = x.exact();
        if x.is_nan() {
            s.nan_inputs += 1;
        } else if x.is_infinite() {
            s.infinite_inputs += 1;
        } else {
            s.exact += 1;
            s.amax = s.amax.max(x.abs());
        }
    }
    s
}

/// Values per scratch block of the scaled path (on the stack).
const SCRATCH: usize = 512;

/// Converts `src` (elements of `from`, machine byte order) into `dst` (elements of `to`) and
/// measures what it cost. `src` and `dst` must hold the same whole number of elements and be
/// aligned for their types, as [`Block`](crate::files::Block) buffers are.
pub fn convert_block(
    from: FloatType,
    to: FloatType,
    src: &[u8],
    dst: &mut [u8],
    rounding: Rounding,
) -> FitStats {
    match from.kind() {
        Kind::F64 => with_source::<f64>(to, src, dst, rounding),
        Kind::F32 => with_source::<f32>(to, src, dst, rounding),
        Kind::Lowp(format) => lowp::with_format!(&format, S where all_bits => {
            with_source::<S>(to, src, dst, rounding)
        }, else => unreachable!("{} is a whole-byte format", format.name)),
    }
}

/// [`convert_block`] with the source type known.
fn with_source<S: Elem>(to: FloatType, src: &[u8], dst: &mut [u8], rounding: Rounding) -> FitStats {
    let src: &[S] = bytemuck::cast_slice(src);
    match to.kind() {
        Kind::F64 => typed(src, bytemuck::cast_slice_mut::<u8, f64>(dst), rounding),
        Kind::F32 => typed(src, bytemuck::cast_slice_mut::<u8, f32>(dst), rounding),
        Kind::Lowp(format) => lowp::with_format!(&format, D where all_bits => {
            typed(src, bytemuck::cast_slice_mut::<u8, D>(dst), rounding)
        }, else => unreachable!("{} is a whole-byte format", format.name)),
    }
}

/// Converts and measures typed slices.
fn typed<S: Elem, D: Elem>(src: &[S], dst: &mut [D], rounding: Rounding) -> FitStats {
    if rounding.scale == 1.0 {
        D::store(src, dst, rounding.saturate);
    } else if S::EXACT_IN_F32 && D::SMALLEST >= SCALES_IN_F32_ABOVE {
        // Widen exactly to f32, multiply by the power of two, round: the product is exact
        // unless it falls below f32's normal range, 2^-126, where `D` rounds it to zero
        // whether f32 rounded it first or not (its smallest value is at least 2^-124, so
        // half of it lies above every such product and its f32 rounding).
        let mut wide = [0f32; SCRATCH];
        let scale = rounding.scale as f32;
        for (s, d) in src.chunks(SCRATCH).zip(dst.chunks_mut(SCRATCH)) {
            let wide = &mut wide[..s.len()];
            S::to_f32(s, wide, false);
            for x in wide.iter_mut() {
                *x *= scale;
            }
            D::store(wide, d, rounding.saturate);
        }
    } else {
        // Widen exactly, multiply by the power of two (exact unless the product leaves the
        // wide type's normal range, where the narrow formats have nothing but zero), round.
        let mut wide = [0f64; SCRATCH];
        for (s, d) in src.chunks(SCRATCH).zip(dst.chunks_mut(SCRATCH)) {
            let wide = &mut wide[..s.len()];
            S::to_f64(s, wide);
            for x in wide.iter_mut() {
                *x *= rounding.scale;
            }
            D::store(wide, d, rounding.saturate);
        }
    }
    D::measure(src, dst, rounding.scale)
}

/// The smallest positive value a target type may have for [`typed`] to scale in f32 (see
/// there).
const SCALES_IN_F32_ABOVE: f64 = 1.0 / (1u128 << 124) as f64;

/// The largest finite magnitude of a block of `from` elements (see [`lowp::fit::amax`]).
pub fn block_amax(from: FloatType, src: &[u8]) -> f64 {
    match from.kind() {
        // The codec's scan, an integer maximum over the bits of the source type itself, is
        // faster than lowp's generic one, which widens every value to f64 first.
        Kind::F64 => crate::quant::amax::<f64>(bytemuck::cast_slice(src)),
        Kind::F32 => crate::quant::amax::<f32>(bytemuck::cast_slice(src)),
        Kind::Lowp(format) => lowp::with_format!(&format, T where all_bits => {
            lowp::fit::amax::<T>(bytemuck::cast_slice(src))
        }, else => unreachable!("{} is a whole-byte format", format.name)),
    }
}

/// The per-tensor scale for storing values with largest magnitude `amax` in the FP8 type `to`:
/// lowp's [`power_of_two_scale`](lowp::fit::power_of_two_scale), kept within `2^-126..=2^126`
/// so that the scale and its inverse (the number stored to restore the values) are normal
/// f32s.
pub fn fp8_scale(to: FloatType, amax: f64) -> f64 {
    let s = match to.kind() {
        Kind::Lowp(format) if to.is_fp8() => {
            lowp::with_format!(&format, T => lowp::fit::power_of_two_scale::<T>(amax))
        }
        _ => 1.0,
    };
    s.clamp(2f64.powi(-126), 2f64.powi(126))
}

/// What `NAME.scale` stores for a tensor multiplied by `scale` ([`fp8_scale`]) before
/// rounding: the inverse, which restores the values (`NAME * NAME.scale`). Exact: both are
/// powers of two within f32's normal range. The report shows this number too, so that it
/// reads the same as the file.
pub fn stored_scale(scale: f64) -> f32 {
    (1.0 / scale) as f32
}

/// Reverses the byte order of each `width`-byte element of `bytes` in place (big-endian NumPy
/// data on a little-endian machine, and the other way round).
pub fn swap_bytes(bytes: &mut [u8], width: usize) {
    match width {
        2 => bytemuck::cast_slice_mut::<u8, u16>(bytes)
            .iter_mut()
            .for_each(|x| *x = x.swap_bytes()),
        4 => bytemuck::cast_slice_mut::<u8, u32>(bytes)
            .iter_mut()
            .for_each(|x| *x = x.swap_bytes()),
        8 => bytemuck::cast_slice_mut::<u8, u64>(bytes)
            .iter_mut()
            .for_each(|x| *x = x.swap_bytes()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lowp::{bf16, f8e4m3fn, f8e5m2, f16};

    /// `values` as the bytes of `t`, rounded with the scalar conversion.
    fn encode(t: FloatType, values: &[f64]) -> Vec<u8> {
        let mut out = Vec::new();
        for &v in values {
            match t {
                FloatType::F64 => out.extend(v.to_le_bytes()),
                FloatType::F32 => out.extend((v as f32).to_le_bytes()),
                FloatType::F16 => out.extend(f16::from_f64(v).to_bits().to_le_bytes()),
                FloatType::BF16 => out.extend(bf16::from_f64(v).to_bits().to_le_bytes()),
                FloatType::F8E4M3FN => out.push(f8e4m3fn::from_f64(v).to_bits()),
                FloatType::F8E5M2 => out.push(f8e5m2::from_f64(v).to_bits()),
                _ => unreachable!("a type the tests do not encode: {t:?}"),
            }
        }
        out
    }

    /// An 8-byte aligned copy of `bytes`.
    fn aligned(bytes: &[u8]) -> Vec<u64> {
        let mut v = vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut v)[..bytes.len()].copy_from_slice(bytes);
        v
    }

    #[test]
    fn every_pair_matches_the_scalar_conversion() {
        let values = [0.0, -1.5, 0.1, 3.0e-3, 300.0, 1e-9, -65504.0, 7e4, 1e40];
        for from in FloatType::ALL {
            let src_bytes = encode(from, &values);
            let src = aligned(&src_bytes);
            let src = &bytemuck::cast_slice::<u64, u8>(&src)[..src_bytes.len()];
            // The exact values of the source, as the scalar conversions see them.
            let exact: Vec<f64> = (0..values.len())
                .map(|i| decode(from, &src_bytes[i * from.size()..]))
                .collect();
            for to in FloatType::ALL {
                let mut dst = vec![0u64; values.len()];
                let dst =
                    &mut bytemuck::cast_slice_mut::<u64, u8>(&mut dst)[..values.len() * to.size()];
                let rounding = Rounding {
                    saturate: false,
                    scale: 1.0,
                };
                let stats = convert_block(from, to, src, dst, rounding);
                assert_eq!(stats.elements, values.len() as u64);
                assert_eq!(
                    dst,
                    &encode(to, &exact)[..],
                    "{} -> {}",
                    from.name(),
                    to.name()
                );
            }
        }
    }

    /// The value of the first element of `bytes`, of type `t`.
    fn decode(t: FloatType, bytes: &[u8]) -> f64 {
        let b2 = || u16::from_le_bytes([bytes[0], bytes[1]]);
        match t {
            FloatType::F64 => f64::from_le_bytes(bytes[..8].try_into().unwrap()),
            FloatType::F32 => f32::from_le_bytes(bytes[..4].try_into().unwrap()) as f64,
            FloatType::F16 => f16::from_bits(b2()).to_f64(),
            FloatType::BF16 => bf16::from_bits(b2()).to_f64(),
            FloatType::F8E4M3FN => f8e4m3fn::from_bits(bytes[0]).to_f64(),
            FloatType::F8E5M2 => f8e5m2::from_bits(bytes[0]).to_f64(),
            _ => unreachable!("a type the tests do not decode: {t:?}"),
        }
    }

    #[test]
    fn scaled_fp8_restores_and_saturates() {
        let values = [1000.0f32, -3.0, 0.5];
        let src = aligned(bytemuck::cast_slice(&values));
        let src = &bytemuck::cast_slice::<u64, u8>(&src)[..12];
        let scale = fp8_scale(FloatType::F8E4M3FN, 1000.0);
        assert_eq!(scale, 0.25);
        let mut dst = [0u8; 3];
        let rounding = Rounding {
            saturate: false,
            scale,
        };
        let stats = convert_block(FloatType::F32, FloatType::F8E4M3FN, src, &mut dst, rounding);
        let restored: Vec<f64> = dst
            .iter()
            .map(|&b| f8e4m3fn::from_bits(b).to_f64() / scale)
            .collect();
        assert_eq!(restored, [1024.0, -3.0, 0.5]);
        assert_eq!(stats.overflowed, 0);
        let unscaled = Rounding {
            saturate: true,
            scale: 1.0,
        };
        let stats = convert_block(FloatType::F32, FloatType::F8E4M3FN, src, &mut dst, unscaled);
        assert_eq!(f8e4m3fn::from_bits(dst[0]), f8e4m3fn::MAX);
        assert_eq!(stats.overflowed, 1);
    }

    #[test]
    fn scaled_conversions_round_the_exact_product_once() {
        // Every f16 and bf16 pattern, and f32s from every binade (with subnormals, NaN and
        // infinities), times powers of two from 2^-126 to 2^126 (products far below f32's
        // normal range included), into the FP8 types (`--fp8-scale`) and the 16-bit ones (bf16
        // reaches below 2^-126, f16 does not), both saturating and not: each element must be
        // the scalar f64 engine's rounding of the exact product.
        let mut sources: Vec<(FloatType, Vec<u8>)> = [FloatType::F16, FloatType::BF16]
            .into_iter()
            .map(|t| {
                let bits: Vec<u8> = (0..=u16::MAX).flat_map(u16::to_le_bytes).collect();
                (t, bits)
            })
            .collect();
        let mut state = 11u64;
        let mut f32s: Vec<u8> = (0..40_000)
            .flat_map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                ((state >> 32) as u32).to_le_bytes()
            })
            .collect();
        // Just beside ties of bf16's subnormals once multiplied by 2^-126: the products lie
        // 2^-152 from a tie, below f32's grid there (2^-149), so rounding them to f32 first
        // would make them ties and round them to even, the wrong way for half of them.
        for k in 0..8 {
            for side in [1.0f32, -1.0] {
                for sign in [1.0f32, -1.0] {
                    let x = sign * ((k as f32 + 0.5) * 2f32.powi(-7) + side * 2f32.powi(-26));
                    f32s.extend(x.to_le_bytes());
                }
            }
        }
        sources.push((FloatType::F32, f32s));
        for (from, src_bytes) in &sources {
            let n = src_bytes.len() / from.size();
            let src = aligned(src_bytes);
            let src = &bytemuck::cast_slice::<u64, u8>(&src)[..src_bytes.len()];
            let exact: Vec<f64> = (0..n)
                .map(|i| decode(*from, &src_bytes[i * from.size()..]))
                .collect();
            for e in [-126, -100, -40, -9, -1, 3, 17, 60, 126] {
                let scale = 2f64.powi(e);
                for saturate in [false, true] {
                    for to in [
                        FloatType::F16,
                        FloatType::BF16,
                        FloatType::F8E4M3FN,
                        FloatType::F8E5M2,
                    ] {
                        let mut dst = vec![0u64; (n * to.size()).div_ceil(8)];
                        let dst =
                            &mut bytemuck::cast_slice_mut::<u64, u8>(&mut dst)[..n * to.size()];
                        convert_block(*from, to, src, dst, Rounding { saturate, scale });
                        let products: Vec<f64> = exact.iter().map(|x| x * scale).collect();
                        let max = decode(to, &encode_max(to));
                        let want: Vec<f64> = products
                            .iter()
                            .map(|&p| {
                                if saturate && !p.is_nan() {
                                    p.clamp(-max, max)
                                } else {
                                    p
                                }
                            })
                            .collect();
                        let want = encode(to, &want);
                        let wrong = (0..n).find(|&i| {
                            let w = &want[i * to.size()..][..to.size()];
                            let g = &dst[i * to.size()..][..to.size()];
                            // NaN may be spelled differently; compare it as a class.
                            let nan = |b: &[u8]| decode(to, b).is_nan();
                            w != g && !(nan(w) && nan(g))
                        });
                        assert!(
                            wrong.is_none(),
                            "{} -> {} x 2^{e} saturate {saturate}: element {:?} = {:e}",
                            from.name(),
                            to.name(),
                            wrong,
                            wrong.map(|i| exact[i]).unwrap_or(0.0)
                        );
                    }
                }
            }
        }
    }

    /// The bytes of the largest finite value of `t`.
    fn encode_max(t: FloatType) -> Vec<u8> {
        match t {
            FloatType::F64 => f64::MAX.to_le_bytes().to_vec(),
            FloatType::F32 => f32::MAX.to_le_bytes().to_vec(),
            FloatType::F16 => f16::MAX.to_bits().to_le_bytes().to_vec(),
            FloatType::BF16 => bf16::MAX.to_bits().to_le_bytes().to_vec(),
            FloatType::F8E4M3FN => vec![f8e4m3fn::MAX.to_bits()],
            FloatType::F8E5M2 => vec![f8e5m2::MAX.to_bits()],
            _ => unreachable!("a type the tests do not encode: {t:?}"),
        }
    }

    #[test]
    fn scales_stay_normal_f32() {
        assert_eq!(fp8_scale(FloatType::F8E5M2, 1e-300), 2f64.powi(126));
        assert_eq!(fp8_scale(FloatType::F8E4M3FN, 1e300), 2f64.powi(-126));
        assert_eq!(fp8_scale(FloatType::F8E4M3FN, 0.0), 1.0);
    }

    #[test]
    fn byte_swaps() {
        let mut b = [1u8, 2, 3, 4];
        swap_bytes(&mut b, 2);
        assert_eq!(b, [2, 1, 4, 3]);
        swap_bytes(&mut b, 4);
        assert_eq!(b, [3, 4, 1, 2]);
    }
}
