//! The matrix product engine: blocked, packed, accumulating in `T::Acc`.
//!
//! `C = A B` for row-major `A` (m x k) and `B` (k x n) of any float dtype. Blocks of `A` and
//! `B` are packed into contiguous slivers of the accumulation type (converting on the way:
//! a bf16 matrix is never widened whole), a register-blocked micro-kernel updates a tile
//! (`Tile`) of accumulators with fused multiply-adds, and each finished row block is rounded once
//! to the output dtype. Where `vdpbf16ps` runs (`dot_bf16`), bf16 blocks are packed in pairs
//! of bf16s instead, straight from the matrices, and widened only where its gate sends a
//! block to the FMA kernel.
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
use crate::ops::thread_buffers::Aligned;
use crate::simd::Path;
use crate::simd::dot_bf16::{self, Exponents, pair_exponents, pair_tiles, unpair};
use crate::simd::gemm::{MAX_MR, Tile, micro_tiles, tiled_at, tiled_len};
use pack::{KC, NC, pack_a, pack_a_pairs, pack_b, pack_b_pairs};
use rayon::prelude::*;

mod pack;

/// Rows of a packed block of `A` (a multiple of every tile's rows), or twice as many where
/// [`blocking`] says: 96 x 256 f32s (96 KiB) stay in L2 while the micro-kernel runs over them.
const MC: usize = 96;
/// The most bytes a panel of [`NC`] columns may take; see [`blocking`].
const PANEL_BYTES: usize = 4 << 20;

/// The rows of `A` in a row block and the columns of `B` in a panel on `path`, for
/// accumulators of `bytes` bytes and a depth of `k`, `B` packed in pairs of bf16 if `pairs`.
///
/// A row block's accumulators (rows x columns) share L2 with its block of `A` (rows x 256):
/// 96 x 1024 f32s (384 KiB, and 96 KiB of `A`) suit the 1 MiB of L2 of the AVX-512 machines.
/// Zen 4: f32 and bf16 products of n = 1024 and 2048 ran 2% to 9% faster than with 512
/// columns, which pack `A` twice as often, and 2048 columns (768 KiB) ran n = 2048 10% slower.
/// f64 accumulators and the AVX2 machines (256 to 512 KiB of L2) take 96 x 512.
///
/// Every row block walks the whole panel, all `k` rows of it, which should stay in L3 from one
/// row block to the next, beside `A` and the output streaming past, on an L3 that eight cores
/// share (32 MiB on a Zen 4). A panel of 1024 columns deeper than [`PANEL_BYTES`] takes 512
/// columns instead, and the row block twice the rows: the accumulators keep their size, and
/// the panel is walked half as often. f32 products on one thread of a Zen 4, medians of
/// interleaved rounds, GFLOP/s: n = 2048 98.4 to 104.8 with 96 x 1024 (an 8 MiB panel) and
/// 102.3 to 104.8 with 192 x 512 (six rounds; on two threads 208 and 205); n = 3072 101.6 to
/// 102.8 with 96 x 512 and 103.2 to 104.0 with 192 x 512, n = 4096 98.0 to 102.5 and 101.2 to
/// 103.7 (three rounds). 96 x 1024 ran n = 3072 and 4096 at 94 to 101 and 96 to 98 (the best
/// call of each of five rounds, where 96 x 512 ran at 101 to 103 and 97 to 103). At n = 1024
/// (4 MiB) 96 x 1024 ran at 106.8 to 107.1, 192 x 512 at 99.8 to 101.7.
///
/// bf16 products in pairs keep 96 x 1024 at every depth: their panel holds half the bytes,
/// and with 192 x 512 they ran n = 3072 2% to 7% slower in each of two rounds of `lowp bench
/// matmul` on one thread and on two (n = 4096 alike).
fn blocking(path: Path, bytes: usize, k: usize, pairs: bool) -> (usize, usize) {
    if !(path.is_avx512() && bytes == 4) {
        (MC, NC / 2)
    } else if pairs || k * NC * bytes <= PANEL_BYTES {
        (MC, NC)
    } else {
        (2 * MC, NC / 2)
    }
}

/// Multiply-adds below which a product stays on one thread.
pub(crate) const SERIAL_WORK: usize = 1 << 18;

