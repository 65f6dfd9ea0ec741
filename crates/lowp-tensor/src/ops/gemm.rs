//! The matrix product engine: blocked, packed, accumulating in `T::Acc`.
//!
//! `C = A B` for row-major `A` (m x k) and `B` (k x n) of any float dtype. Blocks of `A` and
//! `B` are packed into contiguous slivers of the accumulation type (converting on the way:
//! a bf16 matrix is never widened whole), a register-blocked micro-kernel updates a tile
//! ([`Tile`]) of accumulators with fused multiply-adds, and each finished row block is rounded once
//! to the output dtype.
//!
//! Every element of `C` is the chain `c = fma(a[i][p], b[p][j], c)` for `p = 0, 1, ..., k-1`
//! starting from 0: blocking changes where the chain is stored between steps, never its
//! order. So the result does not depend on the block sizes, the tile, the number of threads
//! or the path (the AVX-512, AVX2 and portable paths compile the same source, with and
//! without the FMA instruction, for their own tiles), and the error bound of a dot product holds for each element (Higham, eq.
//! 3.5): `|computed - exact| <= gamma_k * sum_p |a[i][p] b[p][j]|`, `gamma_k = k u / (1 - k
//! u)`, before the final rounding to the output dtype.

use crate::dtype::DType;
use crate::element::{FloatElement, Real};
use crate::ops::kept::Aligned;
use crate::simd::Path;
use crate::simd::dot_bf16::{self, Exponents, pair_tiles, pair_up};
use crate::simd::gemm::{MAX_MR, Tile, micro_tiles, tiled_at, tiled_len};
use rayon::prelude::*;

/// Depth of a packed block.
const KC: usize = 256;
/// Rows of a packed block of `A` (a multiple of every tile's rows): 96 x 256 f32s (96 KiB)
/// stay in L2 while the micro-kernel runs over them.
const MC: usize = 96;
/// Columns of a packed panel of `B` at most (a multiple of every tile's columns); see
/// [`panel_columns`]. The panel, all `k` rows of it, is packed once and shared by every thread.
const NC: usize = 1024;

/// Columns of a packed panel of `B` on `path`, for accumulators of `bytes` bytes. Each column
/// of `B` a panel holds spares packing `A` once more, but a row block's accumulators (`MC x`
/// this many) share L2 with its block of `A` (96 KiB): 1024 columns of f32 (384 KiB) suit the
/// 1 MiB of L2 of the AVX-512 machines (Zen 4: f32 and bf16 products of n = 1024 and 2048
/// ran 2% to 9% faster than with 512), where 2048 (768 KiB) ran n = 2048 10% slower. f64
/// accumulators and the AVX2 machines (256 to 512 KiB of L2) keep 512.
fn panel_columns(path: Path, bytes: usize) -> usize {
    if path.is_avx512() && bytes == 4 {
        NC
    } else {
        NC / 2
    }
}

/// Multiply-adds below which a product stays on one thread.
pub(crate) const SERIAL_WORK: usize = 1 << 18;

