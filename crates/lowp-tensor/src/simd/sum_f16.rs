//! The block sums of f16 values with `vcvtph2ps`, the CPU's f16-to-f32 instruction (F16C on
//! the AVX2 path, AVX-512 F on the AVX-512 paths).
//!
//! The portable widening ([`crate::element::f16_bits_to_f32`]) is about ten integer and float
//! operations per vector, which made the f16 sum compute-bound where the bf16 sum (one shift)
//! runs at the speed of memory; no compiler turns it into `vcvtph2ps`. The instruction widens
//! every f16 exactly: normals and subnormals to the same value, ±0 and ±infinity to
//! themselves, and a NaN to the quiet NaN with its payload in the top of f32's mantissa, as
//! the portable widening does (Intel SDM, VCVTPH2PS: the conversion is exact, and DAZ does
//! not apply to it). Lane `l` of a block's [`LANES`] running sums takes its elements `l`,
//! `l + 32`, ... in order, and the blocks end in [`finish_blocks`], so the sums are those of
//! [`super::reduce`]'s portable body bit for bit.

use super::Path;
use super::lanes::{LANES, MAX_BLOCKS, finish_blocks};
use crate::blocks::BLOCK;
use crate::element::f16_bits_to_f32;

/// The block sums of the f16s whose bits are `xs` into `sums` (one per block, as
/// [`super::reduce::block_sums_elements`] checked), by `vcvtph2ps`, where `path` runs vector
/// code and the CPU has the instruction; `false`, leaving `sums` alone, elsewhere (the caller
/// then takes the portable widening).
pub(crate) fn block_sums_f16(path: Path, xs: &[u16], sums: &mut [f32]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if path.is_avx512() && path.is_supported() {
            // SAFETY: the CPU was just checked to have AVX-512 F, all `blocks_avx512` needs.
            unsafe { blocks_avx512(xs, sums) };
            return true;
        }
        if path == Path::Avx2Fma && path.is_supported() && lowp::cpu::has(lowp::cpu::Feature::F16c)
        {
            // SAFETY: the CPU was just checked to have AVX2 and F16C, all `blocks_f16c` needs.
            unsafe { blocks_f16c(xs, sums) };
            return true;
        }
    }
    let _ = (path, xs, sums);
    false
}

/// [`block_sums_f16`] on four 8-lane registers per block.
///
/// # Safety
///
/// The CPU must have AVX2 and F16C.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,f16c")]
unsafe fn blocks_f16c(xs: &[u16], sums: &mut [f32]) {
    use std::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm256_add_ps, _mm256_cvtph_ps, _mm256_setzero_ps,
        _mm256_storeu_ps,
    };
    let mut lanes = [[0f32; LANES]; MAX_BLOCKS];
    for (l, block) in lanes.iter_mut().zip(xs.chunks(BLOCK)) {
        let mut acc = [_mm256_setzero_ps(); LANES / 8];
        for chunk in block.chunks_exact(LANES) {
            for (k, a) in acc.iter_mut().enumerate() {
                // SAFETY: `chunk` holds 32 `u16`s, so eight of them from `8 * k` (k < 4) are
                // in bounds; the load has no alignment requirement.
                let halves =
                    unsafe { _mm_loadu_si128(chunk.as_ptr().add(8 * k).cast::<__m128i>()) };
                *a = _mm256_add_ps(*a, _mm256_cvtph_ps(halves));
            }
        }
        for (k, a) in acc.iter().enumerate() {
            // SAFETY: `l` holds 32 f32s, so eight from `8 * k` (k < 4) are in bounds.
            unsafe { _mm256_storeu_ps(l.as_mut_ptr().add(8 * k), *a) };
        }
    }
    finish_blocks(&lanes, xs, f16_bits_to_f32, sums);
}

/// [`block_sums_f16`] on two 16-lane registers per block.
///
/// # Safety
///
/// The CPU must have AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn blocks_avx512(xs: &[u16], sums: &mut [f32]) {
    use std::arch::x86_64::{
        __m256i, _mm256_loadu_si256, _mm512_add_ps, _mm512_cvtph_ps, _mm512_setzero_ps,
        _mm512_storeu_ps,
    };
    let mut lanes = [[0f32; LANES]; MAX_BLOCKS];
    for (l, block) in lanes.iter_mut().zip(xs.chunks(BLOCK)) {
        let mut acc = [_mm512_setzero_ps(); LANES / 16];
        for chunk in block.chunks_exact(LANES) {
            for (k, a) in acc.iter_mut().enumerate() {
                // SAFETY: `chunk` holds 32 `u16`s, so sixteen of them from `16 * k` (k < 2)
                // are in bounds; the load has no alignment requirement.
                let halves =
                    unsafe { _mm256_loadu_si256(chunk.as_ptr().add(16 * k).cast::<__m256i>()) };
                *a = _mm512_add_ps(*a, _mm512_cvtph_ps(halves));
            }
        }
        for (k, a) in acc.iter().enumerate() {
            // SAFETY: `l` holds 32 f32s, so sixteen from `16 * k` (k < 2) are in bounds.
            unsafe { _mm512_storeu_ps(l.as_mut_ptr().add(16 * k), *a) };
        }
    }
    finish_blocks(&lanes, xs, f16_bits_to_f32, sums);
}