/// `out = a * b` for row-major `a` (m x k), `b` (k x n), `out` (m x n), on `path`, using all
/// of rayon's threads for large products.
///
/// The rows of `A` are split among the threads, the same number of tiles each. For each panel
/// of [`blocking`]'s columns, `B` is packed ([`PackedB`]: widened, or in bf16 pairs):
/// once, its [`KC`]-row blocks in parallel, where it is deeper than one block, and by each
/// thread for itself where it is one block deep. Each thread packs its row blocks of
/// `A` and runs the micro-kernel over them, accumulating in its own buffer of `T::Acc` (one
/// accumulator per element of the row block, tile by tile), which it rounds to `T` once,
/// when the row block is done. The buffers stay on their threads for the next product
/// ([`Aligned`]).
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
    // One job per thread, each the same number of rows, run in row blocks of `MC`. (Jobs of
    // `MC` rows shared the work badly: a 1024-row product made 11 of them, and one of two
    // threads idled while the other ran the last.) A job's last sliver of `A` may be short:
    // the micro-kernel computes 4 or 9 rows of it rather than 12 (`all_tiles`), so 256 rows
    // on two threads are 10 3/4 slivers' work each, where jobs of whole slivers were 11 and
    // 10 1/3.
    let rows = m.div_ceil(threads);
    // The widest panel packed: all of its columns only where `n` needs them.
    let pairs = uses_pairs::<T>(path, k);
    let (block_rows, columns) = blocking(path, size_of::<T::Acc>(), k, pairs);
    let width = columns.min(n.next_multiple_of(tile.nr));
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
                block_rows,
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
            (Scratch::new(block_rows, width, pairs), own_b)
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

/// All `k` rows of a panel of `B`, in [`KC`]-row blocks ([`BlockOfB`]): packed for the FMA
/// kernel, or in pairs where the bf16 pair kernel runs.
struct PackedB<C: Real> {
    width: usize,
    pairs: bool,
    blocks: Vec<BlockOfB<C>>,
}

/// One [`KC`]-row block of a packed panel of `B`: `KC x width` values packed by [`pack_b`]
/// or, where the pair kernel runs, their pairs ([`pack_b_pairs`]) and exponents, and packed
/// by [`pack_b`] too where the pair kernel is likely to refuse the block
/// ([`BlockOfB::widened`]).
struct BlockOfB<C: Real> {
    pack: Aligned<C>,
    pairs: Aligned<u32>,
    exponents: Exponents,
}

impl<C: Real> BlockOfB<C> {
    /// Whether `pack` holds the block, in a panel packed in pairs if `pairs`: always where
    /// it is not, and where it is, when the gate refuses the block whatever `A` holds (its
    /// exponents are not [`Exponents::within_half_limits`]).
    fn widened(&self, pairs: bool) -> bool {
        !pairs || !self.exponents.within_half_limits()
    }
}

impl<C: Real> PackedB<C> {
    /// Room for a panel of `k` rows and up to `width` columns, in pairs if `pairs`.
    fn new(k: usize, width: usize, pairs: bool) -> Self {
        let (pack, pair_len) = if pairs {
            (0, KC.div_ceil(2) * width)
        } else {
            (KC * width, 0)
        };
        let block = |_| BlockOfB {
            pack: Aligned::new(pack),
            pairs: Aligned::new(pair_len),
            exponents: Exponents::NONE,
        };
        PackedB {
            width,
            pairs,
            blocks: (0..k.div_ceil(KC)).map(block).collect(),
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
        let (pairs, width) = (self.pairs, self.width);
        let fill = |(blk, block): (usize, &mut BlockOfB<C>)| {
            let pc = blk * KC;
            let kc = KC.min(k - pc);
            if pairs {
                pack_b_pairs(b, n, pc, kc, jc, nc, &mut block.pairs);
                let len = kc.div_ceil(2) * nc.next_multiple_of(tile.nr);
                block.exponents = pair_exponents(path, &block.pairs[..len]);
            }
            // A block the gate refuses whatever `A` holds is widened once here, rather than by
            // each job (which would be every job).
            if block.widened(pairs) {
                if block.pack.len() < KC * width {
                    block.pack = Aligned::new(KC * width);
                }
                pack_b(b, n, pc, kc, jc, nc, tile.nr, &mut block.pack);
            }
        };
        if parallel {
            self.blocks.par_iter_mut().enumerate().for_each(fill);
        } else {
            self.blocks.iter_mut().enumerate().for_each(fill);
        }
    }

    /// The panel of columns `jc..jc + nc` that [`PackedB::fill`] packed last.
    fn panel(&self, jc: usize, nc: usize) -> Panel<'_, C> {
        Panel {
            jc,
            nc,
            pairs: self.pairs,
            blocks: &self.blocks,
        }
    }
}