/// `out = a * b` for row-major `a` (m x k), `b` (k x n), `out` (m x n), on `path`, using all
/// of rayon's threads for large products.
///
/// The rows of `A` are split among the threads, the same number of tiles each. For each panel
/// of [`panel_columns`] columns, `B` is widened and packed ([`PackedB`]): once, its
/// [`KC`]-row blocks in parallel, where it is deeper than one block, and by each thread for
/// itself where it is one block deep. Each thread packs its [`MC`]-row blocks of `A` and runs
/// the micro-kernel over them, accumulating in its own buffer of `T::Acc` (one accumulator per
/// element of the row block, tile by tile), which it rounds to `T` once, when the row block is
/// done. The buffers stay on their threads for the next product ([`Aligned`]).
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
    if k == 0 {
        // Empty sums: no depth block sets the accumulators, which need not start at zero.
        let zeros = vec![T::Acc::ZERO; n];
        out.chunks_mut(n)
            .for_each(|row| T::Acc::narrow(&zeros, row, false));
        return;
    }
    // A path this CPU lacks runs the portable code, and so packs for the portable tile.
    let path = if path.is_supported() {
        path
    } else {
        Path::Portable
    };
    let tile = Tile::on(path, size_of::<T::Acc>());
    let parallel = m * n * k >= SERIAL_WORK;
    if parallel && rayon::current_thread_index().is_none() {
        // Called from outside rayon's pool: enter it once. rayon runs each parallel step
        // called from outside by handing it to a worker and putting the caller to sleep.
        return rayon::scope(|_| gemm(path, m, n, k, a, b, out));
    }
    let threads = if parallel {
        rayon::current_num_threads().max(1)
    } else {
        1
    };
    // One job per thread, each the same number of whole tiles, run in row blocks of `MC`.
    // (Jobs of `MC` rows shared the work badly: a 1024-row product made 11 of them, and one
    // of two threads idled while the other ran the last.)
    let rows = m.div_ceil(MAX_MR).div_ceil(threads) * MAX_MR;
    // The widest panel packed: all of its columns only where `n` needs them.
    let columns = panel_columns(path, size_of::<T::Acc>());
    let width = columns.min(n.next_multiple_of(tile.nr));
    let pairs = uses_pairs::<T>(path, k);
    // Where `B` is one block deep, each job packs its own copy of the panel. Shared, it was
    // packed by one thread while the others waited, into lines their caches held from the
    // last product: at n = 256 on two threads of a Zen 4, f32 went from 134 to 161-176
    // GFLOP/s and bf16 from 196 to 228-245 with a copy each. A deeper panel is packed once,
    // its blocks in parallel: with a copy each, n = 512 ran no faster and bf16 at n = 1024
    // 8% slower.
    let own = k <= KC;
    let new_packed_b = || PackedB::<T::Acc>::new(k, width, pairs);
    let mut shared = (!own).then(new_packed_b);
    for jc in (0..n).step_by(columns) {
        let nc = columns.min(n - jc);
        let fill = |b_pack: &mut PackedB<T::Acc>, parallel: bool| {
            b_pack.fill(path, tile, b, n, k, jc, nc, parallel);
        };
        if let Some(b_pack) = &mut shared {
            fill(b_pack, parallel);
        }
        let task = |(scratch, own_b): &mut (Scratch<T::Acc>, PackedB<T::Acc>),
                    (t, out_rows): (usize, &mut [T])| {
            let panel = match &shared {
                Some(b_pack) => b_pack.panel(jc, nc),
                None => {
                    fill(own_b, false);
                    own_b.panel(jc, nc)
                }
            };
            let count = out_rows.len() / n;
            row_block(
                path,
                tile,
                t * rows,
                count,
                &panel,
                k,
                a,
                n,
                out_rows,
                scratch,
            );
        };
        // A job's own panel, or an empty one where the panel is shared.
        let scratch = || {
            let own_b = if own {
                new_packed_b()
            } else {
                PackedB::new(0, 0, false)
            };
            (Scratch::new(width, pairs), own_b)
        };
        if parallel {
            out.par_chunks_mut(rows * n)
                .enumerate()
                .for_each_init(scratch, task);
        } else {
            let mut scratch = scratch();
            out.chunks_mut(rows * n)
                .enumerate()
                .for_each(|job| task(&mut scratch, job));
        }
    }
}

/// All `k` rows of a panel of `B`, packed for the micro-kernel in [`KC`]-row blocks of `KC x
/// width` by [`pack_b`], and, where the bf16 pair kernel runs, each block's pairs (empty
/// where it does not) and the exponents of its values.
struct PackedB<C: Real> {
    width: usize,
    pack: Aligned<C>,
    has_pairs: bool,
    pairs: Vec<Aligned<u32>>,
    exponents: Vec<Exponents>,
}

impl<C: Real> PackedB<C> {
    /// Room for a panel of `k` rows and up to `width` columns, with pairs if `pairs`.
    fn new(k: usize, width: usize, pairs: bool) -> Self {
        let blocks = k.div_ceil(KC);
        let pair_len = if pairs { KC.div_ceil(2) * width } else { 0 };
        PackedB {
            width,
            pack: Aligned::new(blocks * KC * width),
            has_pairs: pairs,
            pairs: (0..blocks).map(|_| Aligned::new(pair_len)).collect(),
            exponents: vec![Exponents::NONE; blocks],
        }
    }

    /// Packs columns `jc..jc + nc` of `b` (`k x n`), its blocks on all of rayon's threads if
    /// `parallel`.
    #[allow(clippy::too_many_arguments)]
    fn fill<T: FloatElement<Acc = C>>(
        &mut self,
        path: Path,
        tile: Tile,
        b: &[T],
        n: usize,
        k: usize,
        jc: usize,
        nc: usize,
        parallel: bool,
    ) {
        let block = |(blk, ((pack, pairs), exponents)): BlockOfB<'_, C>| {
            let pc = blk * KC;
            let kc = KC.min(k - pc);
            pack_b(b, n, pc, kc, jc, nc, tile.nr, pack);
            if let (false, Some(pack)) = (pairs.is_empty(), C::as_f32s(pack)) {
                *exponents = pair_up(path, pack, nc.div_ceil(tile.nr), kc, tile.nr, pairs);
            }
        };
        let chunk = KC * self.width;
        if parallel {
            self.pack
                .par_chunks_mut(chunk)
                .zip(self.pairs.par_iter_mut())
                .zip(self.exponents.par_iter_mut())
                .enumerate()
                .for_each(block);
        } else {
            self.pack
                .chunks_mut(chunk)
                .zip(self.pairs.iter_mut())
                .zip(self.exponents.iter_mut())
                .enumerate()
                .for_each(block);
        }
    }

    /// The panel of columns `jc..jc + nc` that [`PackedB::fill`] packed last.
    fn panel(&self, jc: usize, nc: usize) -> Panel<'_, C> {
        Panel {
            jc,
            nc,
            width: self.width,
            pack: &self.pack,
            pairs: self
                .has_pairs
                .then_some((&self.pairs[..], &self.exponents[..])),
        }
    }
}

