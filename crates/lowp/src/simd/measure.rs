//! The measuring loop of [`crate::fit::FitStats::measure`]: branch-free, over independent
//! lanes, written once in safe generic code so that each vector path compiles it for its own
//! width (`fit_lanes_f32`/`fit_lanes_f64` in the parent module). It knows nothing of formats:
//! [`crate::fit`] gives it the thresholds that make a value plain and sums its lanes.

use crate::cpu::Path;

/// The float type the measuring loop computes in, f32 or f64.
pub(crate) trait Real:
    Copy
    + Default
    + PartialOrd
    + core::ops::Add<Output = Self>
    + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self>
    + core::ops::Div<Output = Self>
    + core::ops::AddAssign
{
    /// 0.
    const ZERO: Self;
    /// +∞.
    const INFINITY: Self;
    /// 1.
    /// The smallest positive normal value.
    const SMALLEST_NORMAL: Self;
    /// `|self|`.
    fn abs(self) -> Self;
    /// `x` if it is exactly a value of this type.
    fn exactly(x: f64) -> Option<Self>;
    /// The value as an f64.
    fn wide(self) -> f64;
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    const INFINITY: f32 = f32::INFINITY;
    const SMALLEST_NORMAL: f32 = f32::MIN_POSITIVE;
    #[inline(always)]
    fn abs(self) -> f32 {
        // Clearing the sign bit, not `f32::abs`: without `std`, Rust before 1.85 has no
        // inherent `abs`, and the name would call this method itself.
        f32::from_bits(self.to_bits() & 0x7fff_ffff)
    }
    fn exactly(x: f64) -> Option<f32> {
        let y = x as f32;
        (y as f64 == x).then_some(y)
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        self as f64
    }
}

impl Real for f64 {
    const ZERO: f64 = 0.0;
    const INFINITY: f64 = f64::INFINITY;
    const SMALLEST_NORMAL: f64 = f64::MIN_POSITIVE;
    #[inline(always)]
    fn abs(self) -> f64 {
        // As for f32.
        f64::from_bits(self.to_bits() & 0x7fff_ffff_ffff_ffff)
    }
    fn exactly(x: f64) -> Option<f64> {
        Some(x)
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
}

/// What makes a value plain, in the loop's type: its magnitude `ax` is a normal value of the
/// loop's type with `ax * scale` below `overflow`, and its stored magnitude, unscaled, is at
/// most `2 ax` (true of every rounding to nearest of a value the format's grid reaches; false
/// of NaN and infinity). Plain values may be stored as subnormals of the format or flushed to
/// zero: the loop counts both. For plain values every operation of the loop is exact but the
/// division of the relative error (see [`Lanes::one`]). A zero stored as zero is handled by
/// the loop too.
pub(crate) struct Plain<F> {
    /// `overflow / scale`: the smallest magnitude whose scaled rounding may overflow.
    bound: F,
    /// The format's smallest normal value (stored values below it are subnormal).
    min_normal: F,
    /// `1 / scale`, a power of two.
    inverse: F,
}

impl<F: Real> Plain<F> {
    /// The thresholds (the smallest magnitude that overflows the target, its smallest normal
    /// value) and a power-of-two `scale`, if the loop can use them in type `F` (otherwise the
    /// caller measures in f64, or one by one).
    pub(crate) fn new(overflow: f64, min_normal: f64, scale: f64) -> Option<Plain<F>> {
        let inverse = 1.0 / scale;
        let power_of_two = scale.to_bits() & ((1 << 52) - 1) == 0 && inverse.is_normal();
        if !power_of_two {
            return None;
        }
        // Both divisions are by powers of two, so exact unless they leave f64's normal range,
        // which `exactly` then refuses.
        Some(Plain {
            bound: F::exactly(overflow / scale)?,
            min_normal: F::exactly(min_normal)?,
            inverse: F::exactly(inverse)?,
        })
    }
}

impl Plain<f64> {
    /// Thresholds no non-zero value meets: every value but a zero stored as zero is measured
    /// one by one.
    pub(crate) fn nothing() -> Plain<f64> {
        Plain {
            bound: 0.0,
            min_normal: 0.0,
            inverse: 1.0,
        }
    }
}

impl<F: Real> Plain<F> {
    /// Whether the value `x` stored as `y` is measured by the loop: plain and non-zero, or a
    /// zero stored as zero. NaN fails every comparison, so it never is.
    #[inline(always)]
    pub(crate) fn handles(&self, x: F, y: F) -> bool {
        let zero = (x.abs() == F::ZERO) & (y.abs() == F::ZERO);
        self.is(x.abs(), y * self.inverse) | zero
    }

