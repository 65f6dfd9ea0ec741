//! The matrix product's micro-kernel on each [`Path`].
//!
//! There is one micro-kernel source ([`crate::ops::gemm::micro_kernel`]); on the AVX2 path it
//! is compiled with the AVX2 and FMA instructions enabled (the fused multiply-add becomes
//! `vfmadd`, the lanes vector registers), on the portable path for the baseline CPU (where
//! `mul_add` is the C library's correctly rounded `fma`). Both round each step once, in the
//! same order, so they give the same bits; the tests check it.

use super::{Path, dispatch};
use crate::element::Real;
use crate::ops::gemm::{NR_F32, NR_F64, all_tiles};

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
