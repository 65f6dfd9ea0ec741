//! Packing blocks of `A` and `B` into the slivers the micro-kernels read: widened to the
//! accumulation type for the FMA kernel ([`pack_a`], [`pack_b`]), or, for the bf16 pair
//! kernel, straight from the bf16 values into pairs ([`pack_a_pairs`], [`pack_b_pairs`]).

use crate::element::{FloatElement, Real};
use crate::simd::Path;
use crate::simd::dot_bf16::{self, pair};
use crate::simd::gemm::MAX_MR;
use crate::simd::transpose::rows_into_sliver;

/// Depth of a packed block.
pub(super) const KC: usize = 256;

/// Columns of a packed panel of `B` at most (a multiple of every tile's columns); see
/// [`super::blocking`]. The panel, all `k` rows of it, is packed once and shared by every
/// thread.
pub(super) const NC: usize = 1024;

/// Packs rows `i0..i0 + mc`, columns `p0..p0 + kc` of `a` (row stride `k`) into slivers of
/// `mr` rows (6 or [`MAX_MR`], [`Tile::on`](crate::simd::gemm::Tile::on)'s): sliver `s`, step `p`, row `r` at
/// `(s * kc + p) * mr + r`, zero-padded. `rows` is scratch for `mr` rows of `kc` values, used
/// by the types that are not their accumulation type. f32 slivers are transposed in vector
/// registers except on [`Path::Portable`] ([`rows_into_sliver`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn pack_a<T: FloatElement>(
    path: Path,
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
        let first = i0 + s * mr;
        // A sliver is a transposition of `mr` rows; with `mr` a constant each value is
        // read and written once, at a place the compiler knows is in bounds.
        match mr {
            6 => {
                let a_rows = sliver_rows(a, k, first, count, p0, kc);
                pack_sliver::<T, 6>(path, a_rows, count, sliver, rows)
            }
            MAX_MR => {
                let a_rows = sliver_rows(a, k, first, count, p0, kc);
                pack_sliver::<T, MAX_MR>(path, a_rows, count, sliver, rows)
            }
            _ => unreachable!("Tile::on gives tiles of 6 or {MAX_MR} rows, not {mr}"),
        }
    }
}

/// Columns `p0..p0 + kc` of rows `first..first + count` of `a` (row stride `k`), and in
/// place of the `MR - count` rows past them, which pad the sliver, the last row again: a
/// placeholder, which [`transpose`] does not read.
#[inline(always)]
fn sliver_rows<T, const MR: usize>(
    a: &[T],
    k: usize,
    first: usize,
    count: usize,
    p0: usize,
    kc: usize,
) -> [&[T]; MR] {
    core::array::from_fn(|r| {
        let at = (first + r.min(count - 1)) * k + p0;
        &a[at..at + kc]
    })
}

/// One sliver of [`pack_a`]: its first `count` rows are `a_rows[..count]` (the others only
/// placeholders). Rows that are f32, as they come or widened into `rows` on the bulk
/// conversion paths, go to [`rows_into_sliver`] (the steps it leaves, and f64 rows,
/// to [`transpose`]).
#[inline(always)]
fn pack_sliver<T: FloatElement, const MR: usize>(
    path: Path,
    a_rows: [&[T]; MR],
    count: usize,
    sliver: &mut [T::Acc],
    rows: &mut [T::Acc],
) {
    let kc = sliver.len() / MR;
    let Some(sliver) = T::Acc::as_f32s_mut(sliver) else {
        return transpose::<T, T::Acc, MR>(a_rows, count, sliver, T::widen_one);
    };
    let own = |r: usize| T::as_acc(a_rows[r]).and_then(T::Acc::as_f32s);
    let rows = &mut rows[..MR * kc];
    if own(0).is_none() {
        for (dst, src) in rows.chunks_exact_mut(kc).zip(a_rows).take(count) {
            T::Acc::widen(src, dst);
        }
    }
    let widened = T::Acc::as_f32s(rows).expect("accumulators of f32, as the sliver's");
    // Rows past `count` pad the sliver with zeros.
    let f32_rows: [&[f32]; MR] = core::array::from_fn(|r| match own(r) {
        _ if r >= count => &ZEROS[..kc],
        Some(row) => row,
        None => &widened[r * kc..][..kc],
    });
    let done = rows_into_sliver(path, f32_rows, sliver);
    let rest = f32_rows.map(|row| &row[done..]);
    transpose::<f32, f32, MR>(rest, MR, &mut sliver[done * MR..], |x| x);
}

