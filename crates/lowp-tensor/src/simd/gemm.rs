//! The matrix product's micro-kernel on each [`Path`].
//!
//! There is one micro-kernel source ([`micro_kernel`], here, below the engine in
//! [`crate::ops::gemm`] that packs the blocks and calls it). It is compiled for each path
//! with that path's tile ([`Tile::on`]): on the AVX2 path with AVX2 and FMA enabled (the
//! fused multiply-add becomes `vfmadd`, a row of the tile two 256-bit registers), on the
//! AVX-512 path with AVX-512 F enabled too (a row two 512-bit registers, twice the rows), on
//! the portable path for the baseline CPU (where `mul_add` is the C library's correctly
//! rounded `fma`). Every path rounds each step once, in the same order, whatever its tile, so
//! they all give the same bits; the tests check it.

use super::Path;
use crate::element::Real;

/// The shape of the accumulator tile a micro-kernel keeps in registers: `mr` rows of `nr`
/// columns of the accumulation type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tile {
    /// Rows: how many rows of `A` a packed sliver holds.
    pub mr: usize,
    /// Columns: how many columns of `B` a packed sliver holds.
    pub nr: usize,
}

impl Tile {
    /// The tile of `path` for accumulators of `bytes` bytes (4 for f32, 8 for f64). AVX2 has
    /// 16 registers of 256 bits: 6 rows of two registers take 12, leaving room for a row of
    /// `B` and a broadcast element of `A`. AVX-512 has 32 registers of 512 bits: 12 rows of
    /// two take 24 (BLIS's and OpenBLAS's kernels keep about as many). The portable path
    /// takes AVX2's.
    pub(crate) fn on(path: Path, bytes: usize) -> Tile {
        let register = if path.is_avx512() { 64 } else { 32 };
        let mr = if path.is_avx512() { 12 } else { 6 };
        Tile {
            mr,
            nr: 2 * register / bytes,
        }
    }
}

/// The largest tile of any path: [`crate::ops::gemm`]'s block sizes are multiples of it.
pub(crate) const MAX_MR: usize = 12;

/// Where the accumulator of row `i`, column `j` of an `mc`-row block sits when the block is
/// laid out tile by tile, as [`each_tile`] keeps it: the tile of column sliver `t` and row
/// sliver `s` at `(t * row_slivers + s) * mr * nr` (the order the kernel visits them), its
/// `mr` rows of `nr` accumulators one after the other. A row's accumulators within one column
/// sliver are contiguous. Rows and columns past the block's edge pad the last tiles.
pub(crate) fn tiled_at(tile: Tile, mc: usize, i: usize, j: usize) -> usize {
    let row_slivers = mc.div_ceil(tile.mr);
    ((j / tile.nr * row_slivers + i / tile.mr) * tile.mr + i % tile.mr) * tile.nr + j % tile.nr
}

/// How many accumulators an `mc x nc` block takes in [`tiled_at`]'s layout: whole tiles.
pub(crate) fn tiled_len(tile: Tile, mc: usize, nc: usize) -> usize {
    mc.next_multiple_of(tile.mr) * nc.next_multiple_of(tile.nr)
}

