//! How well values fit a format: what storing them in it costs, counted and measured.
//!
//! [`FitStats`] answers "will my tensor survive this format?" for one slice: how many values
//! overflowed, were flushed to zero, went subnormal or became NaN, and the largest and mean
//! relative and absolute errors of the values that were stored as finite numbers. `lowp
//! convert` prints these per tensor, and the Python module returns them as a dict.
//!
//! ```
//! use lowp::f8e4m3fn;
//! use lowp::fit::FitStats;
//!
//! let activations = [0.5f32, 3.1, -700.0, 1e-4, 0.0];
//! let stats = FitStats::of::<_, f8e4m3fn>(&activations, false);
//! assert_eq!(stats.elements, 5);
//! assert_eq!(stats.overflowed, 1); // -700 is beyond E4M3's 448: it becomes NaN
//! assert_eq!(stats.became_nan, 1);
//! assert_eq!(stats.flushed_to_zero, 1); // 1e-4 is below half the smallest subnormal
//! assert_eq!(stats.max_rel_error, 1.0); // ... so all of it is lost
//! // The largest power of two that brings 700 within 448: scale by 0.5 before storing.
//! assert_eq!(stats.suggested_scale::<f8e4m3fn>(), 0.5);
//! ```

use crate::LowpFloat;
use crate::simd::measure::{Lanes, Measure, Plain, Real, sub_block};

mod sealed {
    /// Only the types this module knows the range of are targets.
    pub trait Sealed {}
    impl<T: crate::LowpFloat> Sealed for T {}
    impl Sealed for f32 {}
}

/// A type values are stored in and measured: any lowp format, or `f32` (for f64 sources
/// narrowed to f32, which round and overflow like any other format).
pub trait FitTarget: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The exact stored value.
    fn stored(self) -> f64;
    /// [`FitTarget::stored`] of each value of `src`, into `dst` (as long).
    fn stored_slice(src: &[Self], dst: &mut [f64]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = s.stored();
        }
    }
    /// [`FitTarget::stored_slice`] into f32s, for types whose every value is an f32 (false:
    /// does nothing).
    #[doc(hidden)]
    fn stored_f32(src: &[Self], dst: &mut [f32]) -> bool {
        let _ = (src, dst);
        false
    }
    /// The range of the type.
    #[doc(hidden)]
    fn limits() -> Limits;
}

impl<T: LowpFloat> FitTarget for T {
    #[inline]
    fn stored(self) -> f64 {
        self.to_f64()
    }
    fn stored_slice(src: &[T], dst: &mut [f64]) {
        crate::bulk::widen_f64(crate::cpu::active_path(), src, dst);
    }
    fn stored_f32(src: &[T], dst: &mut [f32]) -> bool {
        // Every value of every lowp format is an f32.
        crate::bulk::widen_f32(crate::cpu::active_path(), src, dst);
        true
    }
    fn limits() -> Limits {
        Limits::of::<T>()
    }
}

impl FitTarget for f32 {
    #[inline]
    fn stored(self) -> f64 {
        self as f64
    }
    fn limits() -> Limits {
        // IEEE binary32: MAX has an all-ones (odd) mantissa, so its tie overflows.
        Limits {
            max: f32::MAX as f64,
            overflow: f32::MAX as f64 + pow2(127 - 24),
            tie_overflows: true,
            min_normal: f32::MIN_POSITIVE as f64,
        }
    }
}

/// A value whose fit into a format can be measured: `f32`, `f64` or any lowp format.
pub trait FitSource: Copy + Send + Sync + 'static {
    /// The exact value.
    fn exact(self) -> f64;
    /// [`FitSource::exact`] of each value of `src`, into `dst` (as long).
    fn exact_slice(src: &[Self], dst: &mut [f64]) {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = s.exact();
        }
    }
    /// [`FitSource::exact_slice`] into f32s, for types whose every value is an f32 (false:
    /// does nothing).
    #[doc(hidden)]
    fn exact_f32(src: &[Self], dst: &mut [f32]) -> bool {
        let _ = (src, dst);
        false
    }
    /// `src` itself when it is a slice of f32s (no copy needed to measure it).
    #[doc(hidden)]
    fn as_f32(src: &[Self]) -> Option<&[f32]> {
        let _ = src;
        None
    }
    /// `src` itself when it is a slice of f64s.
    #[doc(hidden)]
    fn as_f64(src: &[Self]) -> Option<&[f64]> {
        let _ = src;
        None
    }
    /// Rounds `src` into `dst` to nearest even (saturating overflow to ±MAX if `saturate`),
    /// with the conversion the crate uses for this source type (the bulk paths for f32 and
    /// f64, [`LowpFloat::convert`] between formats). Panics when the lengths differ.
    fn round_slice<T: LowpFloat>(src: &[Self], dst: &mut [T], saturate: bool);
}

