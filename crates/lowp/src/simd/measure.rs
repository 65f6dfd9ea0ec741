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
    /// 1.
    const ONE: Self;
    /// +∞.
    const INFINITY: Self;
    /// The smallest positive normal value, as an f64.
    const MIN_POSITIVE: f64;
    /// `|self|`.
    fn abs(self) -> Self;
    /// `x` if it is exactly a value of this type.
    fn exactly(x: f64) -> Option<Self>;
    /// The value as an f64.
    fn wide(self) -> f64;
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
    const INFINITY: f32 = f32::INFINITY;
    const MIN_POSITIVE: f64 = f32::MIN_POSITIVE as f64;
    #[inline(always)]
    fn abs(self) -> f32 {
        f32::abs(self)
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
    const ONE: f64 = 1.0;
    const INFINITY: f64 = f64::INFINITY;
    const MIN_POSITIVE: f64 = f64::MIN_POSITIVE;
    #[inline(always)]
    fn abs(self) -> f64 {
        f64::abs(self)
    }
    fn exactly(x: f64) -> Option<f64> {
        Some(x)
    }
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
}

/// What makes a value plain, in the loop's type: its magnitude `ax` is at least `min_normal`
/// (of both the target and the loop's type) with `ax * scale` below `overflow`, and its
/// stored magnitude is finite and at least `min_normal`. For plain values every operation of
/// the loop is exact but the division of the relative error.
pub(crate) struct Plain<F> {
    overflow: F,
    min_normal: F,
    scale: F,
    inverse: F,
}

impl<F: Real> Plain<F> {
    /// The thresholds (the smallest magnitude that overflows the target, its smallest normal
    /// value) and a power-of-two `scale` in type `F`, if they are values of it (otherwise the
    /// caller measures in f64, or one by one).
    pub(crate) fn new(overflow: f64, min_normal: f64, scale: f64) -> Option<Plain<F>> {
        let inverse = 1.0 / scale;
        let power_of_two = scale.to_bits() & ((1 << 52) - 1) == 0 && inverse.is_normal();
        if !power_of_two {
            return None;
        }
        Some(Plain {
            overflow: F::exactly(overflow)?,
            // Below the loop type's own normal range, products and differences could round.
            min_normal: F::exactly(min_normal.max(F::MIN_POSITIVE))?,
            scale: F::exactly(scale)?,
            inverse: F::exactly(inverse)?,
        })
    }
}

impl Plain<f64> {
    /// Thresholds no value meets: every value is measured one by one.
    pub(crate) fn nothing() -> Plain<f64> {
        Plain {
            overflow: 0.0,
            min_normal: f64::INFINITY,
            scale: 1.0,
            inverse: 1.0,
        }
    }
}

impl<F: Real> Plain<F> {
    /// Whether a value of magnitude `ax` stored with magnitude `ay` is plain.
    #[inline(always)]
    pub(crate) fn is(&self, ax: F, ay: F) -> bool {
        (ax >= self.min_normal)
            & (ax * self.scale < self.overflow)
            & (ay >= self.min_normal)
            // Also excludes a stored value that, unscaled, leaves the loop type's range.
            & (ay * self.inverse < F::INFINITY)
    }
}

/// The statistics of the plain values of one block, in `N` independent lanes of `F` so that
/// no sum waits on the previous element's. Counts are kept as floats (exact: a block is
/// short): adding a selected 1 vectorizes into two instructions, where turning a bool into an
/// integer takes several.
pub(crate) struct Lanes<F, const N: usize> {
    pub(crate) exact: [F; N],
    pub(crate) measured: [F; N],
    pub(crate) max_rel_error: [F; N],
    pub(crate) max_abs_error: [F; N],
    pub(crate) rel_error_sum: [F; N],
    pub(crate) abs_error_sum: [F; N],
    pub(crate) amax: [F; N],
}

impl<F: Real, const N: usize> Default for Lanes<F, N> {
    fn default() -> Self {
        Lanes {
            exact: [F::ZERO; N],
            measured: [F::ZERO; N],
            max_rel_error: [F::ZERO; N],
            max_abs_error: [F::ZERO; N],
            rel_error_sum: [F::ZERO; N],
            abs_error_sum: [F::ZERO; N],
            amax: [F::ZERO; N],
        }
    }
}

/// The lane loop, and where the CPU's vector paths compile it.
pub(crate) trait Measure<F> {
    /// Runs [`Lanes::add`] compiled for `path`, if it is a vector path the CPU has.
    fn on_path(path: Path, lanes: &mut Self, xs: &[F], ys: &[F], plain: &Plain<F>) -> Option<u64>;
}

impl Measure<f32> for Lanes<f32, 8> {
    fn on_path(
        path: Path,
        lanes: &mut Self,
        xs: &[f32],
        ys: &[f32],
        plain: &Plain<f32>,
    ) -> Option<u64> {
        super::fit_lanes_f32(path, lanes, xs, ys, plain)
    }
}

impl Measure<f64> for Lanes<f64, 4> {
    fn on_path(
        path: Path,
        lanes: &mut Self,
        xs: &[f64],
        ys: &[f64],
        plain: &Plain<f64>,
    ) -> Option<u64> {
        super::fit_lanes_f64(path, lanes, xs, ys, plain)
    }
}

impl<F: Real, const N: usize> Lanes<F, N> {
    /// Measures the plain values of `xs` stored as `ys`; answers how many were not plain.
    #[inline(always)]
    pub(crate) fn add(&mut self, xs: &[F], ys: &[F], plain: &Plain<F>) -> u64 {
        let mut count = [F::ZERO; N];
        let (x_blocks, x_rest) = xs.as_chunks::<N>();
        let (y_blocks, y_rest) = ys.as_chunks::<N>();
        for (x, y) in x_blocks.iter().zip(y_blocks) {
            for l in 0..N {
                count[l] += self.one(l, x[l], y[l], plain);
            }
        }
        for (&x, &y) in x_rest.iter().zip(y_rest) {
            count[0] += self.one(0, x, y, plain);
        }
        let plain_count: f64 = count.iter().map(|c| c.wide()).sum();
        xs.len() as u64 - plain_count as u64
    }

    /// Measures one value in lane `l` if it is plain; answers 1 if it is, 0 if not. Every test
    /// is a mask, every update unconditional.
    #[inline(always)]
    fn one(&mut self, l: usize, x: F, y: F, plain: &Plain<F>) -> F {
        let max = |a: F, b: F| if b > a { b } else { a };
        let one = |m: bool| if m { F::ONE } else { F::ZERO };
        let ax = x.abs();
        let is = plain.is(ax, y.abs());
        // Exact for plain values: `inverse` is a power of two, and a rounding is within a
        // factor of two of the value (Sterbenz).
        let abs = (y * plain.inverse - x).abs();
        let rel = abs / ax;
        let (abs, rel, ax) = if is {
            (abs, rel, ax)
        } else {
            (F::ZERO, F::ZERO, F::ZERO)
        };
        self.exact[l] += one(is & (abs == F::ZERO));
        self.measured[l] += one(is);
        self.amax[l] = max(self.amax[l], ax);
        self.max_abs_error[l] = max(self.max_abs_error[l], abs);
        self.max_rel_error[l] = max(self.max_rel_error[l], rel);
        self.abs_error_sum[l] += abs;
        self.rel_error_sum[l] += rel;
        one(is)
    }
}