/// One [`KC`]-row block of a panel of `B` to pack: its index, its part of the packed panel,
/// its pairs and its exponents.
type BlockOfB<'a, C> = (
    usize,
    ((&'a mut [C], &'a mut Aligned<u32>), &'a mut Exponents),
);

/// A packed panel of `B`: columns `jc..jc + nc`, every row, in [`KC`]-row blocks of `KC x
/// width` (packed by [`pack_b`]), and, where the bf16 pair kernel runs, each block's pairs and
/// the exponents of its values.
struct Panel<'a, C> {
    jc: usize,
    nc: usize,
    width: usize,
    pack: &'a [C],
    pairs: Option<(&'a [Aligned<u32>], &'a [Exponents])>,
}

/// Rows `first..first + count` of the product's columns `panel.jc..panel.jc + panel.nc`, into
/// `out` (`count` rows of stride `n`).
#[allow(clippy::too_many_arguments)]
fn row_block<T: FloatElement>(
    path: Path,
    tile: Tile,
    first: usize,
    count: usize,
    panel: &Panel<'_, T::Acc>,
    k: usize,
    a: &[T],
    n: usize,
    out: &mut [T],
    scratch: &mut Scratch<T::Acc>,
) {
    let (jc, nc) = (panel.jc, panel.nc);
    let Scratch {
        a_pack,
        acc,
        rows,
        a_pairs,
    } = scratch;
    let (a_pack, acc, rows, a_pairs) = (
        &mut a_pack[..],
        &mut acc[..],
        &mut rows[..],
        &mut a_pairs[..],
    );
    for ic in (0..count).step_by(MC) {
        let mc = MC.min(count - ic);
        let acc = &mut acc[..tiled_len(tile, mc, nc)];
        // Whether every accumulator is known to be a multiple of 2^-126 that the next pair
        // block cannot take past 2^127 (see `Exponents::pairs_are_exact`): true for zeros
        // and after pair blocks; after an FMA block, asked of the values (`ready`).
        let mut acc_ready = true;
        for pc in (0..k).step_by(KC) {
            let kc = KC.min(k - pc);
            // The first block sets the accumulators: nothing zeroes them before.
            let fresh = pc == 0;
            pack_a(a, k, first + ic, mc, pc, kc, tile.mr, a_pack, rows);
            let at = pc * panel.width;
            let b = &panel.pack[at..at + kc * nc.next_multiple_of(tile.nr)];
            if let (Some((b_pairs, b_exponents)), Some(a_f32), Some(acc_f32)) = (
                panel.pairs,
                T::Acc::as_f32s(a_pack),
                T::Acc::as_f32s_mut(acc),
            ) {
                let exponents = pair_up(path, a_f32, mc.div_ceil(tile.mr), kc, tile.mr, a_pairs);
                acc_ready = acc_ready || acc_f32.iter().all(|&c| Exponents::ready(c));
                if acc_ready && exponents.pairs_are_exact(b_exponents[pc / KC]) {
                    pair_tiles(mc, nc, kc, a_pairs, &b_pairs[pc / KC], acc_f32, fresh);
                    continue;
                }
                acc_ready = false;
            }
            micro_tiles(path, mc, nc, kc, a_pack, b, acc, fresh);
        }
        // Each row gathered from its tiles, then rounded in one call. A row's part in the
        // next column sliver is a whole column of tiles further on.
        let line = &mut rows[..nc];
        let step = tiled_at(tile, mc, 0, tile.nr);
        for i in 0..mc {
            let start = tiled_at(tile, mc, i, 0);
            for (t, part) in line.chunks_mut(tile.nr).enumerate() {
                let at = start + t * step;
                part.copy_from_slice(&acc[at..at + part.len()]);
            }
            let dst = &mut out[(ic + i) * n + jc..(ic + i) * n + jc + nc];
            T::Acc::narrow(line, dst, false);
        }
    }
}