impl FitSource for f32 {
    #[inline]
    fn exact(self) -> f64 {
        self as f64
    }
    fn exact_f32(src: &[f32], dst: &mut [f32]) -> bool {
        dst.copy_from_slice(src);
        true
    }
    fn as_f32(src: &[f32]) -> Option<&[f32]> {
        Some(src)
    }
    fn round_slice<T: LowpFloat>(src: &[f32], dst: &mut [T], saturate: bool) {
        crate::bulk::narrow_f32(crate::cpu::active_path(), src, dst, saturate);
    }
}

impl FitSource for f64 {
    #[inline]
    fn exact(self) -> f64 {
        self
    }
    fn as_f64(src: &[f64]) -> Option<&[f64]> {
        Some(src)
    }
    fn round_slice<T: LowpFloat>(src: &[f64], dst: &mut [T], saturate: bool) {
        crate::bulk::narrow_f64(crate::cpu::active_path(), src, dst, saturate);
    }
}

impl<S: LowpFloat> FitSource for S {
    #[inline]
    fn exact(self) -> f64 {
        self.to_f64()
    }
    fn exact_slice(src: &[S], dst: &mut [f64]) {
        crate::bulk::widen_f64(crate::cpu::active_path(), src, dst);
    }
    fn exact_f32(src: &[S], dst: &mut [f32]) -> bool {
        crate::bulk::widen_f32(crate::cpu::active_path(), src, dst);
        true
    }
    fn round_slice<T: LowpFloat>(src: &[S], dst: &mut [T], saturate: bool) {
        crate::bulk::convert(crate::cpu::active_path(), src, dst, saturate);
    }
}

/// What storing a slice of values in a format cost.
///
/// Counts are of elements; the errors compare each stored value (divided by the scale it was
/// stored with, if any) with the exact source value, over the elements whose source is finite
/// and non-zero and whose stored value is finite (a value flushed to zero has relative error 1,
/// a saturated one the error of ±MAX). [`FitStats::merge`] combines the statistics of parts of
/// a slice, so they can be gathered block by block or on several threads.
///
/// Counts, absolute errors and `amax` are exact. When source and stored values are all f32s
/// (f32 or lowp sources, lowp formats stored), relative errors are divided in f32 and error
/// sums gathered in f32 over 32 values per lane before being added in f64, so those carry a
/// relative error of about 10^-6: plenty for statistics, and it lets measuring keep pace
/// with converting.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FitStats {
    /// Values measured.
    pub elements: u64,
    /// Source values that were NaN.
    pub nan_inputs: u64,
    /// Source values that were ±infinity.
    pub infinite_inputs: u64,
    /// Finite source values beyond the format's range: their rounding to nearest even (with an
    /// unbounded exponent) is larger than the largest finite value. They became ±infinity, NaN
    /// (formats without infinity), or ±MAX (when saturating, and in FP6/FP4).
    pub overflowed: u64,
    /// Source values that were not NaN but were stored as NaN: overflow and infinities in the
    /// formats without infinity, and zero and negative values in the unsigned E8M0.
    pub became_nan: u64,
    /// Non-zero finite source values stored as zero (underflow).
    pub flushed_to_zero: u64,
    /// Values stored as non-zero subnormals of the format (fewer significant bits than its
    /// precision).
    pub subnormal: u64,
    /// Finite source values stored exactly.
    pub exact: u64,
    /// Largest relative error `|stored - x| / |x|`.
    pub max_rel_error: f64,
    /// Largest absolute error `|stored - x|`, in the source's units.
    pub max_abs_error: f64,
    /// Sum of the relative errors (for [`FitStats::mean_rel_error`]).
    pub rel_error_sum: f64,
    /// Sum of the absolute errors (for [`FitStats::mean_abs_error`]).
    pub abs_error_sum: f64,
    /// How many elements the error sums cover.
    pub measured: u64,
    /// Largest finite source magnitude, `max |x|` (0 when there is none).
    pub amax: f64,
}

impl FitStats {
    /// The statistics of storing `src` in format `T`, rounding to nearest even and saturating
    /// overflow to ±MAX when `saturate` is set: `src` is converted block by block (nothing is
    /// allocated) on the bulk conversion paths, then measured.
    pub fn of<S: FitSource, T: LowpFloat>(src: &[S], saturate: bool) -> FitStats {
        let mut stats = FitStats::default();
        let mut block = [T::default(); MEASURE_BLOCK];
        for part in src.chunks(block.len()) {
            let stored = &mut block[..part.len()];
            S::round_slice(part, stored, saturate);
            stats.merge(&FitStats::measure(part, stored, 1.0));
        }
        stats
    }

