//! Multi-threaded bulk conversion (the `rayon` feature).

use super::active_path;
use crate::LowpFloat;
use rayon::prelude::*;

/// Below this many elements per thread, splitting costs more than it saves.
const MIN_PER_THREAD: usize = 1 << 15;

/// How many elements each thread takes: the slice cut into one contiguous range per thread of
/// the current pool (fewer for short slices), rounded up to a multiple of 64 so every range
/// but the last starts on a cache line of the output.
fn chunk_len(len: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    len.div_ceil(threads)
        .max(MIN_PER_THREAD)
        .next_multiple_of(64)
}

/// Runs `f(first_index, src_range, dst_range)` on each thread's range.
fn split<S: Sync, D: Send>(src: &[S], dst: &mut [D], f: impl Fn(usize, &[S], &mut [D]) + Sync) {
    super::check_lengths(dst.len(), src.len());
    let chunk = chunk_len(src.len());
    if chunk >= src.len() {
        return f(0, src, dst);
    }
    dst.par_chunks_mut(chunk)
        .zip(src.par_chunks(chunk))
        .enumerate()
        .for_each(|(k, (d, s))| f(k * chunk, s, d));
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