/// A thread's buffers for [`row_block`], made once per rayon job rather than per row block
/// (and kept on the thread for the next product: [`Aligned`]).
struct Scratch<C: Real> {
    /// A packed [`MC`]` x `[`KC`] block of `A`.
    a_pack: Aligned<C>,
    /// [`MC`]` x width` accumulators (up to 384 KiB), tile by tile.
    acc: Aligned<C>,
    /// [`MAX_MR`] widened rows for [`pack_a`]; a row of accumulators on its way out.
    rows: Aligned<C>,
    /// The pairs of the block of `A`, where the bf16 pair kernel runs.
    a_pairs: Aligned<u32>,
}

impl<C: Real> Scratch<C> {
    /// Buffers for panels up to `width` columns wide, with room for pairs if `pairs`.
    fn new(width: usize, pairs: bool) -> Self {
        Scratch {
            a_pack: Aligned::new(MC * KC),
            acc: Aligned::new(MC * width),
            rows: Aligned::new((MAX_MR * KC).max(NC)),
            a_pairs: Aligned::new(if pairs { MC * KC.div_ceil(2) } else { 0 }),
        }
    }
}

/// Whether bf16 products on `path` take the pair kernel ([`dot_bf16`]): `T` is bf16, the
/// path and the CPU have AVX512-BF16, and `k` is at most 2^20 (the bound that keeps the
/// accumulators below 2^127 in [`Exponents::pairs_are_exact`]'s proof).
fn uses_pairs<T: FloatElement>(path: Path, k: usize) -> bool {
    T::DTYPE == DType::BF16 && path == Path::Avx512Bf16 && dot_bf16::supported() && k <= 1 << 20
}

// The gate of the pair kernel: when the exponents of two blocks (`dot_bf16::Exponents`, which
// `pair_up` scans) promise that `vdpbf16ps` gives the FMA chain's bits.
impl Exponents {
    /// Whether an accumulator `c` of any history may enter a pair block: 0, or normal with an
    /// exponent from -103 to 113 (so a multiple of 2^-126 below 2^114). A sufficient test:
    /// the accumulators a pair block leaves are multiples of 2^-126 without it.
    fn ready(c: f32) -> bool {
        let biased = ((c.to_bits() >> 23) & 0xff) as i32;
        c == 0.0 || (24..=240).contains(&biased)
    }

    /// Whether `vdpbf16ps` over this block of `A` (`self`) and a block of `B` (`b`), from
    /// accumulators that are [`Exponents::ready`], gives exactly the FMA chain's results.
    ///
    /// Proof. The instruction differs from `c = fma(a, b, c)` only in reading subnormal
    /// inputs as zero and flushing subnormal results to zero. Both blocks are clean, so no
    /// input value is subnormal. A nonzero bf16 is `M 2^(e-7)` with an integer `M` and `e >=
    /// min`, so with `min_a + min_b >= -112` every product is an integer multiple of 2^-126,
    /// and so is every ready accumulator. By induction every intermediate `c` is such a
    /// multiple `N 2^-126`: the exact `c + a b` is one; if `|N| < 2^24` it is an f32 and is
    /// not rounded, else it is at least 2^-102 and rounds to a multiple of its f32 spacing,
    /// at least 2^-125. A nonzero multiple of 2^-126 is at least 2^-126: never subnormal, so
    /// neither the inputs nor the results are ever flushed. For overflow, with `max_a + max_b
    /// <= 100` each product is below 2^102 and a block of at most 256 steps adds below 2^110
    /// to an accumulator below 2^114; [`uses_pairs`] keeps `k` at most 2^20 (4096 blocks), so
    /// every accumulator stays below 2^114 + 2^122 < 2^127, finite on both kernels alike.
    fn pairs_are_exact(self, b: Exponents) -> bool {
        let zeros = self.min == i32::MAX || b.min == i32::MAX;
        self.clean && b.clean && (zeros || (self.min + b.min >= -112 && self.max + b.max <= 100))
    }
}