    /// [`FitStats::of`] on all threads of rayon's current pool. The counts, maxima and `amax`
    /// equal [`FitStats::of`]'s; the error sums may differ slightly (they are added in another
    /// order).
    #[cfg(feature = "rayon")]
    pub fn par_of<S: FitSource, T: LowpFloat>(src: &[S], saturate: bool) -> FitStats {
        use rayon::prelude::*;
        src.par_chunks(1 << 16)
            .map(|part| FitStats::of::<S, T>(part, saturate))
            .reduce(FitStats::default, |mut a, b| {
                a.merge(&b);
                a
            })
    }

    /// The statistics of `stored`, which holds each value of `src` multiplied by `scale` and
    /// rounded into `T` by the caller (`scale` is 1 for a plain conversion; a per-tensor FP8
    /// scale otherwise). Errors are measured on `stored / scale`; overflow, flushing and
    /// subnormals on the stored values. Panics when the lengths differ, or unless `scale` is
    /// finite and positive.
    #[track_caller]
    pub fn measure<S: FitSource, T: FitTarget>(src: &[S], stored: &[T], scale: f64) -> FitStats {
        crate::bulk::check_lengths(stored.len(), src.len());
        assert!(
            scale.is_finite() && scale > 0.0,
            "lowp: a fit scale must be finite and positive, not {scale}"
        );
        let limits = T::limits();
        // Both sides are widened a block at a time on the bulk paths, then measured by a
        // branch-free loop over independent lanes, which the compiler vectorizes, for the
        // values that are plain (finite, normal in the loop's type, no overflow; stored as a
        // normal, a subnormal or zero). The rest, rare in real tensors (NaN, infinities,
        // overflow), are measured one by one. Values that are all f32s (the lowp formats, f32
        // sources) are measured in f32 lanes, twice as many per vector; others in f64.
        let mut total = FitStats::default();
        match Plain::<f32>::new(limits.overflow, limits.min_normal, scale) {
            Some(plain) if S::exact_f32(&[], &mut []) && T::stored_f32(&[], &mut []) => {
                measure_blocks::<S, T, f32, 8>(src, stored, &plain, &limits, scale, &mut total)
            }
            _ => {
                let plain = Plain::<f64>::new(limits.overflow, limits.min_normal, scale)
                    .unwrap_or_else(Plain::nothing);
                measure_blocks::<S, T, f64, 4>(src, stored, &plain, &limits, scale, &mut total)
            }
        }
        total.elements = src.len() as u64;
        total
    }

    /// Adds one value `x` stored (times `scale`) as `y`: the definition that
    /// [`FitStats::measure`] vectorizes.
    fn add_one(&mut self, x: f64, y: f64, limits: &Limits, scale: f64) {
        if x.is_nan() {
            self.nan_inputs += 1;
            return;
        }
        self.became_nan += y.is_nan() as u64;
        if x.is_infinite() {
            self.infinite_inputs += 1;
            return;
        }
        self.amax = self.amax.max(x.abs());
        self.overflowed += limits.overflows(x * scale) as u64;
        if y != 0.0 && y.abs() < limits.min_normal {
            self.subnormal += 1;
        }
        if x == 0.0 {
            self.exact += (y == 0.0) as u64;
            return;
        }
        if !y.is_finite() {
            return;
        }
        self.flushed_to_zero += (y == 0.0) as u64;
        let abs = (y / scale - x).abs();
        let rel = abs / x.abs();
        self.exact += (abs == 0.0) as u64;
        self.max_abs_error = self.max_abs_error.max(abs);
        self.max_rel_error = self.max_rel_error.max(rel);
        self.abs_error_sum += abs;
        self.rel_error_sum += rel;
        self.measured += 1;
    }

    /// Adds the statistics of another part of the same slice.
    pub fn merge(&mut self, other: &FitStats) {
        self.elements += other.elements;
        self.nan_inputs += other.nan_inputs;
        self.infinite_inputs += other.infinite_inputs;
        self.overflowed += other.overflowed;
        self.became_nan += other.became_nan;
        self.flushed_to_zero += other.flushed_to_zero;
        self.subnormal += other.subnormal;
        self.exact += other.exact;
        self.max_rel_error = self.max_rel_error.max(other.max_rel_error);
        self.max_abs_error = self.max_abs_error.max(other.max_abs_error);
        self.rel_error_sum += other.rel_error_sum;
        self.abs_error_sum += other.abs_error_sum;
        self.measured += other.measured;
        self.amax = self.amax.max(other.amax);
    }