    /// Whether a value of magnitude `ax`, stored as `unscaled` once divided by the scale, is
    /// plain (see [`Plain`]): the one test both the lane loop and [`Plain::handles`] use.
    #[inline(always)]
    fn is(&self, ax: F, unscaled: F) -> bool {
        (ax >= F::SMALLEST_NORMAL) & (ax < self.bound) & (unscaled.abs() <= ax + ax)
    }
}

/// Values per lane in a sub-block of [`Lanes::add`]: its f32 error sums are added into f64
/// after each sub-block, so each f32 sum adds at most this many values (and the tail's few),
/// and its counts fit the 6-bit fields of [`Sums::packed`].
const PER_LANE: usize = 32;

/// Values in a sub-block of [`Lanes::add`] over `N` lanes; its answer has a bit per
/// sub-block.
pub(crate) const fn sub_block(lanes: usize) -> usize {
    PER_LANE * lanes
}

/// The statistics of the plain values of one block, in `N` independent lanes of `F` so that
/// no sum waits on the previous element's. The error sums are gathered in `F` over a
/// sub-block and then added into f64 lanes; the counts likewise, packed in one integer per
/// lane during a sub-block.
pub(crate) struct Lanes<F, const N: usize> {
    /// Values measured (plain, non-zero), and of those: with a positive error (inexact),
    /// stored below the format's normal range (small), stored as zero (flushed); and the
    /// values handled (measured, or zeros stored as zero). See [`Lanes::counts`].
    pub(crate) counts: [[u32; N]; FIELDS],
    pub(crate) max_rel_error: [F; N],
    pub(crate) max_abs_error: [F; N],
    pub(crate) amax: [F; N],
    pub(crate) rel_error_sum: [f64; N],
    pub(crate) abs_error_sum: [f64; N],
}

/// The counts of [`Lanes`], by their index in `counts` and their field in [`Sums::packed`].
const MEASURED: usize = 0;
const HANDLED: usize = 1;
const INEXACT: usize = 2;
const SMALL: usize = 3;
const FLUSHED: usize = 4;
const FIELDS: usize = 5;

/// Bits per packed count: enough for [`PER_LANE`] values and a tail of fewer than 8.
const FIELD_BITS: u32 = 6;

impl<F: Real, const N: usize> Default for Lanes<F, N> {
    fn default() -> Self {
        Lanes {
            counts: [[0; N]; FIELDS],
            max_rel_error: [F::ZERO; N],
            max_abs_error: [F::ZERO; N],
            amax: [F::ZERO; N],
            rel_error_sum: [0.0; N],
            abs_error_sum: [0.0; N],
        }
    }
}

/// The lane loop, and where the CPU's vector paths compile it.
pub(crate) trait Measure<F> {
    /// Runs [`Lanes::add`] compiled for `path`, if it is a vector path the CPU has.
    fn on_path(path: Path, lanes: &mut Self, xs: &[F], ys: &[F], plain: &Plain<F>) -> Option<u64>;
}

impl<F: Real, const N: usize> Lanes<F, N> {
    /// Measures the values of `xs` stored as `ys` that [`Plain::handles`] (at most 64
    /// sub-blocks of [`sub_block`]`(N)` values); answers a mask with bit `k` set when
    /// sub-block `k` holds a value it does not, which the caller measures one by one.
    #[inline(always)]
    pub(crate) fn add(&mut self, xs: &[F], ys: &[F], plain: &Plain<F>) -> u64 {
        let sub = sub_block(N);
        debug_assert!(xs.len() == ys.len() && xs.len() <= 64 * sub);
        let mut rare = 0u64;
        for (k, (xs, ys)) in xs.chunks(sub).zip(ys.chunks(sub)).enumerate() {
            let mut sums = Sums::<F, N>::default();
            let (x_blocks, y_blocks) = (xs.chunks_exact(N), ys.chunks_exact(N));
            let (x_rest, y_rest) = (x_blocks.remainder(), y_blocks.remainder());
            for (x, y) in x_blocks.zip(y_blocks) {
                // Arrays of `N`, so that the loop below has no bounds to check.
                let (x, y): (&[F; N], &[F; N]) = (x.try_into().unwrap(), y.try_into().unwrap());
                for l in 0..N {
                    self.one(l, x[l], y[l], plain, &mut sums);
                }
            }
            for (&x, &y) in x_rest.iter().zip(y_rest) {
                self.one(0, x, y, plain, &mut sums);
            }
            let mut handled = 0;
            for l in 0..N {
                self.rel_error_sum[l] += sums.rel[l].wide();
                self.abs_error_sum[l] += sums.abs[l].wide();
                for (field, count) in self.counts.iter_mut().enumerate() {
                    count[l] += (sums.packed[l] >> (FIELD_BITS * field as u32)) & 63;
                }
                handled += (sums.packed[l] >> (FIELD_BITS * HANDLED as u32)) & 63;
            }
            rare |= ((handled as usize != xs.len()) as u64) << k;
        }
        rare
    }

