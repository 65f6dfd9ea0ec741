//! The summation kernel on each [`Path`].

use std::any::TypeId;

use super::{Path, dispatch};
use crate::element::{FloatElement, Real};

/// Independent running sums per block (four AVX2 vectors of f32).
pub const LANES: usize = 32;

/// The sum of `xs` by [`LANES`] running sums added pairwise, on `path`
/// (the portable code where the CPU lacks it). The order of the additions is fixed by the
/// source, so every path gives the same bits.
pub(crate) fn lane_sum<C: Real>(path: Path, xs: &[C]) -> C {
    lane_sum_widening(path, xs, |x| x)
}

/// [`lane_sum_widening`] of `xs` by `T`'s own exact widening, [`FloatElement::widen_one`].
/// f16 blocks take the CPU's f16-to-f32 instruction where `path` has one
/// ([`super::sum_f16`]), which the compiler does not pick for the widening's integer and
/// float operations; the widened values, and so the sum, are the same bits.
pub(crate) fn lane_sum_elements<T: FloatElement>(path: Path, xs: &[T]) -> T::Acc {
    if TypeId::of::<T>() == TypeId::of::<lowp::f16>() {
        // SAFETY: `T` is `lowp::f16` (just checked), a `#[repr(transparent)]` newtype over
        // `u16`: the memory of `xs.len()` values is that of as many initialised `u16`s, and
        // the slice borrows `xs`.
        let bits = unsafe { std::slice::from_raw_parts(xs.as_ptr().cast::<u16>(), xs.len()) };
        if let Some(sum) = super::sum_f16::lane_sum_f16(path, bits) {
            // An f32 through f64 and back is the same f32: `Acc` is f32 for f16.
            return T::Acc::of(f64::from(sum));
        }
    }
    lane_sum_widening(path, xs, T::widen_one)
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
    finish_lanes(lanes, chunks.remainder(), widen)
}

/// The end of every lane sum, whatever ran its whole chunks: the `rest` (fewer than
/// [`LANES`] elements) added into the first lanes, then the lanes added pairwise,
/// 32 -> 16 -> 8 -> 4 -> 2 -> 1, each step adding the upper half onto the lower.
#[inline(always)]
pub(crate) fn finish_lanes<T: Copy, C: Real>(
    mut lanes: [C; LANES],
    rest: &[T],
    widen: impl Fn(T) -> C,
) -> C {
    for (l, &x) in lanes.iter_mut().zip(rest) {
        *l = *l + widen(x);
    }
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
