//! The matrix product engine: blocked, packed, accumulating in `T::Acc`.
//!
//! `C = A B` for row-major `A` (m x k) and `B` (k x n) of any float dtype. Blocks of `A` and
//! `B` are packed into contiguous slivers of the accumulation type (converting on the way:
//! a bf16 matrix is never widened whole), a register-blocked micro-kernel updates an `MR x NR`
//! tile of accumulators with fused multiply-adds, and each finished row block is rounded once
//! to the output dtype.
//!
//! Every element of `C` is the chain `c = fma(a[i][p], b[p][j], c)` for `p = 0, 1, ..., k-1`
//! starting from 0: blocking changes where the chain is stored between steps, never its
//! order. So the result does not depend on the block sizes, the number of threads or the
//! path (the AVX2 path and the portable one compile the same source, with and without the FMA
//! instruction), and the error bound of a dot product holds for each element (Higham, eq.
//! 3.5): `|computed - exact| <= gamma_k * sum_p |a[i][p] b[p][j]|`, `gamma_k = k u / (1 - k
//! u)`, before the final rounding to the output dtype.

use crate::element::{FloatElement, Real};
use crate::simd::Path;
use crate::simd::gemm::{MR, NR_F32, NR_F64, micro_tiles};
use rayon::prelude::*;

/// Columns of the accumulator tile for the accumulation type `C`.
fn nr<C: Real>() -> usize {
    if size_of::<C>() == 8 { NR_F64 } else { NR_F32 }
}
/// Depth of a packed block.
const KC: usize = 256;
/// Rows of a packed block of `A` (a multiple of `MR`).
const MC: usize = 96;
/// Columns of a packed block of `B` (a multiple of both tile widths).
const NC: usize = 256;
/// Multiply-adds below which a product stays on one thread.
pub(crate) const SERIAL_WORK: usize = 1 << 18;

/// `out = a * b` for row-major `a` (m x k), `b` (k x n), `out` (m x n), on `path`, using all
/// of rayon's threads for large products.
pub(crate) fn gemm<T: FloatElement>(
    path: Path,
    m: usize,
    n: usize,
    k: usize,
    a: &[T],
    b: &[T],
    out: &mut [T],
) {
    debug_assert!(a.len() == m * k && b.len() == k * n && out.len() == m * n);
    if m == 0 || n == 0 {
        return;
    }
    let threads = rayon::current_num_threads().max(1);
    // Row blocks of several micro-tiles, at least four per thread when there is work enough.
    let rows = (m.div_ceil(threads * 4)).next_multiple_of(MR).max(MR);
    let work = m * n * k.max(1);
    let task = |(t, out_rows): (usize, &mut [T])| {
        let first = t * rows;
        let count = out_rows.len() / n;
        row_block(path, first, count, n, k, a, b, out_rows);
    };
    if work < SERIAL_WORK {
        out.chunks_mut(rows * n).enumerate().for_each(task);
    } else {
        out.par_chunks_mut(rows * n).enumerate().for_each(task);
    }
}

/// Rows `first..first + count` of the product, into `out` (`count x n`).
#[allow(clippy::too_many_arguments)]
fn row_block<T: FloatElement>(
    path: Path,
    first: usize,
    count: usize,
    n: usize,
    k: usize,
    a: &[T],
    b: &[T],
    out: &mut [T],
) {
    let mut a_pack = vec![T::Acc::ZERO; MC * KC];
    let mut b_pack = vec![T::Acc::ZERO; KC * NC];
    // 96 x 256 accumulators (up to 192 KiB): on the heap, not in a thread's stack frame.
    #[allow(clippy::useless_vec)]
    let mut acc = vec![T::Acc::ZERO; MC * NC];
    let mut row = vec![T::Acc::ZERO; KC.max(NC)];
    for ic in (0..count).step_by(MC) {
        let mc = MC.min(count - ic);
        for jc in (0..n).step_by(NC) {
            let nc = NC.min(n - jc);
            acc[..mc * nc].fill(T::Acc::ZERO);
            for pc in (0..k).step_by(KC) {
                let kc = KC.min(k - pc);
                pack_a(a, k, first + ic, mc, pc, kc, &mut a_pack, &mut row);
                pack_b(b, n, pc, kc, jc, nc, nr::<T::Acc>(), &mut b_pack, &mut row);
                micro_tiles(path, mc, nc, kc, &a_pack, &b_pack, &mut acc[..mc * nc]);
            }
            for i in 0..mc {
                let dst = &mut out[(ic + i) * n + jc..(ic + i) * n + jc + nc];
                T::Acc::narrow(&acc[i * nc..(i + 1) * nc], dst, false);
            }
        }
    }
}

/// Packs rows `i0..i0 + mc`, columns `p0..p0 + kc` of `a` (row stride `k`) into slivers of
/// `MR` rows: sliver `s`, step `p`, row `r` at `(s * kc + p) * MR + r`, zero-padded.
#[allow(clippy::too_many_arguments)]
fn pack_a<T: FloatElement>(
    a: &[T],
    k: usize,
    i0: usize,
    mc: usize,
    p0: usize,
    kc: usize,
    pack: &mut [T::Acc],
    row: &mut [T::Acc],
) {
    let slivers = mc.div_ceil(MR);
    for s in 0..slivers {
        let base = s * kc * MR;
        for r in 0..MR {
            let i = s * MR + r;
            if i < mc {
                let src = &a[(i0 + i) * k + p0..(i0 + i) * k + p0 + kc];
                T::Acc::widen(src, &mut row[..kc]);
                for p in 0..kc {
                    pack[base + p * MR + r] = row[p];
                }
            } else {
                for p in 0..kc {
                    pack[base + p * MR + r] = T::Acc::ZERO;
                }
            }
        }
    }
}

/// Packs rows `p0..p0 + kc`, columns `j0..j0 + nc` of `b` (row stride `n`) into slivers of
/// `nr` columns: sliver `t`, step `p`, column `c` at `(t * kc + p) * nr + c`, zero-padded.
#[allow(clippy::too_many_arguments)]
fn pack_b<T: FloatElement>(
    b: &[T],
    n: usize,
    p0: usize,
    kc: usize,
    j0: usize,
    nc: usize,
    nr: usize,
    pack: &mut [T::Acc],
    row: &mut [T::Acc],
) {
    let slivers = nc.div_ceil(nr);
    for p in 0..kc {
        let src = &b[(p0 + p) * n + j0..(p0 + p) * n + j0 + nc];
        T::Acc::widen(src, &mut row[..nc]);
        for t in 0..slivers {
            let dst = &mut pack[(t * kc + p) * nr..(t * kc + p + 1) * nr];
            let cols = nr.min(nc - t * nr);
            dst[..cols].copy_from_slice(&row[t * nr..t * nr + cols]);
            dst[cols..].fill(T::Acc::ZERO);
        }
    }
}
