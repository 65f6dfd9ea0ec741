//! The bf16 matrix product's micro-kernel on AVX512-BF16: `vdpbf16ps`, two multiply-adds per
//! f32 lane and instruction.
//!
//! `vdpbf16ps c, a, b` takes the 32-bit lanes of `a` and `b` as pairs of bf16s and does, in
//! each lane, `c = c + a.high * b.high`, then `c = c + a.low * b.low`, each step rounded once
//! to nearest even (a fused multiply-add: the product of two bf16s is exact in f32), with
//! subnormal inputs read as zero and subnormal results flushed to zero (Intel SDM,
//! VDPBF16PS). The packing puts step `p` of the chain in the high half and step `p + 1` in
//! the low half, so the instruction runs the chain `c = fma(a[p], b[p], c)` in its order.
//! Where no input and no intermediate result is subnormal, that is exactly the FMA
//! micro-kernel's arithmetic, bit for bit; [`crate::ops::gemm`] proves, block by block, when
//! that holds and uses the FMA kernel where it does not.

use super::Path;
use super::gemm::each_tile;

/// Rows of the tile: as [`Path::Avx512`]'s f32 tile, so a packed f32 sliver of `A` turns into
/// pairs in place of position.
pub(crate) const MR: usize = 12;
/// Columns of the tile: two 512-bit registers of f32 lanes.
pub(crate) const NR: usize = 32;

/// Whether [`pair_tiles`] can run: the CPU has AVX-512 F and AVX512-BF16.
pub(crate) fn supported() -> bool {
    Path::Avx512Bf16.is_supported()
}

/// The pair of bf16s `first` (the high half, multiplied first) and `second`, from their f32
/// widenings (exact: a bf16 is the high 16 bits of its f32).
#[inline(always)]
pub(crate) fn pair(first: f32, second: f32) -> u32 {
    (first.to_bits() & 0xffff_0000) | (second.to_bits() >> 16)
}

/// Runs the tile kernel over every pair of slivers of a pair-packed `mc x kc` block of `A`
/// (sliver `s`, pair `q`, row `r` at `(s * kp + q) * MR + r`, `kp = kc.div_ceil(2)`) and
/// `kc x nc` block of `B` (sliver `t`, pair `q`, column `c` at `(t * kp + q) * NR + c`),
/// updating the `mc x nc` accumulators `acc` (row-major, rows `stride` apart).
///
/// # Panics
///
/// If the CPU lacks AVX512-BF16 ([`supported`]) or a slice is shorter than the sizes say.
#[allow(clippy::too_many_arguments)]
pub(crate) fn pair_tiles(
    mc: usize,
    nc: usize,
    kc: usize,
    a_pairs: &[u32],
    b_pairs: &[u32],
    acc: &mut [f32],
    stride: usize,
) {
    let kp = kc.div_ceil(2);
    assert!(supported(), "vdpbf16ps needs AVX512-BF16");
    assert!(
        a_pairs.len() >= mc.div_ceil(MR) * kp * MR && b_pairs.len() >= nc.div_ceil(NR) * kp * NR
    );
    assert!(mc == 0 || acc.len() >= (mc - 1) * stride + nc);
    each_tile::<f32, u32, MR, NR>(mc, nc, kp, a_pairs, b_pairs, acc, stride, |a, b, c| {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `supported()` was asserted: the CPU has AVX-512 F and AVX512-BF16, all
        // `tile` needs; `a` holds `kp * MR` pairs and `b` `kp * NR` (`each_tile`'s slivers).
        unsafe {
            tile(kp, a, b, c)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (a, b, c);
    });
}

/// `kp` steps of `c[i] += a-pair[i] . b-pairs` over one sliver of each, the accumulators in
/// 24 registers.
///
/// # Safety
///
/// The CPU must have AVX-512 F and AVX512-BF16, `a` hold at least `kp * MR` pairs and `b`
/// `kp * NR`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn tile(kp: usize, a: &[u32], b: &[u32], c: &mut [[f32; NR]; MR]) {
    use std::arch::x86_64::{
        __m512bh, _mm512_dpbf16_ps, _mm512_loadu_ps, _mm512_loadu_si512, _mm512_set1_epi32,
        _mm512_setzero_ps, _mm512_storeu_ps,
    };
    debug_assert!(a.len() >= kp * MR && b.len() >= kp * NR);
    let mut lo = [_mm512_setzero_ps(); MR];
    let mut hi = lo;
    for i in 0..MR {
        // SAFETY: each row of `c` holds 32 f32s: two 16-lane loads.
        unsafe {
            lo[i] = _mm512_loadu_ps(c[i].as_ptr());
            hi[i] = _mm512_loadu_ps(c[i].as_ptr().add(16));
        }
    }
    for q in 0..kp {
        // SAFETY: `q < kp`, so `b[q * NR..q * NR + 32]` and `a[q * MR..q * MR + 12]` are in
        // bounds (the caller's length guarantee); the transmutes reinterpret 32-bit lanes as
        // the bf16 pairs they hold (both types are 512 bits of plain data).
        unsafe {
            let bp = b.as_ptr().add(q * NR);
            let b0: __m512bh = std::mem::transmute(_mm512_loadu_si512(bp.cast()));
            let b1: __m512bh = std::mem::transmute(_mm512_loadu_si512(bp.add(16).cast()));
            for (i, &pair) in a[q * MR..q * MR + MR].iter().enumerate() {
                let x: __m512bh = std::mem::transmute(_mm512_set1_epi32(pair as i32));
                lo[i] = _mm512_dpbf16_ps(lo[i], x, b0);
                hi[i] = _mm512_dpbf16_ps(hi[i], x, b1);
            }
        }
    }
    for i in 0..MR {
        // SAFETY: as the loads above.
        unsafe {
            _mm512_storeu_ps(c[i].as_mut_ptr(), lo[i]);
            _mm512_storeu_ps(c[i].as_mut_ptr().add(16), hi[i]);
        }
    }
}
