//! Error accounting: the squared error, flushed, clipped and saturated counts of the
//! blocks quantized.

use super::element::Elem;
use super::source::{QuantSource, Scan};
use super::stats::QuantStats;
use crate::quant::divisor::Divisor;

/// `(Σ x², Σ (x - q * step)²)` over a block (see [`Errors`]).
pub(super) fn block_error<S: QuantSource>(x: &[S], q: &[f32], step: f64) -> (f64, f64) {
    let mut errors = Errors::default();
    errors.add(x, q, step);
    errors.sums()
}

/// Independent lanes of `Σ x²` and `Σ (x - q * step)²`, in f64, and of the count of elements
/// flushed to zero, over any number of blocks:
/// `q * step` is exact (at most 4 + 28 bits), each difference is rounded once. The lanes let
/// the loop run on vectors; adding them up once per segment rather than per block of 16 or 32
/// values keeps that sum (a chain of dependent additions) off the per-element cost.
#[derive(Default)]
pub(super) struct Errors {
    sig: [[f64; 4]; 2],
    noise: [[f64; 4]; 2],
    /// Elements flushed to zero ([`QuantStats::flushed`]), per lane.
    flushed: [[u64; 4]; 2],
}

impl Errors {
    /// Adds the values `x` of one block, quantized to `q` with `step`.
    #[inline(always)]
    pub(super) fn add<S: QuantSource>(&mut self, x: &[S], q: &[f32], step: f64) {
        debug_assert_eq!(x.len(), q.len());
        match x.len() {
            // The block lengths of the row-wise schemes, as constants: straight-line code.
            16 => self.add_any(&x[..16], &q[..16], step),
            32 => self.add_any(&x[..32], &q[..32], step),
            n => self.add_any(x, &q[..n], step),
        }
    }

    /// [`Errors::add`] for any length.
    #[inline(always)]
    fn add_any<S: QuantSource>(&mut self, x: &[S], q: &[f32], step: f64) {
        let xs = x.chunks_exact(8);
        let qs = q.chunks_exact(8);
        let (xr, qr) = (xs.remainder(), qs.remainder());
        for (x, q) in xs.zip(qs) {
            // Two groups of four lanes, each a whole-array operation at every step, which the
            // compiler turns into one vector instruction each (an f64 vector of AVX).
            for h in 0..2 {
                let v: [f64; 4] = core::array::from_fn(|j| x[4 * h + j].widen());
                let y: [f64; 4] = core::array::from_fn(|j| q[4 * h + j] as f64 * step);
                let e: [f64; 4] = core::array::from_fn(|j| v[j] - y[j]);
                // Flushed: a non-zero value whose element is ±0, from the element itself (a
                // zero scale makes every `y` zero, but only for blocks of zeros).
                let z: [u64; 4] =
                    core::array::from_fn(|j| u64::from((v[j] != 0.0) & (q[4 * h + j] == 0.0)));
                let (sig, noise) = (&mut self.sig[h], &mut self.noise[h]);
                *sig = core::array::from_fn(|j| sig[j] + v[j] * v[j]);
                *noise = core::array::from_fn(|j| noise[j] + e[j] * e[j]);
                let flushed = &mut self.flushed[h];
                *flushed = core::array::from_fn(|j| flushed[j] + z[j]);
            }
        }
        for (j, (x, &q)) in xr.iter().zip(qr).enumerate() {
            let v = x.widen();
            let e = v - q as f64 * step;
            self.sig[j / 4][j % 4] += v * v;
            self.noise[j / 4][j % 4] += e * e;
            self.flushed[j / 4][j % 4] += u64::from((v != 0.0) & (q == 0.0));
        }
    }

    /// `(Σ x², Σ (x - x̂)²)`.
    pub(super) fn sums(&self) -> (f64, f64) {
        (
            self.sig.iter().flatten().sum(),
            self.noise.iter().flatten().sum(),
        )
    }

    /// Adds the sums and the flushed count to `stats`.
    pub(super) fn into_stats(self, stats: &mut QuantStats) {
        let (sig, noise) = self.sums();
        stats.signal += sig;
        stats.noise += noise;
        stats.flushed += self.flushed.iter().flatten().sum::<u64>();
    }
}

/// Counts one block in `stats`: its amax, non-finite elements and whether it clipped.
#[inline(always)]
pub(super) fn count_block<T: Elem>(stats: &mut QuantStats, scan: Scan, div: Divisor) {
    stats.blocks += 1;
    stats.amax = stats.amax.max(scan.amax);
    stats.nonfinite += scan.nonfinite;
    if scan.nonfinite == 0 && div != Divisor::Zero && T::overflows(scan.amax, div.step()) {
        stats.clipped_blocks += 1;
    }
}

/// Whether some element of a block of `scan` under `div` saturates beyond the top binade
/// ([`QuantStats::saturated`]): decided from the block's amax, so that only such blocks, which
/// the formulas almost never give, have their elements counted ([`saturated_in`]).
#[inline(always)]
pub(super) fn saturates<T: Elem>(scan: Scan, div: Divisor) -> bool {
    scan.nonfinite == 0 && div != Divisor::Zero && T::beyond_top(scan.amax, div.step())
}

/// The elements of `x` whose magnitude divided by `step` lies beyond `T`'s top binade.
pub(super) fn saturated_in<S: QuantSource, T: Elem>(x: &[S], step: f64) -> u64 {
    x.iter()
        .filter(|v| T::beyond_top(v.widen().abs(), step))
        .count() as u64
}