    /// Measures one value in lane `l` if [`Plain::handles`] it. Every test is a mask, every
    /// update unconditional.
    ///
    /// Why the loop's arithmetic is exact for a plain `x` stored as `y`, a value of the format
    /// with `|y / scale| <= 2|x|`, of the sign of `x`. Take `x > 0` and write `u` for the unit
    /// in the last place of `x * scale` in `F`. Either `y >= 2^e`, the bottom of the binade
    /// of `x * scale`: then `y` is a multiple of its own unit in the last place, which is a
    /// multiple of `u` since no format is more precise than `F`. Or `y` is below that binade:
    /// rounding to nearest only goes there to a subnormal of the format or zero, multiples of
    /// the format's smallest subnormal, which is a multiple of `u` because `x * scale` is
    /// below the format's normal range and the format no more precise than `F`. So
    /// `y - x * scale` is a multiple of `u`, and, `1 / scale` being a power of two,
    /// `y / scale - x` a multiple of the unit in the last place of `x`, of magnitude at most
    /// `|x|` since `0 <= y / scale <= 2x`: a value of `F`. `y / scale` is exact too (it is
    /// at most `2x` and has no more significant bits than `y`). Only the division of the
    /// relative error rounds.
    #[inline(always)]
    fn one(&mut self, l: usize, x: F, y: F, plain: &Plain<F>, sums: &mut Sums<F, N>) {
        let max = |a: F, b: F| if b > a { b } else { a };
        let keep = |m: bool, v: F, otherwise: F| if m { v } else { otherwise };
        let (ax, ay) = (x.abs(), y.abs());
        let unscaled = y * plain.inverse;
        let is = plain.is(ax, unscaled);
        let zero = (x == F::ZERO) & (y == F::ZERO);
        let abs = keep(is, (unscaled - x).abs(), F::ZERO);
        let rel = keep(is, abs / ax, F::ZERO);
        // A plain value is inexact when its error is positive (the error of the others is 0
        // here); stored below the normal range when its stored magnitude is (the others
        // compare as +inf), flushed when that is 0. Five counts in one integer per lane keep
        // every accumulator of the loop in a register.
        let stored = keep(is, ay, F::INFINITY);
        let field = |m: bool, field: usize| (m as u32) << (FIELD_BITS * field as u32);
        sums.packed[l] += field(is, MEASURED)
            | field(is | zero, HANDLED)
            | field(abs > F::ZERO, INEXACT)
            | field(stored < plain.min_normal, SMALL)
            | field(stored == F::ZERO, FLUSHED);
        self.amax[l] = max(self.amax[l], keep(is, ax, F::ZERO));
        self.max_abs_error[l] = max(self.max_abs_error[l], abs);
        self.max_rel_error[l] = max(self.max_rel_error[l], rel);
        sums.abs[l] += abs;
        sums.rel[l] += rel;
    }
}

impl<F, const N: usize> Lanes<F, N> {
    /// The counts of the lanes: (exact, measured, subnormal, flushed to zero).
    pub(crate) fn counts(&self) -> (u64, u64, u64, u64) {
        let total = |field: usize| self.counts[field].iter().map(|&c| c as u64).sum::<u64>();
        let flushed = total(FLUSHED);
        (
            total(HANDLED) - total(INEXACT),
            total(MEASURED),
            total(SMALL) - flushed,
            flushed,
        )
    }
}

/// The sums of one sub-block of [`Lanes::add`].
struct Sums<F, const N: usize> {
    rel: [F; N],
    abs: [F; N],
    /// The counts of [`Lanes::counts`], [`FIELD_BITS`] bits each.
    packed: [u32; N],
}

impl<F: Real, const N: usize> Default for Sums<F, N> {
    fn default() -> Self {
        Sums {
            rel: [F::ZERO; N],
            abs: [F::ZERO; N],
            packed: [0; N],
        }
    }
}
