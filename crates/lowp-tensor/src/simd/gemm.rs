//! The matrix product's micro-kernel on each [`Path`].
//!
//! There is one micro-kernel source ([`micro_kernel`], here, below the engine in
//! [`crate::ops::gemm`] that packs the blocks and calls it); on the AVX2 path it
//! is compiled with the AVX2 and FMA instructions enabled (the fused multiply-add becomes
//! `vfmadd`, the lanes vector registers), on the portable path for the baseline CPU (where
//! `mul_add` is the C library's correctly rounded `fma`). Both round each step once, in the
//! same order, so they give the same bits; the tests check it.

use super::{Path, dispatch};
use crate::element::Real;

/// Rows of the accumulator tile the micro-kernel keeps in registers.
pub(crate) const MR: usize = 6;
/// Columns of the f32 accumulator tile: two AVX2 vectors, so the 6 x 16 tile takes 12 of
/// the 16 vector registers.
pub(crate) const NR_F32: usize = 16;
/// Columns of the f64 accumulator tile (two AVX2 vectors of f64).
pub(crate) const NR_F64: usize = 8;

/// [`all_tiles`] on `path` (the portable code where the CPU lacks it).
pub(crate) fn micro_tiles<C: Real>(
    path: Path,
    mc: usize,
    nc: usize,
    kc: usize,
    a_pack: &[C],
    b_pack: &[C],
    acc: &mut [C],
) {
    if size_of::<C>() == 8 {
        dispatch!(
            path,
            fn tiles_f64<C: Real>(
                mc: usize,
                nc: usize,
                kc: usize,
                a_pack: &[C],
                b_pack: &[C],
                acc: &mut [C],
            ) -> () {
                all_tiles::<C, NR_F64>(mc, nc, kc, a_pack, b_pack, acc)
            }
        )
    } else {
        dispatch!(
            path,
            fn tiles_f32<C: Real>(
                mc: usize,
                nc: usize,
                kc: usize,
                a_pack: &[C],
                b_pack: &[C],
                acc: &mut [C],
            ) -> () {
                all_tiles::<C, NR_F32>(mc, nc, kc, a_pack, b_pack, acc)
            }
        )
    }
}

/// The micro-kernel: `c[i][j] = fma(a[p][i], b[p][j], c[i][j])` for `p` in order, over one
/// sliver of each packed block. Written once; [`micro_tiles`] compiles it for the AVX2 path
/// and the portable one.
#[inline(always)]
pub(crate) fn micro_kernel<C: Real, const NR: usize>(
    kc: usize,
    a: &[C],
    b: &[C],
    c: &mut [[C; NR]; MR],
) {
    // A local copy the compiler can keep in registers for the whole loop.
    let mut acc = *c;
    for (ap, bp) in a.chunks_exact(MR).zip(b.chunks_exact(NR)).take(kc) {
        for i in 0..MR {
            for j in 0..NR {
                acc[i][j] = ap[i].mul_add(bp[j], acc[i][j]);
            }
        }
    }
    *c = acc;
}

/// Runs the micro-kernel over every pair of slivers of a packed `mc x kc` block of `A` and
/// `kc x nc` block of `B`, updating the `mc x nc` accumulators `acc` (row-major).
#[inline(always)]
pub(crate) fn all_tiles<C: Real, const NR: usize>(
    mc: usize,
    nc: usize,
    kc: usize,
    a_pack: &[C],
    b_pack: &[C],
    acc: &mut [C],
) {
    for t in 0..nc.div_ceil(NR) {
        let cols = NR.min(nc - t * NR);
        let b = &b_pack[t * kc * NR..(t + 1) * kc * NR];
        for s in 0..mc.div_ceil(MR) {
            let rows = MR.min(mc - s * MR);
            let a = &a_pack[s * kc * MR..(s + 1) * kc * MR];
            let mut c = [[C::ZERO; NR]; MR];
            for (i, row) in c.iter_mut().enumerate().take(rows) {
                let at = (s * MR + i) * nc + t * NR;
                row[..cols].copy_from_slice(&acc[at..at + cols]);
            }
            micro_kernel(kc, a, b, &mut c);
            for (i, row) in c.iter().enumerate().take(rows) {
                let at = (s * MR + i) * nc + t * NR;
                acc[at..at + cols].copy_from_slice(&row[..cols]);
            }
        }
    }
}