/// Packs rows `i0..i0 + mc`, columns `p0..p0 + kc` of `a` (row stride `k`) into slivers of
/// `mr` rows (6 or [`MAX_MR`], [`Tile::on`]'s): sliver `s`, step `p`, row `r` at
/// `(s * kc + p) * mr + r`, zero-padded. `rows` is scratch for `mr` rows of `kc` values, used
/// by the types that do not widen in registers.
#[allow(clippy::too_many_arguments)]
fn pack_a<T: FloatElement>(
    a: &[T],
    k: usize,
    i0: usize,
    mc: usize,
    p0: usize,
    kc: usize,
    mr: usize,
    pack: &mut [T::Acc],
    rows: &mut [T::Acc],
) {
    for s in 0..mc.div_ceil(mr) {
        let sliver = &mut pack[s * kc * mr..(s + 1) * kc * mr];
        let count = mr.min(mc - s * mr);
        // Rows past `count` stand in for the padding: `transpose` writes zeros there.
        let row = |r: usize| {
            let at = (i0 + s * mr + r.min(count - 1)) * k + p0;
            &a[at..at + kc]
        };
        // A sliver is a transposition of `mr` rows; with `mr` a constant the loop over a
        // step's rows unrolls, and each value is read and written once.
        match mr {
            6 => pack_sliver::<T, 6>(row, count, sliver, rows),
            MAX_MR => pack_sliver::<T, MAX_MR>(row, count, sliver, rows),
            _ => unreachable!("Tile::on gives tiles of 6 or {MAX_MR} rows, not {mr}"),
        }
    }
}

/// One sliver of [`pack_a`]: its first `count` rows are `row(0)`, `row(1)`, ... (`row(r)`
/// for `r >= count` only a placeholder), widened in registers or, for the types that are not,
/// through `rows` on the bulk conversion paths.
#[inline(always)]
fn pack_sliver<'a, T: FloatElement, const MR: usize>(
    row: impl Fn(usize) -> &'a [T],
    count: usize,
    sliver: &mut [T::Acc],
    rows: &mut [T::Acc],
) {
    if T::WIDENS_IN_REGISTERS {
        transpose::<T, T::Acc, MR>(core::array::from_fn(row), count, sliver, T::widen_one);
    } else {
        let kc = sliver.len() / MR;
        let rows = &mut rows[..MR * kc];
        for (r, dst) in rows.chunks_exact_mut(kc).enumerate().take(count) {
            T::Acc::widen(row(r), dst);
        }
        let rows: [&[T::Acc]; MR] = core::array::from_fn(|r| &rows[r.min(count - 1) * kc..][..kc]);
        transpose::<T::Acc, T::Acc, MR>(rows, count, sliver, |x| x);
    }
}