/// A packed panel of `B`: columns `jc..jc + nc`, every row, in [`KC`]-row blocks, in pairs if
/// `pairs`.
struct Panel<'a, C: Real> {
    jc: usize,
    nc: usize,
    pairs: bool,
    blocks: &'a [BlockOfB<C>],
}

/// Rows `first..first + count` of the product's columns `panel.jc..panel.jc + panel.nc`, into
/// `out` (`count` rows of stride `n`), in row blocks of `block_rows` rows ([`blocking`]).
#[allow(clippy::too_many_arguments)]
fn row_block<T: FloatElement>(
    path: Path,
    tile: Tile,
    block_rows: usize,
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
        b_unpaired,
    } = scratch;
    let (a_pack, acc, rows, a_pairs) = (
        &mut a_pack[..],
        &mut acc[..],
        &mut rows[..],
        &mut a_pairs[..],
    );
    // The FMA kernel's packing of a block packed in pairs, `lines` rows of `A` or columns of
    // `B` in slivers of `w`.
    let unpair_into = |pairs: &[u32], lines: usize, kc: usize, w: usize, pack: &mut [T::Acc]| {
        if let Some(pack) = T::Acc::as_f32s_mut(pack) {
            unpair(pairs, lines.div_ceil(w), kc, w, pack);
        }
    };
    // The block of `B` that `b_unpaired` holds, if any.
    let mut unpaired = None;
    for ic in (0..count).step_by(block_rows) {
        let mc = block_rows.min(count - ic);
        let acc = &mut acc[..tiled_len(tile, mc, nc)];
        // Whether every accumulator is known to be a multiple of 2^-126 that the next pair
        // block cannot take past 2^127 (see `Exponents::pairs_are_exact`): true for zeros
        // and after pair blocks; after an FMA block, asked of the values (`ready`).
        let mut acc_ready = true;
        for pc in (0..k).step_by(KC) {
            let kc = KC.min(k - pc);
            // The first block sets the accumulators: nothing zeroes them before.
            let fresh = pc == 0;
            let block = &panel.blocks[pc / KC];
            let b_len = kc * nc.next_multiple_of(tile.nr);
            let b_pack: &[T::Acc] = match (panel.pairs, T::Acc::as_f32s_mut(acc)) {
                (true, Some(acc_f32)) => {
                    let a_pairs = &mut a_pairs[..kc.div_ceil(2) * mc.next_multiple_of(tile.mr)];
                    pack_a_pairs(a, k, first + ic, mc, pc, kc, a_pairs);
                    let exponents = pair_exponents(path, a_pairs);
                    acc_ready = acc_ready || acc_f32.iter().all(|&c| Exponents::ready(c));
                    if acc_ready && exponents.pairs_are_exact(block.exponents) {
                        pair_tiles(mc, nc, kc, a_pairs, &block.pairs, acc_f32, fresh);
                        continue;
                    }
                    acc_ready = false;
                    // The FMA kernel takes this block: both operands widened.
                    unpair_into(a_pairs, mc, kc, tile.mr, a_pack);
                    if block.widened(true) {
                        &block.pack[..b_len]
                    } else {
                        if unpaired != Some(pc) {
                            let most = KC * nc.next_multiple_of(tile.nr);
                            if b_unpaired.len() < most {
                                *b_unpaired = Aligned::new(most);
                            }
                            unpair_into(&block.pairs, nc, kc, tile.nr, b_unpaired);
                            unpaired = Some(pc);
                        }
                        &b_unpaired[..b_len]
                    }
                }
                _ => {
                    pack_a(path, a, k, first + ic, mc, pc, kc, tile.mr, a_pack, rows);
                    &block.pack[..b_len]
                }
            };
            micro_tiles(path, mc, nc, kc, a_pack, b_pack, acc, fresh);
        }
        // Each row gathered from its tiles: straight into `out` where `T` is its own
        // accumulation type, else into `rows` and rounded in one call.
        for i in 0..mc {
            let dst = &mut out[(ic + i) * n + jc..(ic + i) * n + jc + nc];
            match T::as_acc_mut(dst) {
                Some(own) => gather_row(tile, mc, i, acc, own),
                None => {
                    let line = &mut rows[..nc];
                    gather_row(tile, mc, i, acc, line);
                    T::Acc::narrow(line, dst, false);
                }
            }
        }
    }
}