/// [`KC`] zeros: the rows that pad a sliver of `A`.
static ZEROS: [f32; KC] = [0.0; KC];

/// Writes `widen(rows[r][p])` at `sliver[p * MR + r]` for the first `count` rows, zero for
/// the others (rows past `count` are only placeholders).
#[inline(always)]
fn transpose<E: Copy, C: Copy + Default, const MR: usize>(
    rows: [&[E]; MR],
    count: usize,
    sliver: &mut [C],
    widen: impl Fn(E) -> C,
) {
    let kc = sliver.len() / MR;
    // Row by row: each row is read in order and written to every `MR`th place of the sliver
    // (which stays in L1), with no bounds check inside the loop. Step by step, reading `MR`
    // rows at once, each value took a bounds check of its row too.
    let steps = &mut sliver.as_chunks_mut::<MR>().0[..kc];
    for (r, row) in rows.iter().enumerate() {
        if r < count {
            for (step, &x) in steps.iter_mut().zip(&row[..kc]) {
                step[r] = widen(x);
            }
        } else {
            steps.iter_mut().for_each(|step| step[r] = C::default());
        }
    }
}

/// Packs rows `p0..p0 + kc`, columns `j0..j0 + nc` of `b` (row stride `n`) into slivers of
/// `nr` columns (8, 16 or 32, [`Tile::on`](crate::simd::gemm::Tile::on)'s): sliver `t`, step `p`, column `c` at `(t * kc +
/// p) * nr + c`, zero-padded.
#[allow(clippy::too_many_arguments)]
pub(super) fn pack_b<T: FloatElement>(
    b: &[T],
    n: usize,
    p0: usize,
    kc: usize,
    j0: usize,
    nc: usize,
    nr: usize,
    pack: &mut [T::Acc],
) {
    // With `nr` a constant, each row's part in a sliver is one copy of a known size, which
    // the compiler writes as a few vector moves: a copy of `nr` values, where the size was
    // not known, called the C library's `memcpy` for every 128 bytes.
    let row = |p: usize| &b[(p0 + p) * n + j0..][..nc];
    match nr {
        8 => pack_b_slivers::<T, 8>(row, kc, nc, pack),
        16 => pack_b_slivers::<T, 16>(row, kc, nc, pack),
        32 => pack_b_slivers::<T, 32>(row, kc, nc, pack),
        _ => unreachable!("Tile::on gives tiles of 8, 16 or 32 columns, not {nr}"),
    }
}

/// [`pack_b`] for slivers of `NR` columns, of the `nc` values of each of the `kc` rows
/// `row(p)`.
#[inline(always)]
fn pack_b_slivers<'a, T: FloatElement, const NR: usize>(
    row: impl Fn(usize) -> &'a [T],
    kc: usize,
    nc: usize,
    pack: &mut [T::Acc],
) {
    // f32 and f64, their own accumulation type, go straight from `b` into the slivers (2% on
    // f32 products of n = 256 and 512, Zen 4). The narrower types widen each row on the bulk
    // paths first, into `widened`: widened one value at a time as f32 is, f16 ran 1% to 2%
    // slower.
    let mut widened = [T::Acc::ZERO; NC];
    let widened = &mut widened[..nc];
    for p in 0..kc {
        let src: &[T::Acc] = match T::as_acc(row(p)) {
            Some(own) => own,
            None => {
                T::Acc::widen(row(p), widened);
                widened
            }
        };
        let (whole, tail) = src.as_chunks::<NR>();
        for (t, part) in whole.iter().enumerate() {
            let at = (t * kc + p) * NR;
            let dst: &mut [T::Acc; NR] = (&mut pack[at..at + NR]).try_into().expect("NR");
            *dst = *part;
        }
        if !tail.is_empty() {
            let at = (whole.len() * kc + p) * NR;
            let (dst, pad) = pack[at..at + NR].split_at_mut(tail.len());
            dst.copy_from_slice(tail);
            pad.fill(T::Acc::ZERO);
        }
    }
}

