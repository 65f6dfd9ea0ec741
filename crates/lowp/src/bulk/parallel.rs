//! Multi-threaded bulk conversion (the `rayon` feature).

use super::active_path;
use crate::LowpFloat;
use rayon::prelude::*;

/// Below this many elements per thread, splitting a conversion costs more than it saves.
const MIN_PER_THREAD: usize = 1 << 15;

/// How the conversions cut their slices across threads.
const CONVERSIONS: ThreadSplit = ThreadSplit::new(MIN_PER_THREAD);

/// How work on a slice is cut across the threads of rayon's current pool: one contiguous part
/// per thread, none shorter than a minimum (below which starting a thread costs more than it
/// saves), each a whole number of 64 elements long so that no two threads write one cache
/// line of the output. A slice too short for two parts is worked on by the calling thread.
///
/// The bulk conversions' `par_` methods, lowp-py's conversions and the `lowp bench` baselines
/// all split this way, each with its own minimum.
///
/// ```
/// use lowp::bulk::ThreadSplit;
///
/// let src: Vec<u32> = (0..100_000).collect();
/// let mut dst = vec![0u32; src.len()];
/// ThreadSplit::new(1 << 12).run_pair(&src, &mut dst, |first, s, d| {
///     for (i, (d, s)) in d.iter_mut().zip(s).enumerate() {
///         *d = s + (first + i) as u32;
///     }
/// });
/// assert_eq!(dst[99_999], 2 * 99_999);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadSplit {
    /// The fewest elements a thread is given.
    min_per_thread: usize,
}

impl ThreadSplit {
    /// A split giving each thread at least `min_per_thread` elements.
    pub const fn new(min_per_thread: usize) -> ThreadSplit {
        ThreadSplit { min_per_thread }
    }

    /// The length of each part of a slice of `len` elements (the last may be shorter); `len`
    /// or more means one part.
    pub fn part_len(self, len: usize) -> usize {
        let threads = rayon::current_num_threads().max(1);
        len.div_ceil(threads)
            .max(self.min_per_thread)
            .next_multiple_of(64)
    }

    /// Calls `f(first, part)` on each part of `dst` (`first`: the index of its first element
    /// in `dst`), in parallel; on the calling thread when there is one part.
    pub fn run<D: Send>(self, dst: &mut [D], f: impl Fn(usize, &mut [D]) + Sync) {
        let chunk = self.part_len(dst.len());
        if chunk >= dst.len() {
            return f(0, dst);
        }
        dst.par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(k, part)| f(k * chunk, part));
    }

    /// [`run`](Self::run) over a source and a destination of the same length, cut alike:
    /// `f(first, src_part, dst_part)`. Panics, naming both lengths, when they differ.
    #[track_caller]
    pub fn run_pair<S: Sync, D: Send>(
        self,
        src: &[S],
        dst: &mut [D],
        f: impl Fn(usize, &[S], &mut [D]) + Sync,
    ) {
        super::check_lengths(dst.len(), src.len());
        self.run(dst, |first, d| f(first, &src[first..first + d.len()], d));
    }
}

/// Runs `f(first_index, src_range, dst_range)` on each thread's range.
#[track_caller]
fn split<S: Sync, D: Send>(src: &[S], dst: &mut [D], f: impl Fn(usize, &[S], &mut [D]) + Sync) {
    CONVERSIONS.run_pair(src, dst, f);
}

/// The [`super::LowpSliceExt`] conversions, split across the threads of rayon's current pool,
/// each thread streaming its own contiguous range. Results are identical to the
/// single-threaded methods', stochastic rounding included (its random bits depend on the
/// element's index in the whole slice, not on the split). Slices too short to be worth
/// splitting are converted on the calling thread. The methods panic when the lengths differ.
///
/// ```
/// use lowp::prelude::*;
/// use lowp::bf16;
///
/// let src: Vec<f32> = (0..1_000_000).map(|i| i as f32 * 0.001).collect();
/// let mut dst = vec![bf16::ZERO; src.len()];
/// dst.par_convert_from_f32_slice(&src);
/// assert_eq!(dst[999_999], bf16::from_f32(999.999));
/// ```
pub trait LowpParSliceExt: super::slice::Sealed {
    /// [`super::LowpSliceExt::convert_from_f32_slice`] on all threads.
    #[track_caller]
    fn par_convert_from_f32_slice(&mut self, src: &[f32]);
    /// [`super::LowpSliceExt::convert_from_f32_slice_saturating`] on all threads.
    #[track_caller]
    fn par_convert_from_f32_slice_saturating(&mut self, src: &[f32]);
    /// [`super::LowpSliceExt::convert_from_f64_slice`] on all threads.
    #[track_caller]
    fn par_convert_from_f64_slice(&mut self, src: &[f64]);
    /// [`super::LowpSliceExt::convert_from_f64_slice_saturating`] on all threads.
    #[track_caller]
    fn par_convert_from_f64_slice_saturating(&mut self, src: &[f64]);
    /// [`super::LowpSliceExt::convert_from_f32_slice_stochastic`] on all threads.
    #[track_caller]
    fn par_convert_from_f32_slice_stochastic(&mut self, src: &[f32], seed: u64);
    /// [`super::LowpSliceExt::convert_from_f64_slice_stochastic`] on all threads.
    #[track_caller]
    fn par_convert_from_f64_slice_stochastic(&mut self, src: &[f64], seed: u64);
    /// [`super::LowpSliceExt::convert_to_f32_slice`] on all threads.
    #[track_caller]
    fn par_convert_to_f32_slice(&self, dst: &mut [f32]);
    /// [`super::LowpSliceExt::convert_to_f64_slice`] on all threads.
    #[track_caller]
    fn par_convert_to_f64_slice(&self, dst: &mut [f64]);
}

impl<T: LowpFloat> LowpParSliceExt for [T] {
    fn par_convert_from_f32_slice(&mut self, src: &[f32]) {
        let path = active_path();
        split(src, self, |_, s, d| super::narrow_f32(path, s, d, false));
    }
    fn par_convert_from_f32_slice_saturating(&mut self, src: &[f32]) {
        let path = active_path();
        split(src, self, |_, s, d| super::narrow_f32(path, s, d, true));
    }
    fn par_convert_from_f64_slice(&mut self, src: &[f64]) {
        let path = active_path();
        split(src, self, |_, s, d| super::narrow_f64(path, s, d, false));
    }
    fn par_convert_from_f64_slice_saturating(&mut self, src: &[f64]) {
        let path = active_path();
        split(src, self, |_, s, d| super::narrow_f64(path, s, d, true));
    }
    fn par_convert_from_f32_slice_stochastic(&mut self, src: &[f32], seed: u64) {
        split(src, self, |first, s, d| {
            super::stochastic_f32(s, d, seed, first as u64, false)
        });
    }
    fn par_convert_from_f64_slice_stochastic(&mut self, src: &[f64], seed: u64) {
        split(src, self, |first, s, d| {
            super::stochastic_f64(s, d, seed, first as u64, false)
        });
    }
    fn par_convert_to_f32_slice(&self, dst: &mut [f32]) {
        let path = active_path();
        split(self, dst, |_, s, d| super::widen_f32(path, s, d));
    }
    fn par_convert_to_f64_slice(&self, dst: &mut [f64]) {
        let path = active_path();
        split(self, dst, |_, s, d| super::widen_f64(path, s, d));
    }
}