/// Copies row `i`'s accumulators out of the tiles of an `mc`-row block ([`tiled_at`]'s layout)
/// into `line`, one copy per column sliver.
fn gather_row<C: Real>(tile: Tile, mc: usize, i: usize, tiles: &[C], line: &mut [C]) {
    // With the sliver's width a constant, each copy is a few vector moves, not a call to the
    // C library's `memcpy`.
    match tile.nr {
        8 => gather_slivers::<C, 8>(tile, mc, i, tiles, line),
        16 => gather_slivers::<C, 16>(tile, mc, i, tiles, line),
        32 => gather_slivers::<C, 32>(tile, mc, i, tiles, line),
        nr => unreachable!("Tile::on gives tiles of 8, 16 or 32 columns, not {nr}"),
    }
}

/// [`gather_row`] for tiles of `NR` columns.
#[inline(always)]
fn gather_slivers<C: Real, const NR: usize>(
    tile: Tile,
    mc: usize,
    i: usize,
    tiles: &[C],
    line: &mut [C],
) {
    // A row's part in the next column sliver is a whole column of tiles further on.
    let (start, step) = (tiled_at(tile, mc, i, 0), tiled_at(tile, mc, 0, NR));
    let (whole, tail) = line.as_chunks_mut::<NR>();
    for (t, part) in whole.iter_mut().enumerate() {
        let at = start + t * step;
        *part = tiles[at..at + NR].try_into().expect("NR");
    }
    if !tail.is_empty() {
        let at = start + whole.len() * step;
        tail.copy_from_slice(&tiles[at..at + tail.len()]);
    }
}

/// A thread's buffers for [`row_block`], made once per rayon job rather than per row block
/// (and kept on the thread for the next product: [`Aligned`]).
struct Scratch<C: Real> {
    /// A packed block of `A`: a row block's rows ([`blocking`]) x [`KC`].
    a_pack: Aligned<C>,
    /// A row block's accumulators, rows x `width` (up to 384 KiB), tile by tile.
    acc: Aligned<C>,
    /// [`MAX_MR`] widened rows for [`pack_a`]; a row of accumulators on its way out.
    rows: Aligned<C>,
    /// The pairs of the block of `A`, where the bf16 pair kernel runs.
    a_pairs: Aligned<u32>,
    /// A block of `B` packed in pairs, widened for the FMA kernel where the pair kernel may
    /// not take it: empty until then.
    b_unpaired: Aligned<C>,
}