/// Packs rows `i0..i0 + mc`, columns `p0..p0 + kc` of `a` (bf16; row stride `k`) as pairs for
/// the pair kernel, in slivers of [`dot_bf16::MR`] rows: sliver `s`, pair `q`, row `r` at
/// `(s * kp + q) * MR + r` (`kp = kc.div_ceil(2)`) holds steps `2q` (the high half) and
/// `2q + 1` (the low half; zero past `kc`), and rows past `mc` are zero. That is
/// [`pack_a`]'s sliver with each two steps paired, which [`dot_bf16::unpair`] gives back,
/// made in one pass over half the bytes.
#[allow(clippy::too_many_arguments)]
pub(super) fn pack_a_pairs<T: FloatElement>(
    a: &[T],
    k: usize,
    i0: usize,
    mc: usize,
    p0: usize,
    kc: usize,
    pairs: &mut [u32],
) {
    const MR: usize = dot_bf16::MR;
    let kp = kc.div_ceil(2);
    for s in 0..mc.div_ceil(MR) {
        let sliver = &mut pairs[s * kp * MR..(s + 1) * kp * MR];
        let count = MR.min(mc - s * MR);
        let rows: [&[T]; MR] = sliver_rows(a, k, i0 + s * MR, count, p0, kc);
        let (whole, last) = sliver.split_at_mut(kc / 2 * MR);
        let steps = rows.map(|row| row.as_chunks::<2>().0);
        transpose::<[T; 2], u32, MR>(steps, count, whole, |[x, y]| pair(f32_of(x), f32_of(y)));
        if kc % 2 == 1 {
            for (r, (x, row)) in last.iter_mut().zip(&rows).enumerate() {
                *x = if r < count {
                    pair(f32_of(row[kc - 1]), 0.0)
                } else {
                    0
                };
            }
        }
    }
}

/// Packs rows `p0..p0 + kc`, columns `j0..j0 + nc` of `b` (bf16; row stride `n`) as pairs for
/// the pair kernel, in slivers of [`dot_bf16::NR`] columns: sliver `t`, pair `q`, column `c`
/// at `(t * kp + q) * NR + c` holds steps `2q` and `2q + 1` (zero past `kc`), and columns
/// past `nc` are zero. That is [`pack_b`]'s sliver with each two steps paired, made in one
/// pass over half the bytes.
#[allow(clippy::too_many_arguments)]
pub(super) fn pack_b_pairs<T: FloatElement>(
    b: &[T],
    n: usize,
    p0: usize,
    kc: usize,
    j0: usize,
    nc: usize,
    pairs: &mut [u32],
) {
    const NR: usize = dot_bf16::NR;
    let kp = kc.div_ceil(2);
    let row = |p: usize| &b[(p0 + p) * n + j0..(p0 + p) * n + j0 + nc];
    for q in 0..kp {
        let (first, second) = (row(2 * q), (2 * q + 1 < kc).then(|| row(2 * q + 1)));
        for t in 0..nc.div_ceil(NR) {
            let dst = &mut pairs[(t * kp + q) * NR..(t * kp + q + 1) * NR];
            let cols = NR.min(nc - t * NR);
            let (dst, pad) = dst.split_at_mut(cols);
            let first = &first[t * NR..t * NR + cols];
            match second {
                Some(second) => {
                    for ((x, &f), &s) in dst.iter_mut().zip(first).zip(&second[t * NR..]) {
                        *x = pair(f32_of(f), f32_of(s));
                    }
                }
                None => {
                    for (x, &f) in dst.iter_mut().zip(first) {
                        *x = pair(f32_of(f), 0.0);
                    }
                }
            }
            pad.fill(0);
        }
    }
}

/// A bf16 as the f32 it widens to (exactly: its bits in the upper half).
#[inline(always)]
fn f32_of<T: FloatElement>(x: T) -> f32 {
    x.widen_one()
        .as_f32()
        .expect("the pair kernel multiplies bf16, which accumulates in f32")
}
