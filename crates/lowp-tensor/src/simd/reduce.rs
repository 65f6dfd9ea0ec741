//! The summation kernel on each [`Path`].

use super::{Path, dispatch};
use crate::element::Real;
use crate::ops::reduce::lane_sum_body;

/// The sum of `xs` by [`crate::ops::reduce::LANES`] running sums added pairwise, on `path`
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