    /// Mean relative error over the measured elements (0 when none were).
    pub fn mean_rel_error(&self) -> f64 {
        mean(self.rel_error_sum, self.measured)
    }

    /// Mean absolute error over the measured elements (0 when none were).
    pub fn mean_abs_error(&self) -> f64 {
        mean(self.abs_error_sum, self.measured)
    }

    /// The per-tensor scale to store these values with in format `T`: the largest power of two
    /// `s` with `amax * s <= T::MAX`, so that the largest value just fits and, a power of two
    /// being exact to multiply by, scaling adds no rounding of its own. 1 when there is no
    /// finite non-zero value; limited to `2^-1022..=2^1023`.
    ///
    /// ```
    /// use lowp::fit::FitStats;
    /// use lowp::{f8e4m3fn, f8e5m2};
    /// let grads = [3e-6f32, -1e-5, 2e-7];
    /// let stats = FitStats::of::<_, f8e5m2>(&grads, false);
    /// assert_eq!(stats.suggested_scale::<f8e5m2>(), 2f64.powi(32)); // 1e-5 * 2^32 ≈ 42950
    /// assert_eq!(stats.suggested_scale::<f8e4m3fn>(), 2f64.powi(25)); // ≈ 335.5 <= 448
    /// ```
    pub fn suggested_scale<T: FitTarget>(&self) -> f64 {
        power_of_two_scale::<T>(self.amax)
    }
}

/// The largest finite magnitude in `src` (0 when there is none): the `amax` of
/// [`FitStats`], without converting anything, for choosing a scale before converting.
///
/// ```
/// assert_eq!(lowp::fit::amax(&[1.0f32, -7.5, f32::INFINITY, f32::NAN]), 7.5);
/// ```
pub fn amax<S: FitSource>(src: &[S]) -> f64 {
    // Non-negative f64s order as their bit patterns do, so the largest magnitude is an integer
    // maximum, which runs on vectors (a float maximum must keep NaN's rules, in order, and
    // does not); NaN and infinities count as +0. Eight independent lanes break the chain.
    let key = |x: S| {
        let m = x.exact().abs();
        if m < f64::INFINITY { m.to_bits() } else { 0 }
    };
    let mut lanes = [0u64; 8];
    let chunks = src.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (lane, &x) in lanes.iter_mut().zip(c) {
            *lane = (*lane).max(key(x));
        }
    }
    let top = rest
        .iter()
        .fold(lanes.into_iter().max().unwrap_or(0), |m, &x| m.max(key(x)));
    f64::from_bits(top)
}

/// The scale [`FitStats::suggested_scale`] gives for values whose largest finite magnitude is
/// `amax`: the largest power of two `s` with `amax * s <= T::MAX`, 1 when `amax` is zero or
/// not finite, limited to `2^-1022..=2^1023`.
///
/// ```
/// use lowp::f8e4m3fn;
/// assert_eq!(lowp::fit::power_of_two_scale::<f8e4m3fn>(1000.0), 0.25);
/// ```
pub fn power_of_two_scale<T: FitTarget>(amax: f64) -> f64 {
    if amax == 0.0 || !amax.is_finite() {
        return 1.0;
    }
    let max = T::limits().max;
    // The exponent of max / amax, corrected by one where rounding the quotient crossed a
    // power of two: the check below is exact.
    let mut e = exponent(max / amax).clamp(-1022, 1023);
    while e > -1022 && amax * pow2(e) > max {
        e -= 1;
    }
    while e < 1023 && amax * pow2(e + 1) <= max {
        e += 1;
    }
    pow2(e)
}

/// Values widened and measured at a time by [`FitStats::measure`] (and converted at a time
/// by [`FitStats::of`]): 8 KiB of f32s, which stay in the first-level cache between being
/// widened and measured; 8 or 16 sub-blocks of [`Lanes::add`] (at most 64).
const MEASURE_BLOCK: usize = 2048;

/// How the measuring loop's float type (f32 or f64) takes in the sources and targets of a fit.
trait Widen: Real {
    /// Widens `S` values into this type, or answers false (f32 cannot hold every f64).
    fn widen_source<S: FitSource>(src: &[S], dst: &mut [Self]) -> bool;
    /// `src` itself, when it is a slice of this type.
    fn view<S: FitSource>(src: &[S]) -> Option<&[Self]>;
    /// Widens `T` values into this type, or answers false.
    fn widen_stored<T: FitTarget>(src: &[T], dst: &mut [Self]) -> bool;
}

impl Widen for f32 {
    fn widen_source<S: FitSource>(src: &[S], dst: &mut [f32]) -> bool {
        S::exact_f32(src, dst)
    }
    fn view<S: FitSource>(src: &[S]) -> Option<&[f32]> {
        S::as_f32(src)
    }
    fn widen_stored<T: FitTarget>(src: &[T], dst: &mut [f32]) -> bool {
        T::stored_f32(src, dst)
    }
}