impl<C: Real> Scratch<C> {
    /// Buffers for row blocks of `block_rows` rows and panels up to `width` columns wide, with
    /// room for pairs if `pairs`.
    fn new(block_rows: usize, width: usize, pairs: bool) -> Self {
        Scratch {
            a_pack: Aligned::new(block_rows * KC),
            acc: Aligned::new(block_rows * width),
            rows: Aligned::new((MAX_MR * KC).max(NC)),
            a_pairs: Aligned::new(if pairs {
                block_rows * KC.div_ceil(2)
            } else {
                0
            }),
            b_unpaired: Aligned::new(0),
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
// `pair_exponents` scans) promise that `vdpbf16ps` gives the FMA chain's bits.
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

    /// Whether the block is clean and its exponents within half of [`Exponents::pairs_are_exact`]'s
    /// limits (from -56 to 50): then that gate lets it pair with any other such block, and
    /// refuses it only for the sake of the other.
    fn within_half_limits(self) -> bool {
        self.clean && (self.min == i32::MAX || (self.min >= -56 && self.max <= 50))
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
    /// path (the AVX-512 ones too, which this CPU may lack) and each way of packing (f32 as
    /// it is, by the SSE transposition or, on the portable path, one value at a time; f64 as
    /// it is, one value at a time; bf16 and f8e4m3fn widened on the bulk conversion paths
    /// first), at offsets into the matrices and with rows and columns short of a tile. The
    /// buffers start full of 7s, so a padding left unwritten shows.
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
            // Depths under four steps, and past a multiple of four or at one (the vector
            // transposition's cases), on every path.
            let cases = Path::ALL
                .into_iter()
                .flat_map(|path| [6, MAX_MR].map(|mr| (path, mr)))
                .flat_map(|(path, mr)| [3, 19, 20].map(|kc| (path, mr, kc)));
            for (path, mr, kc) in cases {
                let mc = 2 * mr + 5;
                let mut pack = vec![T::Acc::of(7.0); mc.next_multiple_of(mr) * kc];
                let mut rows = vec![T::Acc::ZERO; mr * kc];
                pack_a(path, &a, k, i0, mc, p0, kc, mr, &mut pack, &mut rows);
                let source = |i: usize, p: usize| a[(i0 + i) * k + p0 + p].to_f64();
                layout(
                    &pack,
                    mr,
                    kc,
                    mc,
                    source,
                    &format!("{} A on {}, mr {mr}, kc {kc}", T::DTYPE, path.name()),
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

    /// A bf16 pair written out plainly: `first`'s bits above `second`'s.
    fn plain_pair(first: f32, second: f32) -> u32 {
        let bits = |x: f32| x.to_bits() >> 16;
        bits(first) << 16 | bits(second)
    }

    /// On every path, `pair_exponents` gives [`Exponents::add`]'s over the values the pairs
    /// hold, whatever mix of zeros, subnormals, infinities, NaNs and normal exponents they
    /// are, in either half of a pair, and however many pairs (a scan's whole chunks and its
    /// tail).
    #[test]
    fn pair_exponents_scan_as_add_does_on_every_path() {
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -0.75,
            2f32.powi(-126),
            f32::from_bits(1 << 16),
        ];
        let specials = [&specials[..], &[f32::INFINITY, f32::NAN, 3e38, -1e-30]].concat();
        let mut state = 5u64;
        let (mut unclean, mut empty) = (0, 0);
        for trial in 0..600 {
            let values: Vec<f32> = (0..2 * (trial % 53))
                .map(|i| match (trial + i) % 5 {
                    // Mostly zeros and one or two specials: the clean and empty cases too.
                    0 if trial % 3 == 0 => specials[(trial / 3 + i) % specials.len()],
                    0 | 1 => bf16_between(&mut state, -30 - trial as i32 % 90, 30),
                    _ => 0.0,
                })
                .collect();
            let pairs: Vec<u32> = values.chunks(2).map(|v| plain_pair(v[0], v[1])).collect();
            let mut want = Exponents::NONE;
            values.iter().for_each(|&x| want.add(x));
            unclean += usize::from(!want.clean);
            empty += usize::from(want.min == i32::MAX);
            for path in Path::ALL.into_iter().filter(|p| p.is_supported()) {
                let got = pair_exponents(path, &pairs);
                if want.clean {
                    assert_eq!(got, want, "{path:?} {values:?}");
                } else {
                    assert!(!got.clean, "{path:?} {values:?}");
                }
            }
        }
        assert!(
            unclean > 50 && empty > 10,
            "{unclean} unclean, {empty} empty"
        );
    }

    /// The pair packers against their layout written out plainly (step `2q` in the high
    /// half, `2q + 1` or zero in the low half, zero past the block's rows or columns), at
    /// offsets into the matrices, odd and even depths, rows and columns short of a sliver;
    /// and what `unpair` makes of their pairs is exactly the FMA kernel's packing
    /// ([`pack_a`], [`pack_b`]), padding included. The buffers start full of 7s, so a value
    /// left unwritten shows.
    #[test]
    fn pair_packing_is_the_fma_packing_paired() {
        use dot_bf16::{MR, NR};
        let value = |i: usize| lowp::bf16::from_f64(((i * 37) % 101) as f64 / 8.0 - 6.0);
        let (m, k, n) = (40, 45, 100);
        let a: Vec<lowp::bf16> = (0..m * k).map(value).collect();
        let b: Vec<lowp::bf16> = (0..k * n).map(|i| value(i + 5)).collect();
        let f = |x: lowp::bf16| x.to_f32();
        let (i0, j0, p0) = (3, 5, 7);
        for kc in [19usize, 20, 1, 2] {
            let kp = kc.div_ceil(2);
            let step = |row: &[lowp::bf16], p: usize| row.get(p).map_or(0.0, |&x| f(x));
            let mc = MR + 5;
            let mut pairs = vec![7u32; 2 * kp * MR];
            pack_a_pairs(&a, k, i0, mc, p0, kc, &mut pairs);
            for (at, &got) in pairs.iter().enumerate() {
                let (s, q, r) = (at / (kp * MR), at / MR % kp, at % MR);
                let i = s * MR + r;
                let want = if i < mc {
                    let row = &a[(i0 + i) * k + p0..(i0 + i) * k + p0 + kc];
                    plain_pair(step(row, 2 * q), step(row, 2 * q + 1))
                } else {
                    0
                };
                assert_eq!(got, want, "A, kc {kc}: sliver {s} pair {q} row {r}");
            }
            let (mut unpaired, mut packed) = (vec![7f32; 2 * kc * MR], vec![7f32; 2 * kc * MR]);
            unpair(&pairs, 2, kc, MR, &mut unpaired);
            pack_a(
                Path::Avx512Bf16,
                &a,
                k,
                i0,
                mc,
                p0,
                kc,
                MR,
                &mut packed,
                &mut vec![0.0; MR * kc],
            );
            assert_eq!(unpaired, packed, "A, kc {kc}");

            let nc = 2 * NR + 3;
            let mut pairs = vec![7u32; 3 * kp * NR];
            pack_b_pairs(&b, n, p0, kc, j0, nc, &mut pairs);
            for (at, &got) in pairs.iter().enumerate() {
                let (t, q, c) = (at / (kp * NR), at / NR % kp, at % NR);
                let j = t * NR + c;
                let column: Vec<lowp::bf16> = (0..kc)
                    .map(|p| b[(p0 + p) * n + j0 + j.min(nc - 1)])
                    .collect();
                let want = if j < nc {
                    plain_pair(step(&column, 2 * q), step(&column, 2 * q + 1))
                } else {
                    0
                };
                assert_eq!(got, want, "B, kc {kc}: sliver {t} pair {q} column {c}");
            }
            let (mut unpaired, mut packed) = (vec![7f32; 3 * kc * NR], vec![7f32; 3 * kc * NR]);
            unpair(&pairs, 3, kc, NR, &mut unpaired);
            pack_b(&b, n, p0, kc, j0, nc, NR, &mut packed);
            assert_eq!(unpaired, packed, "B, kc {kc}");
        }
    }

    /// Blocks of 1 to 24 rows, so that the last sliver of `A` has each number of rows, on
    /// every path and on the pair kernel where the CPU has it: each accumulator of a row of
    /// the block is the ordered FMA chain (the kernels for 4, 8, 9 and all rows compute the
    /// rows they should), and the padding rows of a fresh block hold zeros, not the NaNs the
    /// tiles held before (left there, they would shut the pair kernel's gate, which asks
    /// every accumulator of the row block).
    #[test]
    fn short_slivers_compute_their_rows_and_zero_the_rest() {
        let (nc, kc) = (40, 7);
        let value = |i: usize| ((i * 37) % 29) as f32 / 4.0 - 3.5;
        let b: Vec<f32> = (0..kc * nc).map(|i| value(i + 3)).collect();
        let check = |what: &str, tile: Tile, mc: usize, a: &[f32], acc: &[f32]| {
            let (mr, nr) = (tile.mr, tile.nr);
            let row_slivers = mc.div_ceil(mr);
            for (at, &got) in acc.iter().enumerate() {
                let (which, within) = (at / (mr * nr), at % (mr * nr));
                let i = which % row_slivers * mr + within / nr;
                let j = which / row_slivers * nr + within % nr;
                let want = if i >= mc {
                    0.0
                } else if j < nc {
                    (0..kc).fold(0f32, |c, p| a[i * kc + p].mul_add(b[p * nc + j], c))
                } else {
                    continue;
                };
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{what}, {mc} rows: ({i}, {j})"
                );
            }
        };
        for mc in 1..=24 {
            let a: Vec<f32> = (0..mc * kc).map(value).collect();
            for path in Path::ALL {
                let tile = Tile::on(
                    if path.is_supported() {
                        path
                    } else {
                        Path::Portable
                    },
                    4,
                );
                let mut a_pack = vec![0f32; mc.next_multiple_of(tile.mr) * kc];
                let mut rows = vec![0f32; tile.mr * kc];
                pack_a(path, &a, kc, 0, mc, 0, kc, tile.mr, &mut a_pack, &mut rows);
                let mut b_pack = vec![0f32; nc.next_multiple_of(tile.nr) * kc];
                pack_b(&b, nc, 0, kc, 0, nc, tile.nr, &mut b_pack);
                let mut acc = vec![f32::NAN; tiled_len(tile, mc, nc)];
                micro_tiles(path, mc, nc, kc, &a_pack, &b_pack, &mut acc, true);
                check(path.name(), tile, mc, &a, &acc);
            }
            if dot_bf16::supported() {
                // The values are bf16s (at most 7 significant bits), so pairs are exact.
                let bf16s = |x: &[f32]| x.iter().map(|&x| lowp::bf16::from_f32(x)).collect();
                let (a16, b16): (Vec<lowp::bf16>, Vec<lowp::bf16>) = (bf16s(&a), bf16s(&b));
                let tile = Tile::on(Path::Avx512Bf16, 4);
                let mut ap = vec![0u32; mc.next_multiple_of(tile.mr) * kc.div_ceil(2)];
                let mut bp = vec![0u32; nc.next_multiple_of(tile.nr) * kc.div_ceil(2)];
                pack_a_pairs(&a16, kc, 0, mc, 0, kc, &mut ap);
                pack_b_pairs(&b16, nc, 0, kc, 0, nc, &mut bp);
                let mut acc = vec![f32::NAN; tiled_len(tile, mc, nc)];
                pair_tiles(mc, nc, kc, &ap, &bp, &mut acc, true);
                check("pairs", tile, mc, &a, &acc);
            }
        }
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
                pack_a(
                    Path::Avx512Bf16,
                    a,
                    kc,
                    0,
                    mc,
                    0,
                    kc,
                    tile.mr,
                    &mut a_pack,
                    &mut rows,
                );
                let mut b_pack = vec![0f32; nc.next_multiple_of(tile.nr) * kc];
                pack_b(b, nc, 0, kc, 0, nc, tile.nr, &mut b_pack);
                let mut acc = vec![f32::NAN; tiled_len(tile, mc, nc)];
                let bf16s = |x: &[f32]| x.iter().map(|&x| lowp::bf16::from_f32(x)).collect();
                let (a16, b16): (Vec<lowp::bf16>, Vec<lowp::bf16>) = (bf16s(a), bf16s(b));
                let mut ap = vec![0u32; mc.next_multiple_of(tile.mr) * kc.div_ceil(2)];
                let mut bp = vec![0u32; nc.next_multiple_of(tile.nr) * kc.div_ceil(2)];
                pack_a_pairs(&a16, kc, 0, mc, 0, kc, &mut ap);
                pack_b_pairs(&b16, nc, 0, kc, 0, nc, &mut bp);
                let ea = pair_exponents(Path::Avx512Bf16, &ap);
                let eb = pair_exponents(Path::Avx512Bf16, &bp);
                // Fresh: the NaNs left in `acc` must not be read.
                if pairs {
                    pair_tiles(mc, nc, kc, &ap, &bp, &mut acc, true);
                } else {
                    all_tiles::<f32, 12, 32, 4, 9>(mc, nc, kc, &a_pack, &b_pack, &mut acc, true);
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
