//! The summation kernel on each [`Path`].
//!
//! A sum runs over blocks of [`BLOCK`] elements, each by [`LANES`] running sums (element `i`
//! of a block into sum `i % LANES`) that are then added pairwise. The kernels take up to
//! [`MAX_BLOCKS`] blocks per call and run the running sums of all of them before any of
//! their pairwise trees: a tree between two blocks stalls the stream of loads, and cost a
//! quarter of the speed of a bare read of the same bytes when each block ended in its own
//! (measured by a scratch program on the Zen 3 of `docs/performance.md`). The order of the
//! additions within each block is the same either way, and fixed by the source, so every
//! path gives the same bits.

use std::any::TypeId;

use super::{Path, dispatch};
use crate::blocks::BLOCK;
use crate::element::{FloatElement, Real};

pub use super::lanes::LANES;
pub(crate) use super::lanes::MAX_BLOCKS;
use super::lanes::finish_blocks;

/// The sum of `xs`, at most one [`BLOCK`], by [`LANES`] running sums added pairwise, on
/// `path` (the portable code where the CPU lacks it).
pub(crate) fn lane_sum<C: Real>(path: Path, xs: &[C]) -> C {
    let mut sum = [C::ZERO];
    block_sums_widening(path, xs, |x| x, &mut sum[..xs.len().div_ceil(BLOCK).max(1)]);
    sum[0]
}

/// The lane sum of each [`BLOCK`]-element block of `xs` (the last may be shorter), each
/// element widened by `T`'s own exact widening, [`FloatElement::widen_one`], into `sums`, one
/// per block. f16 blocks take the CPU's f16-to-f32 instruction where `path` has one
/// ([`super::sum_f16`]), which the compiler does not pick for the widening's integer and
/// float operations; the widened values, and so the sums, are the same bits.
///
/// # Panics
///
/// Unless `sums` has one element per block and there are at most [`MAX_BLOCKS`] blocks.
pub(crate) fn block_sums_elements<T: FloatElement>(path: Path, xs: &[T], sums: &mut [T::Acc]) {
    check_blocks(xs.len(), sums.len());
    if TypeId::of::<T>() == TypeId::of::<lowp::f16>()
        && TypeId::of::<T::Acc>() == TypeId::of::<f32>()
    {
        // SAFETY: `T` is `lowp::f16`, a `#[repr(transparent)]` newtype over `u16`, and
        // `T::Acc` is `f32` (both just checked): the memory of `xs.len()` values is that of
        // as many initialised `u16`s, that of `sums` that of as many `f32`s, and both slices
        // borrow what they view (`sums` exclusively).
        let (bits, wide) = unsafe {
            (
                std::slice::from_raw_parts(xs.as_ptr().cast::<u16>(), xs.len()),
                std::slice::from_raw_parts_mut(sums.as_mut_ptr().cast::<f32>(), sums.len()),
            )
        };
        if super::sum_f16::block_sums_f16(path, bits, wide) {
            return;
        }
    }
    block_sums_widening(path, xs, T::widen_one, sums)
}

/// [`block_sums_elements`] with the widening `widen`, in the summing loop itself: no buffer
/// and no second pass. `widen` must be exact and branch-free (a few integer and float
/// operations) for the loop to stay on vectors; the sums are then the same as widening into
/// a buffer first.
fn block_sums_widening<T: Copy, C: Real, W: Widen<T, C>>(
    path: Path,
    xs: &[T],
    widen: W,
    sums: &mut [C],
) {
    check_blocks(xs.len(), sums.len());
    dispatch!(
        path,
        fn blocks<T: Copy, C: Real, W: Widen<T, C>>(xs: &[T], widen: W, sums: &mut [C]) -> () {
            block_sums_body(xs, widen, sums)
        }
    )
}

/// A widening function for [`block_sums_widening`] (one bound, for the dispatch macro).
pub(crate) trait Widen<T, C>: Fn(T) -> C + Copy {}

impl<T, C, W: Fn(T) -> C + Copy> Widen<T, C> for W {}

/// Panics unless `sums` (of length `count`) has one element per block of a slice of `len`
/// and there are at most [`MAX_BLOCKS`] blocks: a kernel bug, never user input.
#[track_caller]
pub(crate) fn check_blocks(len: usize, count: usize) {
    assert!(
        count == len.div_ceil(BLOCK).max(1) && count <= MAX_BLOCKS,
        "lowp-tensor: {count} block sums for {len} elements"
    );
}

/// The running sums of every block of `xs`, widened by `widen`, then each block's tree.
/// Compiled per path by [`block_sums_widening`].
#[inline(always)]
fn block_sums_body<T: Copy, C: Real>(xs: &[T], widen: impl Fn(T) -> C + Copy, sums: &mut [C]) {
    let mut lanes = [[C::ZERO; LANES]; MAX_BLOCKS];
    for (l, block) in lanes.iter_mut().zip(xs.chunks(BLOCK)) {
        for chunk in block.chunks_exact(LANES) {
            for (s, &x) in l.iter_mut().zip(chunk) {
                *s = *s + widen(x);
            }
        }
    }
    finish_blocks(&lanes, xs, widen, sums);
}
