//! The summation kernel on each [`Path`].

use super::{Path, dispatch};
use crate::element::Real;

/// Independent running sums per block (four AVX2 vectors of f32).
pub const LANES: usize = 32;

/// The sum of `xs` by [`LANES`] running sums added pairwise, on `path`
/// (the portable code where the CPU lacks it). The order of the additions is fixed by the
/// source, so every path gives the same bits.
pub(crate) fn lane_sum<C: Real>(path: Path, xs: &[C]) -> C {
    dispatch!(
        path,
        fn lanes<C: Real>(xs: &[C]) -> C {
            lane_sum_body(xs)
        }
    )
}

/// The sum of `xs` by [`LANES`] running sums (element `i` into sum `i % LANES`), then the
/// sums added pairwise. Compiled per path by [`lane_sum`].
#[inline(always)]
pub(crate) fn lane_sum_body<C: Real>(xs: &[C]) -> C {
    let mut lanes = [C::ZERO; LANES];
    let mut chunks = xs.chunks_exact(LANES);
    for chunk in &mut chunks {
        for (l, &x) in lanes.iter_mut().zip(chunk) {
            *l = *l + x;
        }
    }
    for (l, &x) in lanes.iter_mut().zip(chunks.remainder()) {
        *l = *l + x;
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