impl Widen for f64 {
    fn widen_source<S: FitSource>(src: &[S], dst: &mut [f64]) -> bool {
        S::exact_slice(src, dst);
        true
    }
    fn view<S: FitSource>(src: &[S]) -> Option<&[f64]> {
        S::as_f64(src)
    }
    fn widen_stored<T: FitTarget>(src: &[T], dst: &mut [f64]) -> bool {
        T::stored_slice(src, dst);
        true
    }
}

/// Adds the lanes of one block to `total`.
fn add_lanes<F: Real, const N: usize>(lanes: &Lanes<F, N>, total: &mut FitStats) {
    let max = |a: &[F; N]| a.iter().map(|x| x.wide()).fold(0.0, f64::max);
    let (exact, measured, subnormal, flushed) = lanes.counts();
    total.exact += exact;
    total.measured += measured;
    total.flushed_to_zero += flushed;
    total.subnormal += subnormal;
    total.max_rel_error = total.max_rel_error.max(max(&lanes.max_rel_error));
    total.max_abs_error = total.max_abs_error.max(max(&lanes.max_abs_error));
    total.rel_error_sum += lanes.rel_error_sum.iter().sum::<f64>();
    total.abs_error_sum += lanes.abs_error_sum.iter().sum::<f64>();
    total.amax = total.amax.max(max(&lanes.amax));
}

/// Measures `src` stored as `stored` block by block in `N` lanes of `F` (the values
/// [`Plain::handles`]) and one by one (the others), into `total`.
fn measure_blocks<S: FitSource, T: FitTarget, F: Widen, const N: usize>(
    src: &[S],
    stored: &[T],
    plain: &Plain<F>,
    limits: &Limits,
    scale: f64,
    total: &mut FitStats,
) where
    Lanes<F, N>: Measure<F>,
{
    let mut xs = [F::ZERO; MEASURE_BLOCK];
    let mut ys = [F::ZERO; MEASURE_BLOCK];
    let path = crate::cpu::active_path();
    for (s, t) in src.chunks(MEASURE_BLOCK).zip(stored.chunks(MEASURE_BLOCK)) {
        let y = &mut ys[..s.len()];
        F::widen_stored(t, y);
        let x: &[F] = match F::view(s) {
            Some(x) => x,
            None => {
                F::widen_source(s, &mut xs[..s.len()]);
                &xs[..s.len()]
            }
        };
        let y: &[F] = y;
        let mut lanes = Lanes::<F, N>::default();
        // The same loop, compiled for the widest vectors the CPU has where it has them.
        let rare = match Lanes::<F, N>::on_path(path, &mut lanes, x, y, plain) {
            Some(rare) => rare,
            None => lanes.add(x, y, plain),
        };
        add_lanes(&lanes, total);
        let sub_blocks = x.chunks(sub_block(N)).zip(y.chunks(sub_block(N)));
        for (k, (x, y)) in sub_blocks.enumerate() {
            if rare & (1 << k) == 0 {
                continue;
            }
            for (&x, &y) in x.iter().zip(y) {
                if !plain.handles(x, y) {
                    total.add_one(x.wide(), y.wide(), limits, scale);
                }
            }
        }
    }
}

/// `sum / count`, 0 for no elements.
fn mean(sum: f64, count: u64) -> f64 {
    if count == 0 { 0.0 } else { sum / count as f64 }
}

/// `2^e` for `-1022 <= e <= 1023`.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// The unbiased binary exponent of a positive normal or infinite `x` (`floor(log2 x)`), or
/// -1023 for subnormals.
fn exponent(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

/// The range of a format as f64s.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The largest finite value.
    max: f64,
    /// The smallest magnitude whose rounding to nearest even overflows, or the tie just below
    /// it (see `tie_overflows`).
    overflow: f64,
    /// Whether a value exactly at `overflow` overflows (a tie rounds away from an odd MAX).
    tie_overflows: bool,
    /// The smallest positive normal value (with no subnormals: the smallest positive value).
    min_normal: f64,
}

impl Limits {
    /// The limits of `T`, derived from its format.
    fn of<T: LowpFloat>() -> Limits {
        let fmt = T::FORMAT;
        let max_bits = fmt.max_finite_bits();
        let max = T::from_bits_u32(max_bits).to_f64();
        let ulp = pow2(fmt.max_exponent() - fmt.mantissa_bits as i32);
        let overflow = max + ulp / 2.0;
        // Round to nearest even sends the tie away from an odd MAX; E8M0 (no mantissa bits,
        // every value "even") rounds ties between powers of two upward, as ml_dtypes does. The
        // engine settles both where the format can show an overflow; FP6 and FP4, which
        // saturate, have an all-ones (odd) MAX mantissa.
        let tie_overflows = if fmt.has_nan() {
            !T::from_f64(overflow).to_f64().is_finite()
        } else {
            max_bits & 1 == 1
        };
        Limits {
            max,
            overflow,
            tie_overflows,
            min_normal: pow2(fmt.min_exponent()),
        }
    }