/// [`all_tiles`] on `path`, with `path`'s tile: `a_pack` and `b_pack` must be packed in
/// slivers of `Tile::on(path, size_of::<C>())`, or of the portable path's tile where the CPU
/// lacks `path` (which then runs the portable code), and `tiles` laid out by that tile.
#[allow(clippy::too_many_arguments)]
pub(crate) fn micro_tiles<C: Real>(
    path: Path,
    mc: usize,
    nc: usize,
    kc: usize,
    a_pack: &[C],
    b_pack: &[C],
    tiles: &mut [C],
    fresh: bool,
) {
    /// Calls `all_tiles` with the tile as const generics, compiled with `$features`.
    macro_rules! tiles {
        ($features:literal, $mr:literal, $nr:expr, $r2:literal) => {{
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = $features)]
            unsafe fn run<C: Real>(
                mc: usize,
                nc: usize,
                kc: usize,
                a_pack: &[C],
                b_pack: &[C],
                tiles: &mut [C],
                fresh: bool,
            ) {
                all_tiles::<C, $mr, { $nr }, 4, $r2>(mc, nc, kc, a_pack, b_pack, tiles, fresh)
            }
            debug_assert_eq!(Tile::on(path, size_of::<C>()), Tile { mr: $mr, nr: $nr });
            // SAFETY: the caller checked that the CPU has `$features`, all `run` needs; its
            // body is safe code.
            unsafe { run(mc, nc, kc, a_pack, b_pack, tiles, fresh) }
        }};
    }
    let f64 = size_of::<C>() == 8;
    #[cfg(target_arch = "x86_64")]
    if path != Path::Portable && path.is_supported() {
        return match (path.is_avx512(), f64) {
            (true, false) => tiles!("avx512f,avx2,fma", 12, 32, 9),
            (true, true) => tiles!("avx512f,avx2,fma", 12, 16, 9),
            (false, false) => tiles!("avx2,fma", 6, 16, 4),
            (false, true) => tiles!("avx2,fma", 6, 8, 4),
        };
    }
    // The caller packs for the portable tile on a path this CPU lacks.
    if f64 {
        all_tiles::<C, 6, 8, 4, 4>(mc, nc, kc, a_pack, b_pack, tiles, fresh)
    } else {
        all_tiles::<C, 6, 16, 4, 4>(mc, nc, kc, a_pack, b_pack, tiles, fresh)
    }
}

/// The micro-kernel: `c[i][j] = fma(a[p][i], b[p][j], c[i][j])` for `p` in order and the
/// first `R` rows `i` of the tile, over one sliver of each packed block, starting from zeros
/// instead of `c` if `fresh`; then, if `fresh`, zeros in the rows past `R`. Written once;
/// [`micro_tiles`] compiles it for each path and its tile, and [`all_tiles`] for fewer rows
/// (`R < MR`) where a block's last sliver has fewer.
#[inline(always)]
pub(crate) fn micro_kernel<C: Real, const MR: usize, const R: usize, const NR: usize>(
    kc: usize,
    a: &[C],
    b: &[C],
    c: &mut [[C; NR]; MR],
    fresh: bool,
) {
    const { assert!(R <= MR, "more rows than the tile holds") };
    let (rows, rest) = c.split_at_mut(R);
    let rows: &mut [[C; NR]; R] = rows.try_into().expect("R rows");
    // A local copy the compiler can keep in registers for the whole loop.
    let mut acc = if fresh { [[C::ZERO; NR]; R] } else { *rows };
    for (ap, bp) in a.chunks_exact(MR).zip(b.chunks_exact(NR)).take(kc) {
        for i in 0..R {
            for j in 0..NR {
                acc[i][j] = ap[i].mul_add(bp[j], acc[i][j]);
            }
        }
    }
    *rows = acc;
    if fresh {
        // Rows the kernel skipped read as zero, as a zero-padded row of `A` computes them.
        rest.fill([C::ZERO; NR]);
    }
}

/// Runs the micro-kernel over every pair of slivers of a packed `mc x kc` block of `A` and
/// `kc x nc` block of `B`, updating the `mc x nc` accumulators `tiles` (laid out as
/// [`tiled_at`] says), or setting them if `fresh` (whatever they held). A sliver of `A` with
/// `R1` rows or fewer (the last, where `mc` is not a multiple of `MR`) takes the kernel for
/// `R1` rows, else one with `R2` or fewer the kernel for `R2` (`R1 <= R2 <= MR`): a 256-row
/// block is 21 slivers and 4 rows, and computing the padding of a 22nd whole sliver took 3%
/// of the product's time. [`micro_tiles`] takes 4 and 9 for tiles of 12 rows, not 4 and 8:
/// LLVM (rustc 1.95) vectorized the 8-row kernel's loop over the rows, with gathers and
/// scatters of the accumulators, and products of 512 rows, whose last sliver it took, ran
/// 40% slower. The 4-, 9- and 12-row kernels are each one loop of broadcasts and FMAs with
/// the accumulators in registers.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn all_tiles<
    C: Real,
    const MR: usize,
    const NR: usize,
    const R1: usize,
    const R2: usize,