/// Writes `widen(rows[r][p])` at `sliver[p * MR + r]` for the first `count` rows, zero for
/// the others (rows past `count` are only placeholders).
#[inline(always)]
fn transpose<E: Copy, C: Real, const MR: usize>(
    rows: [&[E]; MR],
    count: usize,
    sliver: &mut [C],
    widen: impl Fn(E) -> C,
) {
    let kc = sliver.len() / MR;
    let rows = rows.map(|r| &r[..kc]);
    let steps = sliver.chunks_exact_mut(MR).enumerate();
    if count == MR {
        for (p, step) in steps {
            for (x, row) in step.iter_mut().zip(&rows) {
                *x = widen(row[p]);
            }
        }
    } else {
        for (p, step) in steps {
            for (r, (x, row)) in step.iter_mut().zip(&rows).enumerate() {
                *x = if r < count { widen(row[p]) } else { C::ZERO };
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
) {
    // f32 and f64, their own accumulation type, go straight from `b` into the slivers, each
    // value read and written once (2% on f32 products of n = 256 and 512, Zen 4). The narrower
    // types widen each row on the bulk paths first, into `row`: widened one value at a time
    // as f32 is, f16 ran 1% to 2% slower.
    let direct = size_of::<T>() == size_of::<T::Acc>();
    let mut row = [T::Acc::ZERO; NC];
    let row = &mut row[..nc];
    for p in 0..kc {
        let src = &b[(p0 + p) * n + j0..(p0 + p) * n + j0 + nc];
        if !direct {
            T::Acc::widen(src, row);
        }
        for t in 0..nc.div_ceil(nr) {
            let dst = &mut pack[(t * kc + p) * nr..(t * kc + p + 1) * nr];
            let cols = nr.min(nc - t * nr);
            let (dst, pad) = dst.split_at_mut(cols);
            if direct {
                for (x, &y) in dst.iter_mut().zip(&src[t * nr..]) {
                    *x = T::widen_one(y);
                }
            } else {
                dst.copy_from_slice(&row[t * nr..t * nr + cols]);
            }
            pad.fill(T::Acc::ZERO);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::gemm::all_tiles;

    /// A random bf16 (as its f32) with exponent in `lo..=hi`, random sign and significand.
    fn bf16_between(state: &mut u64, lo: i32, hi: i32) -> f32 {
        *state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = *state >> 16;
        let e = lo + (r % (hi - lo + 1) as u64) as i32;
        let bits = ((r >> 20) & 1) << 31 | ((e + 127) as u64) << 23 | ((r >> 24) & 0x7f) << 16;
        f32::from_bits(bits as u32)
    }

    /// `vdpbf16ps` as Intel's SDM describes it, one lane: subnormal inputs (the accumulator
    /// too) read as zero, each step a fused multiply-add rounded to nearest even, a subnormal
    /// result flushed to (signed) zero.
    fn flushed_fma(a: f32, b: f32, c: f32) -> f32 {
        let daz = |x: f32| {
            if x.is_subnormal() {
                0.0f32.copysign(x)
            } else {
                x
            }
        };
        let r = daz(a).mul_add(daz(b), daz(c));
        if r.is_subnormal() {
            0.0f32.copysign(r)
        } else {
            r
        }
    }

    /// Where `pairs_are_exact` says so, the flushing chain equals the FMA chain, on blocks
    /// built to sit at the proof's limits (smallest products of 2^-126, cancellations, the
    /// overflow bound) and on random blocks either side of them; and the limits are needed:
    /// past them the chains differ on some block.
    #[test]
    fn the_pair_kernels_flushing_is_invisible_where_the_exponents_allow() {
        let mut state = 7u64;
        let (mut differed_outside, mut inside) = (false, 0);
        for trial in 0..4000 {
            let (lo, hi) = match trial % 4 {
                0 => (-66, -58),
                1 => (-56, -49),
                2 => (-20, 50),
                _ => (-70, 60),
            };
            let kc = 1 + (trial * 37) % 256;
            let a: Vec<f32> = (0..kc).map(|_| bf16_between(&mut state, lo, hi)).collect();
            let mut b: Vec<f32> = (0..kc).map(|_| bf16_between(&mut state, lo, hi)).collect();
            // Cancel the sum so far on some steps, leaving a small remainder.
            if trial % 3 == 0 && kc > 2 {
                let cancel = -b[0] * a[0] / a[kc / 2];
                b[kc / 2] = f32::from_bits(cancel.to_bits() & 0xffff_0000);
            }
            let (mut ea, mut eb) = (Exponents::NONE, Exponents::NONE);
            a.iter().for_each(|&x| ea.add(x));
            b.iter().for_each(|&x| eb.add(x));
            let (mut exact, mut flushed) = (0f32, 0f32);
            for p in 0..kc {
                exact = a[p].mul_add(b[p], exact);
                flushed = flushed_fma(a[p], b[p], flushed);
            }
            if ea.pairs_are_exact(eb) {
                inside += 1;
                assert_eq!(
                    exact.to_bits(),
                    flushed.to_bits(),
                    "trial {trial}: {a:?} . {b:?}"
                );
                // The proof's invariant, which lets the next block go on in pairs.
                assert_eq!(
                    (f64::from(flushed) * 2f64.powi(126)).fract(),
                    0.0,
                    "trial {trial}"
                );
            } else {
                differed_outside |= exact.to_bits() != flushed.to_bits();
            }
        }
        assert!(
            differed_outside,
            "no block past the limits was flushed: the test is too weak"
        );
        assert!(inside > 1500, "only {inside} blocks within the limits");
    }

    /// The packers against their layouts written out plainly, for every tile shape of any
    /// path (the AVX-512 ones too, which this CPU may lack) and each way of widening (f32 and
    /// f64 as they are, bf16 in registers, f8e4m3fn through a buffer), at offsets into the
    /// matrices and with rows and columns short of a tile. The buffers start full of 7s, so a
    /// padding left unwritten shows.
    #[test]
    fn packing_puts_each_value_where_the_kernel_reads_it() {
        /// Checks that `pack` holds slivers of `w` lines (rows of A, columns of B) of `kc`
        /// steps, line `l` of step `p` being `source(l, p)` for the first `lines` lines and
        /// zero past them.
        fn layout<C: Real>(
            pack: &[C],
            w: usize,
            kc: usize,
            lines: usize,
            source: impl Fn(usize, usize) -> f64,
            what: &str,
        ) {
            for (at, got) in pack.iter().enumerate() {
                let (sliver, p, lane) = (at / (kc * w), at / w % kc, at % w);
                let l = sliver * w + lane;
                let want = if l < lines { source(l, p) } else { 0.0 };
                assert_eq!(
                    got.f64(),
                    want,
                    "{what}: sliver {sliver} step {p} lane {lane}"
                );
            }
        }
        fn check<T: FloatElement>() {
            let value = |i: usize| T::from_f64(((i * 37) % 101) as f64 / 8.0 - 6.0);
            let (k, n) = (40, 100);
            let a: Vec<T> = (0..40 * k).map(value).collect();
            let b: Vec<T> = (0..k * n).map(|i| value(i + 5)).collect();
            let (i0, p0, kc, j0) = (3, 7, 19, 5);
            for mr in [6, MAX_MR] {
                let mc = 2 * mr + 5;
                let mut pack = vec![T::Acc::of(7.0); mc.next_multiple_of(mr) * kc];
                let mut rows = vec![T::Acc::ZERO; mr * kc];
                pack_a(&a, k, i0, mc, p0, kc, mr, &mut pack, &mut rows);
                let source = |i: usize, p: usize| a[(i0 + i) * k + p0 + p].to_f64();
                layout(
                    &pack,
                    mr,
                    kc,
                    mc,
                    source,
                    &format!("{} A, mr {mr}", T::DTYPE),
                );
            }
            for nr in [8usize, 16, 32] {
                let nc = 2 * nr + 3;
                let mut pack = vec![T::Acc::of(7.0); nc.next_multiple_of(nr) * kc];
                pack_b(&b, n, p0, kc, j0, nc, nr, &mut pack);
                let source = |j: usize, p: usize| b[(p0 + p) * n + j0 + j].to_f64();
                layout(
                    &pack,
                    nr,
                    kc,
                    nc,
                    source,
                    &format!("{} B, nr {nr}", T::DTYPE),
                );
            }
        }
        check::<f32>();
        check::<f64>();
        check::<lowp::bf16>();
        check::<lowp::f8e4m3fn>();
    }

    #[test]
    fn exponents_see_subnormals_infinities_and_nans() {
        for (x, clean) in [
            (1.0f32, true),
            (0.0, true),
            (-0.0, true),
            (f32::MIN_POSITIVE, true),
            (f32::from_bits(0x0001_0000), false),
            (f32::INFINITY, false),
            (f32::NAN, false),
        ] {
            let mut e = Exponents::NONE;
            e.add(x);
            assert_eq!(e.clean, clean, "{x:e}");
        }
        let mut e = Exponents::NONE;
        [0.75f32, -3.0, 0.0].iter().for_each(|&x| e.add(x));
        assert_eq!((e.min, e.max), (-1, 1));
        assert!(Exponents::NONE.pairs_are_exact(e) && e.pairs_are_exact(Exponents::NONE));
        assert!(Exponents::ready(0.0) && Exponents::ready(2f32.powi(-103)));
        assert!(!Exponents::ready(2f32.powi(-104)) && !Exponents::ready(2f32.powi(114)));
    }

    /// On every path, `pair_up`'s exponents are [`Exponents::add`]'s over the same values,
    /// whatever mix of zeros, subnormals, infinities, NaNs and normal exponents a block holds,
    /// and its pairs are the same.
    #[test]
    fn pair_up_scans_exponents_as_add_does_on_every_path() {
        let specials = [0.0f32, -0.0, 1.0, -0.75, 2f32.powi(-126), f32::from_bits(1)];
        let specials = [&specials[..], &[f32::INFINITY, f32::NAN, 3e38, -1e-30]].concat();
        let mut state = 5u64;
        let (w, kc, slivers) = (4usize, 7usize, 3usize);
        for trial in 0..400 {
            let pack: Vec<f32> = (0..slivers * kc * w)
                .map(|i| match (trial + i) % 5 {
                    // Mostly zeros and one or two specials: the clean and empty cases too.
                    0 if trial % 3 == 0 => specials[(trial / 3 + i) % specials.len()],
                    0 | 1 => bf16_between(&mut state, -30 - trial as i32 % 90, 30),
                    _ => 0.0,
                })
                .collect();
            let mut want = Exponents::NONE;
            pack.iter().for_each(|&x| want.add(x));
            let mut first: Option<Vec<u32>> = None;
            for path in Path::ALL.into_iter().filter(|p| p.is_supported()) {
                let mut pairs = vec![0u32; slivers * kc.div_ceil(2) * w];
                let got = pair_up(path, &pack, slivers, kc, w, &mut pairs);
                if want.clean {
                    assert_eq!(got, want, "{path:?} {pack:?}");
                } else {
                    assert!(!got.clean, "{path:?} {pack:?}");
                }
                assert_eq!(
                    *first.get_or_insert_with(|| pairs.clone()),
                    pairs,
                    "{path:?}"
                );
            }
        }
    }

    /// Pairs hold step `2q` in the high half and `2q + 1` (or zero) in the low half, sliver
    /// by sliver.
    #[test]
    fn pairs_are_laid_out_in_the_chains_order() {
        let (w, kc, slivers) = (3usize, 5usize, 2usize);
        let pack: Vec<f32> = (0..slivers * kc * w).map(|i| (i + 1) as f32).collect();
        let mut pairs = vec![0u32; slivers * kc.div_ceil(2) * w];
        pair_up(Path::best(), &pack, slivers, kc, w, &mut pairs);
        let half = |x: f32| x.to_bits() >> 16;
        // Sliver 1, pair 1, column 2: steps 2 and 3 of that sliver.
        let at = (kc.div_ceil(2) + 1) * w + 2;
        assert_eq!(pairs[at] >> 16, half(pack[(kc + 2) * w + 2]));
        assert_eq!(pairs[at] & 0xffff, half(pack[(kc + 3) * w + 2]));
        // The last pair of an odd depth ends in zero.
        let last = (kc.div_ceil(2) + 2) * w;
        assert_eq!(pairs[last] & 0xffff, 0);
    }

    /// On a CPU with AVX512-BF16: the pair kernel gives the FMA kernel's bits on blocks the
    /// exponents allow, and differs from it on subnormal inputs (the flush the gate avoids).
    #[test]
    fn the_pair_kernel_equals_the_fma_kernel_where_allowed() {
        if !dot_bf16::supported() {
            eprintln!("no AVX512-BF16 here: the pair kernel is not run");
            return;
        }
        let tile = Tile::on(Path::Avx512Bf16, 4);
        let mut state = 11u64;
        for (mc, nc, kc, lo, hi) in [
            (12usize, 32usize, 256usize, -20, 20),
            (37, 70, 19, -56, 40),
            (96, 512, 256, -1, 1),
        ] {
            let a: Vec<f32> = (0..mc * kc)
                .map(|_| bf16_between(&mut state, lo, hi))
                .collect();
            let b: Vec<f32> = (0..kc * nc)
                .map(|_| bf16_between(&mut state, lo, hi))
                .collect();
            // The product on the pair kernel or the FMA one, and whether the gate allows pairs.
            let run = |a: &[f32], b: &[f32], pairs: bool| {
                let mut a_pack = vec![0f32; mc.next_multiple_of(tile.mr) * kc];
                let mut rows = vec![0f32; tile.mr * kc];
                pack_a(a, kc, 0, mc, 0, kc, tile.mr, &mut a_pack, &mut rows);
                let mut b_pack = vec![0f32; nc.next_multiple_of(tile.nr) * kc];
                pack_b(b, nc, 0, kc, 0, nc, tile.nr, &mut b_pack);
                let mut acc = vec![f32::NAN; tiled_len(tile, mc, nc)];
                let mut ap = vec![0u32; a_pack.len()];
                let mut bp = vec![0u32; b_pack.len()];
                let pair = |pack: &[f32], w: usize, n: usize, pairs: &mut [u32]| {
                    pair_up(Path::Avx512Bf16, pack, n.div_ceil(w), kc, w, pairs)
                };
                let ea = pair(&a_pack, tile.mr, mc, &mut ap);
                let eb = pair(&b_pack, tile.nr, nc, &mut bp);
                // Fresh: the NaNs left in `acc` must not be read.
                if pairs {
                    pair_tiles(mc, nc, kc, &ap, &bp, &mut acc, true);
                } else {
                    all_tiles::<f32, 12, 32>(mc, nc, kc, &a_pack, &b_pack, &mut acc, true);
                }
                let bits = (0..mc * nc)
                    .map(|e| acc[tiled_at(tile, mc, e / nc, e % nc)].to_bits())
                    .collect::<Vec<_>>();
                (bits, ea.pairs_are_exact(eb))
            };
            let (pairs, allowed) = run(&a, &b, true);
            assert!(allowed, "{mc}x{kc}x{nc}");
            assert_eq!(pairs, run(&a, &b, false).0, "{mc}x{kc}x{nc}");
            // Where the gate says no, the instruction differs: row 0 of A is zero but for
            // step 0, so element (0, 0) is one product. A subnormal input (read as zero by
            // the instruction), then a product that underflows (flushed by it).
            let mut a2 = a.clone();
            a2[..kc].fill(0.0);
            let mut b2 = b.clone();
            for (x, y, want) in [
                (f32::from_bits(0x0040_0000), 2f32.powi(100), 2f32.powi(-27)),
                (2f32.powi(-70), 2f32.powi(-70), 2f32.powi(-140)),
            ] {
                a2[0] = x;
                b2[0] = y;
                let ((pairs, allowed), (fma, _)) = (run(&a2, &b2, true), run(&a2, &b2, false));
                assert!(!allowed, "{mc}x{kc}x{nc}: {x:e} x {y:e} let through");
                assert_eq!(f32::from_bits(fma[0]), want, "{mc}x{kc}x{nc}");
                assert_eq!(pairs[0], 0, "{mc}x{kc}x{nc}: {x:e} x {y:e} was not flushed");
                // Rows below the first hold no such product.
                assert_eq!(pairs[nc..], fma[nc..], "{mc}x{kc}x{nc}");
            }
        }
    }
}