    /// Whether rounding the finite `x` overflows the format.
    #[inline(always)]
    fn overflows(&self, x: f64) -> bool {
        let m = x.abs();
        (m > self.overflow) | ((m == self.overflow) & self.tie_overflows)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn amax_is_the_largest_finite_magnitude_of_every_f16_and_bf16() {
        use crate::{bf16, f16};
        let halves: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
        let brains: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
        // Every prefix length up to 20 (tails of every size), and all 65536 values.
        for n in (0..20).chain([65536]) {
            let by_hand = |v: &[f64]| {
                v.iter()
                    .filter(|x| x.is_finite())
                    .fold(0.0f64, |m, x| m.max(x.abs()))
            };
            let h: Vec<f64> = halves[65536 - n.min(65536)..]
                .iter()
                .map(|x| x.to_f64())
                .collect();
            assert_eq!(
                super::amax(&halves[65536 - n.min(65536)..]),
                by_hand(&h),
                "f16 tail {n}"
            );
            let b: Vec<f64> = brains[..n].iter().map(|x| x.to_f64()).collect();
            assert_eq!(super::amax(&brains[..n]), by_hand(&b), "bf16 head {n}");
        }
        assert_eq!(super::amax(&[f32::NAN, -0.0, f32::NEG_INFINITY]), 0.0);
        assert_eq!(super::amax(&[-f32::MAX, 1.0, f32::NAN]), f32::MAX as f64);
    }

    use super::*;
    use crate::{bf16, f4e2m1fn, f8e4m3fn, f8e5m2, f8e8m0fnu, f16};

    #[test]
    fn overflow_thresholds_are_where_rounding_leaves_the_range() {
        let e4m3 = Limits::of::<f8e4m3fn>();
        assert_eq!(
            (e4m3.max, e4m3.overflow, e4m3.tie_overflows),
            (448.0, 464.0, false)
        );
        let e5m2 = Limits::of::<f8e5m2>();
        assert_eq!((e5m2.overflow, e5m2.tie_overflows), (61440.0, true));
        let f4 = Limits::of::<f4e2m1fn>();
        assert_eq!((f4.overflow, f4.tie_overflows), (7.0, true));
        let e8m0 = Limits::of::<f8e8m0fnu>();
        assert_eq!(
            (e8m0.overflow, e8m0.tie_overflows),
            (1.5 * 2f64.powi(127), true)
        );
        assert_eq!(e8m0.min_normal, 2f64.powi(-127));
    }

    #[test]
    fn the_thresholds_agree_with_the_engine() {
        fn check<T: LowpFloat>() {
            let l = Limits::of::<T>();
            for x in [
                l.overflow,
                l.max,
                l.overflow * 1.0000001,
                l.overflow * 0.9999999,
            ] {
                let rounded = T::from_f64(x);
                let escaped = !rounded.to_f64().is_finite();
                if T::FORMAT.has_nan() {
                    assert_eq!(l.overflows(x), escaped, "{} {x}", T::FORMAT.name);
                }
                let toward_zero = T::from_f64_round(x, crate::Rounding::TowardZero).to_f64();
                assert_eq!(toward_zero, l.max.min(toward_zero), "{}", T::FORMAT.name);
            }
        }
        check::<f16>();
        check::<bf16>();
        check::<f8e4m3fn>();
        check::<f8e5m2>();
        check::<f8e8m0fnu>();
        check::<f4e2m1fn>();
    }

    #[test]
    fn counts_and_errors() {
        let src = [
            1.0f32,
            1.0 + 2f32.powi(-9),
            -70000.0,
            f32::INFINITY,
            f32::NAN,
            0.0,
            2f32.powi(-25),
            2f32.powi(-20),
        ];
        let s = FitStats::of::<_, f16>(&src, false);
        assert_eq!(s.elements, 8);
        assert_eq!(s.nan_inputs, 1);
        assert_eq!(s.infinite_inputs, 1);
        assert_eq!(s.overflowed, 1);
        assert_eq!(s.became_nan, 0);
        // 2^-25 is half the smallest subnormal: the tie goes to even, zero.
        assert_eq!(s.flushed_to_zero, 1);
        assert_eq!(s.subnormal, 1);
        // 1, 0, 2^-20 exactly; 1 + 2^-9 exactly too (f16 has 10 mantissa bits).
        assert_eq!(s.exact, 4);
        assert_eq!(s.measured, 4);
        assert_eq!(s.max_rel_error, 1.0);
        assert_eq!(s.mean_rel_error(), 0.25);
        assert_eq!(s.amax, 70000.0);
        let sat = FitStats::of::<_, f16>(&src, true);
        assert_eq!(sat.overflowed, 1);
        assert_eq!(sat.measured, 5);
        assert_eq!(sat.max_abs_error, 70000.0 - 65504.0);
    }

    #[test]
    fn e8m0_counts_zero_and_negatives_as_nan() {
        let s = FitStats::of::<_, f8e8m0fnu>(&[0.0f64, -1.0, 3.0], false);
        assert_eq!(s.became_nan, 2);
        assert_eq!(s.measured, 1);
        assert_eq!(s.max_rel_error, 1.0 / 3.0);
    }

    #[test]
    fn scaled_storage_is_measured_in_source_units() {
        let src = [1000.0f32, -3.0];
        let scale = 0.25;
        let stored: Vec<f8e4m3fn> = src
            .iter()
            .map(|&x| f8e4m3fn::from_f64(x as f64 * scale))
            .collect();
        let s = FitStats::measure(&src, &stored, scale);
        assert_eq!(s.overflowed, 0);
        assert_eq!(s.exact, 1);
        // 250 rounds to 256, which restores to 1024.
        assert_eq!(s.max_abs_error, 24.0);
        let unscaled = FitStats::of::<_, f8e4m3fn>(&src, false);
        assert_eq!(unscaled.overflowed, 1);
    }

    #[test]
    fn between_formats() {
        let src: Vec<bf16> = [1.0f32, 1.0 / 3.0, 1e10]
            .iter()
            .map(|&x| bf16::from_f32(x))
            .collect();
        let s = FitStats::of::<_, f8e5m2>(&src, true);
        assert_eq!(s.overflowed, 1);
        assert_eq!(s.exact, 1);
        assert_eq!(s.amax, bf16::from_f32(1e10).to_f64());
    }

    #[test]
    fn suggested_scales_are_exact_powers_of_two() {
        let s = FitStats {
            amax: 448.0,
            ..FitStats::default()
        };
        assert_eq!(s.suggested_scale::<f8e4m3fn>(), 1.0);
        let s = FitStats {
            amax: 448.0000001,
            ..FitStats::default()
        };
        assert_eq!(s.suggested_scale::<f8e4m3fn>(), 0.5);
        assert_eq!(FitStats::default().suggested_scale::<f16>(), 1.0);
        let tiny = FitStats {
            amax: f64::MIN_POSITIVE / 4.0,
            ..FitStats::default()
        };
        assert_eq!(tiny.suggested_scale::<bf16>(), 2f64.powi(1023));
    }

    #[test]
    fn merging_parts_equals_the_whole() {
        let src: Vec<f32> = (0..5000).map(|i| (i as f32 - 2500.0) * 0.37).collect();
        let whole = FitStats::of::<_, f8e4m3fn>(&src, false);
        let mut parts = FitStats::of::<_, f8e4m3fn>(&src[..1234], false);
        parts.merge(&FitStats::of::<_, f8e4m3fn>(&src[1234..], false));
        assert_eq!(parts.elements, whole.elements);
        assert_eq!(parts.overflowed, whole.overflowed);
        assert_eq!(parts.max_rel_error, whole.max_rel_error);
        assert!((parts.rel_error_sum - whole.rel_error_sum).abs() < 1e-6 * whole.rel_error_sum);
    }

    #[test]
    fn f64_stored_in_f32() {
        let tie = f32::MAX as f64 + 2f64.powi(103);
        let src = [1.0f64, 0.1, 1e39, -1e-50, 1e-40, tie];
        let stored: Vec<f32> = src.iter().map(|&x| x as f32).collect();
        let s = FitStats::measure(&src, &stored, 1.0);
        // 1e39 and the tie just above MAX (odd mantissa: rounds to even, infinity) overflow.
        assert_eq!(s.overflowed, 2);
        assert_eq!(s.flushed_to_zero, 1);
        assert_eq!(s.subnormal, 1);
        assert_eq!(s.exact, 1);
        let limits = f32::limits();
        assert!(!limits.overflows(tie - 2f64.powi(80)));
        assert_eq!((tie - 2f64.powi(80)) as f32, f32::MAX);
        assert_eq!(power_of_two_scale::<f32>(f32::MAX as f64), 1.0);
    }

    #[test]
    fn amax_and_scale_without_converting() {
        let src = [3e-6f32, -1e-5, 2e-7, f32::NEG_INFINITY];
        assert_eq!(amax(&src), 1e-5f32 as f64);
        let stats = FitStats::of::<_, f8e5m2>(&src, false);
        assert_eq!(
            power_of_two_scale::<f8e5m2>(amax(&src)),
            stats.suggested_scale::<f8e5m2>()
        );
        assert_eq!(amax::<f32>(&[]), 0.0);
        assert_eq!(power_of_two_scale::<f8e4m3fn>(0.0), 1.0);
        assert_eq!(power_of_two_scale::<f8e4m3fn>(f64::NAN), 1.0);
    }

    /// The element-by-element definition [`FitStats::measure`] vectorizes.
    fn reference<S: FitSource, T: FitTarget>(src: &[S], stored: &[T], scale: f64) -> FitStats {
        let limits = T::limits();
        let mut s = FitStats {
            elements: src.len() as u64,
            ..FitStats::default()
        };
        for (&x, &y) in src.iter().zip(stored) {
            s.add_one(x.exact(), y.stored(), &limits, scale);
        }
        s
    }

    #[test]
    fn the_vectorized_measure_is_the_definition() {
        use crate::Rounding;
        fn check<T: LowpFloat>(src: &[f32], scale: f64, rounding: Rounding) {
            let stored: Vec<T> = src
                .iter()
                .map(|&x| T::from_f64_round(x as f64 * scale, rounding))
                .collect();
            let got = FitStats::measure(src, &stored, scale);
            let want = reference(src, &stored, scale);
            let what = format!("{} {scale} {rounding:?}", T::FORMAT.name);
            // Relative errors of f32 values are divided in f32 (2^-24 relative error); sums
            // are added in another order.
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * a.abs().max(b.abs());
            assert!(
                close(got.rel_error_sum, want.rel_error_sum)
                    && close(got.abs_error_sum, want.abs_error_sum)
                    && close(got.max_rel_error, want.max_rel_error),
                "{what}: {got:?} {want:?}"
            );
            let exact_sums = FitStats {
                rel_error_sum: want.rel_error_sum,
                abs_error_sum: want.abs_error_sum,
                max_rel_error: want.max_rel_error,
                ..got
            };
            // Counts, the largest absolute error and amax exactly.
            assert_eq!(exact_sums, want, "{what}");
        }
        let mut state = 7u64;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            state
        };
        // Random bit patterns: every binade, NaN, infinities, subnormals.
        let mut src: Vec<f32> = (0..3001)
            .map(|_| f32::from_bits((next() >> 32) as u32))
            .collect();
        src.extend([0.0, -0.0, f32::INFINITY, f32::NAN, 448.0, 464.0, 1e-9, 3.0]);
        // Weights: roughly normal with sigma 0.02 (most subnormal in E4M3 and FP4, some
        // flushed), zeros among them, a few outliers, f32's smallest normals.
        src.extend((0..3000).map(|i| {
            let u = (0..4)
                .map(|_| (next() >> 40) as f32 / (1u64 << 24) as f32)
                .sum::<f32>();
            let w = (u - 2.0) * 0.02 * 3f32.sqrt();
            match i % 500 {
                0 => 0.0,
                1 => w * 50.0,
                2 => f32::MIN_POSITIVE * (1.0 + w),
                _ => w,
            }
        }));
        let roundings = [
            Rounding::NearestEven,
            Rounding::TowardZero,
            Rounding::TowardPositive,
            Rounding::Stochastic(0x9e37_79b9),
        ];
        for scale in [1.0, 0.25, 3.0, 2f64.powi(40), 2f64.powi(-60)] {
            for rounding in roundings {
                check::<f16>(&src, scale, rounding);
                check::<bf16>(&src, scale, rounding);
                check::<f8e4m3fn>(&src, scale, rounding);
                check::<f8e5m2>(&src, scale, rounding);
                check::<f8e8m0fnu>(&src, scale, rounding);
                check::<f4e2m1fn>(&src, scale, rounding);
            }
        }
    }

    #[test]
    fn weights_are_measured_with_their_subnormals_and_flushed_values() {
        // E4M3's subnormals are the multiples of 2^-9 below 2^-6: 0.003 rounds to 2^-8,
        // -0.001 to -2^-9, 1e-4 flushes to zero; 0.5 and the zeros are exact.
        let src = [0.003f32, -0.001, 1e-4, 0.5, 0.0, -0.0];
        let s = FitStats::of::<_, f8e4m3fn>(&src, false);
        assert_eq!(
            (s.subnormal, s.flushed_to_zero, s.exact, s.measured),
            (2, 1, 3, 4)
        );
        assert_eq!(s.max_rel_error, 1.0);
    }
}