>(
    mc: usize,
    nc: usize,
    kc: usize,
    a_pack: &[C],
    b_pack: &[C],
    tiles: &mut [C],
    fresh: bool,
) {
    // Inlined into the caller, which `micro_tiles` compiles with the path's features: left
    // out of line, the closure would be compiled for the baseline CPU, its `mul_add` a call.
    each_tile::<C, C, MR, NR>(
        mc,
        nc,
        kc,
        a_pack,
        b_pack,
        tiles,
        #[inline(always)]
        |a, b, c, live| {
            // Rows past `live` and up to the kernel's pad the sliver: computed to no effect.
            if live <= R1 {
                micro_kernel::<C, MR, R1, NR>(kc, a, b, c, fresh)
            } else if live <= R2 {
                micro_kernel::<C, MR, R2, NR>(kc, a, b, c, fresh)
            } else {
                micro_kernel::<C, MR, MR, NR>(kc, a, b, c, fresh)
            }
        },
    );
}

/// Runs `kernel(a_sliver, b_sliver, tile, live)` on every tile of an `mc x nc` block whose
/// packed slivers hold `steps` entries of `P` per row or column (sliver `s` of `A` at `s *
/// steps * MR`, of `B` at `t * steps * NR`; `live` of its `MR` rows are rows of `A`, the
/// others padding), each tile the accumulators of `tiles` in place
/// ([`tiled_at`]'s layout, so a tile is one run of memory the kernel loads and stores with
/// whole vector moves, however wide the block). Column slivers outside, row slivers inside:
/// the B sliver stays in cache while the A slivers stream past it from L2.
///
/// The next B sliver comes from L3 or memory, and the kernel's first pass over it would
/// stall on every line (the hardware prefetcher starts too late for a 16 KiB run read at
/// the kernel's pace). So each kernel call first asks for its share of the next sliver's
/// lines ([`prefetch`]): by the last row sliver the next column sliver is in L1
/// (`docs/performance.md` has what it gained).
///
/// # Panics
///
/// If `tiles` is shorter than the block's whole tiles.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn each_tile<C: Real, P, const MR: usize, const NR: usize>(
    mc: usize,
    nc: usize,
    steps: usize,
    a_pack: &[P],
    b_pack: &[P],
    tiles: &mut [C],
    mut kernel: impl FnMut(&[P], &[P], &mut [[C; NR]; MR], usize),
) {
    let (col_slivers, row_slivers) = (nc.div_ceil(NR), mc.div_ceil(MR));
    let sliver_len = steps * NR;
    // Entries of `P` per cache line, and each kernel call's share of the next sliver.
    let per_line = (64 / size_of::<P>().max(1)).max(1);
    let share = sliver_len.div_ceil(per_line).div_ceil(row_slivers.max(1)) * per_line;
    let (rows, _) = tiles.as_chunks_mut::<NR>();
    let mut tiles = rows.chunks_exact_mut(MR);
    for t in 0..col_slivers {
        let b = &b_pack[t * sliver_len..(t + 1) * sliver_len];
        let next = b_pack.get((t + 1) * sliver_len..(t + 2) * sliver_len);
        for s in 0..row_slivers {
            let a = &a_pack[s * steps * MR..(s + 1) * steps * MR];
            if let Some(next) = next {
                let part = next.get(s * share..).unwrap_or(&[]);
                part.iter().take(share).step_by(per_line).for_each(prefetch);
            }
            let tile = tiles.next().expect("accumulators for every tile");
            kernel(a, b, tile.try_into().expect("MR rows"), MR.min(mc - s * MR));
        }
    }
}

/// Asks the CPU to bring the cache line holding `x` into L1 (`prefetcht0`), without waiting
/// for it. A hint: it changes no value, only when a later load finds its line in cache. A
/// no-op off x86-64.
#[inline(always)]
fn prefetch<P>(x: &P) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` (SSE, which every x86-64 CPU has) reads nothing into a register and
    // cannot fault, whatever the address; this one is a live reference's.
    unsafe {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((x as *const P).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}
