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

use super::gemm::each_tile;
use super::{Path, dispatch};

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

/// The exponents of a block's values, which decide whether the pair kernel gives the FMA
/// chain's bits on it (`Exponents::pairs_are_exact`, beside the engine in `ops::gemm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Exponents {
    /// No value is subnormal, infinite or NaN.
    pub(crate) clean: bool,
    /// The smallest and largest exponent (unbiased, `floor(log2 |x|)`) of the nonzero
    /// values; `i32::MAX` and `i32::MIN` when there are none.
    pub(crate) min: i32,
    pub(crate) max: i32,
}

impl Exponents {
    /// A block of zeros (or none yet seen).
    pub(crate) const NONE: Exponents = Exponents {
        clean: true,
        min: i32::MAX,
        max: i32::MIN,
    };

    /// Takes `x` into account, one value at a time: the reference [`pair_exponents`]'s scan
    /// is tested against.
    #[cfg(test)]
    pub(crate) fn add(&mut self, x: f32) {
        let biased = ((x.to_bits() >> 23) & 0xff) as i32;
        let zero = x.to_bits() << 1 == 0;
        self.clean &= zero || (biased != 0 && biased != 0xff);
        if !zero {
            self.min = self.min.min(biased - 127);
            self.max = self.max.max(biased - 127);
        }
    }
}

/// The exponents of the values a block of pairs holds (two per pair, as [`pair`] put them),
/// as [`Exponents::add`] over each value would give them. Padding pairs are zeros, which
/// change nothing.
///
/// It runs once per block of `A` and of `B`, and compiled for the baseline CPU, with a branch
/// per value, the scan took a third of the pair kernel's time (`perf`, n = 1024 on a Zen 4):
/// so it is compiled for `path` and written without branches, for the vectorizer.
pub(crate) fn pair_exponents(path: Path, pairs: &[u32]) -> Exponents {
    dispatch!(
        path,
        fn scan_on(pairs: &[u32]) -> Exponents {
            let mut scan = ExponentLanes::NONE;
            let (chunks, rest) = pairs.as_chunks::<LANES>();
            for chunk in chunks {
                scan.add(chunk);
            }
            let mut tail = [0; LANES];
            tail[..rest.len()].copy_from_slice(rest);
            scan.add(&tail);
            scan.exponents()
        }
    )
}

/// The FMA kernel's packing of a block that was packed in pairs in `slivers` slivers of `w`
/// lines (pair `q`, line `c` at `(s * kp + q) * w + c`, `kp = kc.div_ceil(2)`): step `p`,
/// line `c` at `(s * kc + p) * w + c` of `pack`, each value the f32 its bf16 widens to
/// (exact). For the blocks [`crate::ops::gemm`] may not multiply in pairs.
pub(crate) fn unpair(pairs: &[u32], slivers: usize, kc: usize, w: usize, pack: &mut [f32]) {
    let kp = kc.div_ceil(2);
    for s in 0..slivers {
        let src = &pairs[s * kp * w..(s + 1) * kp * w];
        let dst = &mut pack[s * kc * w..(s + 1) * kc * w];
        for (p, line) in dst.chunks_exact_mut(w).enumerate() {
            // The first of a pair is its high half, the second its low half.
            let shift = if p % 2 == 0 { 0 } else { 16 };
            let pairs = &src[p / 2 * w..(p / 2 + 1) * w];
            for (x, &pair) in line.iter_mut().zip(pairs) {
                *x = f32::from_bits((pair << shift) & 0xffff_0000);
            }
        }
    }
}

/// Lanes of the exponent scan of [`pair_exponents`]: pairs taken at a time.
const LANES: usize = 16;

/// [`Exponents`] of a block as [`LANES`] independent lanes of biased exponents, so that the
/// scan compiles to vector code: the smallest exponent field of the nonzero values (255 while
/// there is none) and the largest (0 while there is none: a zero's own field is 0). A field of
/// 0 in a nonzero value (a subnormal) shows as a smallest field of 0, and one of 255 (infinite,
/// NaN) as a largest of 255: both make the block unclean, with no lane of their own.
struct ExponentLanes {
    min: [u32; LANES],
    max: [u32; LANES],
}

impl ExponentLanes {
    const NONE: ExponentLanes = ExponentLanes {
        min: [255; LANES],
        max: [0; LANES],
    };

