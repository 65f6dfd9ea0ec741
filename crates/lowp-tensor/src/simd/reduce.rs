//! The summation kernel on each [`Path`].

use super::{Path, dispatch};
use crate::element::Real;

/// Independent running sums per block (four AVX2 vectors of f32).
pub const LANES: usize = 32;

/// The sum of `xs` by [`LANES`] running sums added pairwise, on `path`
/// (the portable code where the CPU lacks it). The order of the additions is fixed by the
/// source, so every path gives the same bits.
pub(crate) fn lane_sum<C: Real>(path: Path, xs: &[C]) -> C {
    lane_sum_widening(path, xs, |x| x)
}

/// [`lane_sum`] of `xs` each widened by `widen`, in the summing loop itself: no buffer and no
/// second pass. `widen` must be exact and branch-free (a few integer and float operations) for
/// the loop to stay on vectors; the sum is then the same as widening into a buffer first.
pub(crate) fn lane_sum_widening<T: Copy, C: Real, W: Widen<T, C>>(
    path: Path,
    xs: &[T],
    widen: W,
) -> C {
    dispatch!(
        path,
        fn lanes<T: Copy, C: Real, W: Widen<T, C>>(xs: &[T], widen: W) -> C {
            lane_sum_body(xs, widen)
        }
    )
}

/// A widening function for [`lane_sum_widening`] (one bound, for the dispatch macro).
pub(crate) trait Widen<T, C>: Fn(T) -> C + Copy {}

impl<T, C, W: Fn(T) -> C + Copy> Widen<T, C> for W {}

/// The sum of `xs` widened by `widen` by [`LANES`] running sums (element `i` into sum
/// `i % LANES`), then the sums added pairwise. Compiled per path by [`lane_sum_widening`].
#[inline(always)]
pub(crate) fn lane_sum_body<T: Copy, C: Real>(xs: &[T], widen: impl Fn(T) -> C) -> C {
    let mut lanes = [C::ZERO; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (l, &x) in lanes.iter_mut().zip(chunk) {
            *l = *l + widen(x);
        }
    }
    for (l, &x) in lanes.iter_mut().zip(chunks.remainder()) {
        *l = *l + widen(x);
    }
    // 32 -> 16 -> 8 -> 4 -> 2 -> 1, each step adding the upper half onto the lower.
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        let (low, high) = lanes.split_at_mut(width);
        for (l, &h) in low.iter_mut().zip(high.iter()) {
            *l = *l + h;
        }
    }
    lanes[0]
}
