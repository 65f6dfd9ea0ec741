//! How kernels walk their data: in blocks small enough to live in L1 cache, and on all of
//! rayon's threads when there is enough work.
//!
//! A kernel never converts a whole tensor to its compute type: it widens one block of at most
//! [`BLOCK`] elements into a buffer on the stack, computes there, and rounds the block back.

use rayon::prelude::*;

/// Elements per block: 1024 f64s (8 KiB) fit L1 beside their source and destination.
pub(crate) const BLOCK: usize = 1024;

/// Below this many elements a kernel stays on the calling thread.
pub(crate) const PARALLEL_MIN: usize = 1 << 15;

/// Elements per parallel task (a multiple of [`BLOCK`]).
const TASK: usize = 1 << 14;

/// Calls `f(start, src_block, dst_block)` for consecutive blocks of at most [`BLOCK`]
/// elements covering both slices (equal lengths), on several threads for long slices.
pub(crate) fn zip_blocks<S: Sync, D: Send>(
    src: &[S],
    dst: &mut [D],
    f: impl Fn(usize, &[S], &mut [D]) + Sync,
) {
    assert_eq!(src.len(), dst.len(), "lowp-tensor: block lengths differ");
    let serial = |base: usize, src: &[S], dst: &mut [D]| {
        for (k, (s, d)) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)).enumerate() {
            f(base + k * BLOCK, s, d);
        }
    };
    if src.len() < PARALLEL_MIN {
        serial(0, src, dst);
    } else {
        src.par_chunks(TASK)
            .zip(dst.par_chunks_mut(TASK))
            .enumerate()
            .for_each(|(k, (s, d))| serial(k * TASK, s, d));
    }
}

/// Calls `f(start, dst_block)` for consecutive blocks of at most [`BLOCK`] elements of
/// `dst`, on several threads for long slices.
pub(crate) fn fill_blocks<D: Send>(dst: &mut [D], f: impl Fn(usize, &mut [D]) + Sync) {
    let serial = |base: usize, dst: &mut [D]| {
        for (k, d) in dst.chunks_mut(BLOCK).enumerate() {
            f(base + k * BLOCK, d);
        }
    };
    if dst.len() < PARALLEL_MIN {
        serial(0, dst);
    } else {
        dst.par_chunks_mut(TASK)
            .enumerate()
            .for_each(|(k, d)| serial(k * TASK, d));
    }
}

/// Calls `f(i, row)` for each of the `rows` consecutive rows of `row_len` elements of `dst`,
/// on several threads when there are enough elements in all.
pub(crate) fn for_each_row<D: Send>(
    dst: &mut [D],
    row_len: usize,
    f: impl Fn(usize, &mut [D]) + Sync + Send,
) {
    if row_len == 0 {
        return;
    }
    if dst.len() < PARALLEL_MIN {
        dst.chunks_mut(row_len)
            .enumerate()
            .for_each(|(i, r)| f(i, r));
    } else {
        dst.par_chunks_mut(row_len)
            .enumerate()
            .for_each(|(i, r)| f(i, r));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_cover_everything_once_in_order() {
        for n in [
            0,
            1,
            BLOCK - 1,
            BLOCK,
            BLOCK + 1,
            PARALLEL_MIN + 5 * BLOCK + 3,
        ] {
            let src: Vec<usize> = (0..n).collect();
            let mut dst = vec![usize::MAX; n];
            zip_blocks(&src, &mut dst, |start, s, d| {
                assert!(s.len() <= BLOCK && s[0] == start);
                d.copy_from_slice(s);
            });
            assert_eq!(dst, src);
            let mut filled = vec![0; n];
            fill_blocks(&mut filled, |start, d| {
                for (j, x) in d.iter_mut().enumerate() {
                    *x = start + j;
                }
            });
            assert_eq!(filled, src);
        }
    }

    #[test]
    fn rows_are_numbered() {
        let mut dst = vec![0usize; 3 * PARALLEL_MIN];
        for_each_row(&mut dst, PARALLEL_MIN, |i, r| r.fill(i));
        assert_eq!(dst[PARALLEL_MIN * 2 + 7], 2);
        let mut small = vec![0usize; 6];
        for_each_row(&mut small, 2, |i, r| r.fill(i));
        assert_eq!(small, [0, 0, 1, 1, 2, 2]);
    }
}
