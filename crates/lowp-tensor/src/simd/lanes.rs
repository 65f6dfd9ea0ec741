//! The running sums of a summation block, shared by every kernel of [`super::reduce`]: how
//! many lanes a block has, how many blocks one call runs, and how each block's lanes end in
//! its sum.

use crate::blocks::BLOCK;
use crate::element::Real;

/// Independent running sums per block (four AVX2 vectors of f32).
pub const LANES: usize = 32;

/// Most blocks one call of [`super::reduce::block_sums_elements`] sums.
pub(crate) const MAX_BLOCKS: usize = 32;

/// The end of every block's sum, whatever ran its whole chunks of [`LANES`] into `lanes`:
/// the block's last `len % LANES` elements added into its first lanes, then its lanes added
/// pairwise, 32 -> 16 -> 8 -> 4 -> 2 -> 1, each step adding the upper half onto the lower.
/// `sums` gets one sum per block (a single zero for an empty `xs`).
#[inline(always)]
pub(crate) fn finish_blocks<T: Copy, C: Real>(
    lanes: &[[C; LANES]; MAX_BLOCKS],
    xs: &[T],
    widen: impl Fn(T) -> C,
    sums: &mut [C],
) {
    if xs.is_empty() {
        sums[0] = C::ZERO;
    }
    for ((block_lanes, block), sum) in lanes.iter().zip(xs.chunks(BLOCK)).zip(sums) {
        let mut l = *block_lanes;
        for (s, &x) in l.iter_mut().zip(block.chunks_exact(LANES).remainder()) {
            *s = *s + widen(x);
        }
        let mut width = LANES;
        while width > 1 {
            width /= 2;
            let (low, high) = l.split_at_mut(width);
            for (s, &h) in low.iter_mut().zip(high.iter()) {
                *s = *s + h;
            }
        }
        *sum = l[0];
    }
}