    /// Takes in the two values of each of `pairs`, lane by lane.
    #[inline(always)]
    fn add(&mut self, pairs: &[u32; LANES]) {
        for (l, &pair) in pairs.iter().enumerate() {
            for half in [pair >> 16, pair & 0xffff] {
                // The sign dropped: the exponent field in the high byte, zero for ±0.
                let magnitude = (half << 1) & 0xffff;
                let biased = magnitude >> 8;
                let zero = u32::from(magnitude == 0);
                self.min[l] = self.min[l].min(biased | (zero * 255));
                self.max[l] = self.max[l].max(biased);
            }
        }
    }

    fn exponents(&self) -> Exponents {
        let min = self.min.iter().copied().min().unwrap_or(255);
        let max = self.max.iter().copied().max().unwrap_or(0);
        Exponents {
            clean: min != 0 && max != 255,
            min: if min == 255 {
                i32::MAX
            } else {
                min as i32 - 127
            },
            max: if max == 0 { i32::MIN } else { max as i32 - 127 },
        }
    }
}

/// Runs the tile kernel over every pair of slivers of a pair-packed `mc x kc` block of `A`
/// (sliver `s`, pair `q`, row `r` at `(s * kp + q) * MR + r`, `kp = kc.div_ceil(2)`) and
/// `kc x nc` block of `B` (sliver `t`, pair `q`, column `c` at `(t * kp + q) * NR + c`),
/// updating the `mc x nc` accumulators `tiles` (laid out as [`super::gemm::tiled_at`] says),
/// or setting them if `fresh` (whatever they held).
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
    tiles: &mut [f32],
    fresh: bool,
) {
    let kp = kc.div_ceil(2);
    assert!(supported(), "vdpbf16ps needs AVX512-BF16");
    assert!(
        a_pairs.len() >= mc.div_ceil(MR) * kp * MR && b_pairs.len() >= nc.div_ceil(NR) * kp * NR
    );
    each_tile::<f32, u32, MR, NR>(mc, nc, kp, a_pairs, b_pairs, tiles, |a, b, c, live| {
        // As the FMA kernel: a short last sliver computes 4 or 8 rows, not all 12.
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `supported()` was asserted: the CPU has AVX-512 F and AVX512-BF16, all
        // `tile` needs; `a` holds `kp * MR` pairs and `b` `kp * NR` (`each_tile`'s slivers).
        unsafe {
            match live {
                ..=4 => tile::<4>(kp, a, b, c, fresh),
                5..=8 => tile::<8>(kp, a, b, c, fresh),
                _ => tile::<MR>(kp, a, b, c, fresh),
            }
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (a, b, c, live);
    });
}

/// `kp` steps of `c[i] += a-pair[i] . b-pairs` for the first `R` rows `i` of the tile over
/// one sliver of each, the accumulators in `2 R` registers, starting from zeros instead of `c`
/// if `fresh`; then, if `fresh`, zeros in the rows past `R`.
///
/// # Safety
///
/// The CPU must have AVX-512 F and AVX512-BF16, `a` hold at least `kp * MR` pairs and `b`
/// `kp * NR`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bf16")]
unsafe fn tile<const R: usize>(
    kp: usize,
    a: &[u32],
    b: &[u32],
    c: &mut [[f32; NR]; MR],
    fresh: bool,
) {
    use std::arch::x86_64::{
        __m512bh, _mm512_dpbf16_ps, _mm512_loadu_ps, _mm512_loadu_si512, _mm512_set1_epi32,
        _mm512_setzero_ps, _mm512_storeu_ps,
    };
    const { assert!(R <= MR, "more rows than the tile holds") };
    debug_assert!(a.len() >= kp * MR && b.len() >= kp * NR);
    let mut lo = [_mm512_setzero_ps(); R];
    let mut hi = lo;
    if !fresh {
        for i in 0..R {
            // SAFETY: each row of `c` holds 32 f32s: two 16-lane loads.
            unsafe {
                lo[i] = _mm512_loadu_ps(c[i].as_ptr());
                hi[i] = _mm512_loadu_ps(c[i].as_ptr().add(16));
            }
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
            for (i, &pair) in a[q * MR..q * MR + R].iter().enumerate() {
                let x: __m512bh = std::mem::transmute(_mm512_set1_epi32(pair as i32));
                lo[i] = _mm512_dpbf16_ps(lo[i], x, b0);
                hi[i] = _mm512_dpbf16_ps(hi[i], x, b1);
            }
        }
    }
    for i in 0..R {
        // SAFETY: as the loads above.
        unsafe {
            _mm512_storeu_ps(c[i].as_mut_ptr(), lo[i]);
            _mm512_storeu_ps(c[i].as_mut_ptr().add(16), hi[i]);
        }
    }
    if fresh {
        // Rows the kernel skipped read as zero, as a zero-padded row of `A` computes them.
        c[R..].fill([0.0; NR]);
    }
}
