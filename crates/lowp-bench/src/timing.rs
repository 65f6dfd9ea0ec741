//! The timing harness: the best time per call of a closure, the threadings measured, and the
//! buffers and labels every benchmark shares.

use crate::error::{Error, Result};
use lowp::bulk::ThreadSplit;
use std::fmt;
use std::hint::black_box;
use std::time::Instant;

/// One threading of a measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// The calling thread.
    Single,
    /// Every thread of rayon's global pool.
    Multi,
}

/// Which threadings to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum ThreadChoice {
    /// One thread.
    Single,
    /// All of rayon's threads.
    Multi,
    /// Both.
    Both,
}

impl ThreadChoice {
    /// The threadings it names, single first.
    pub fn threads(self) -> Vec<Threads> {
        match self {
            ThreadChoice::Single => vec![Threads::Single],
            ThreadChoice::Multi => vec![Threads::Multi],
            ThreadChoice::Both => vec![Threads::Single, Threads::Multi],
        }
    }
}

impl Threads {
    /// How many threads this threading runs on.
    pub fn count(self) -> usize {
        match self {
            Threads::Single => 1,
            Threads::Multi => rayon::current_num_threads(),
        }
    }
}

impl fmt::Display for Threads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Threads::Single => "single",
            Threads::Multi => "multi",
        })
    }
}

/// Fewest samples per measurement.
pub const MIN_SAMPLES: u32 = 3;

/// Each sample repeats the call until it lasts about this fraction of the sampling time.
pub const SAMPLES_PER_MIN_TIME: f64 = 10.0;

/// How the multi-threaded memcpy and read baselines split their bytes: at least 128 KiB per
/// thread, about what lowp's 32Ki elements per thread move.
pub const MEMCPY_SPLIT: ThreadSplit = ThreadSplit::new(128 << 10);

/// The best seconds per call of `f`: one warm-up call, then samples of repeated calls (each
/// about a tenth of `min_time`) until at least `min_time` has passed and [`MIN_SAMPLES`]
/// samples are taken.
pub fn best_seconds(min_time: f64, mut f: impl FnMut()) -> f64 {
    f();
    let start = Instant::now();
    f();
    let once = start.elapsed().as_secs_f64().max(1e-9);
    let calls = (min_time / SAMPLES_PER_MIN_TIME / once).ceil().max(1.0) as u64;
    let (mut best, mut total, mut samples) = (once, once, 1);
    while total < min_time || samples < MIN_SAMPLES {
        let start = Instant::now();
        for _ in 0..calls {
            f();
        }
        let took = start.elapsed().as_secs_f64();
        best = best.min(took / calls as f64);
        total += took;
        samples += 1;
    }
    best
}

/// Runs `f` with the threading `t`: in a pool of one thread, or in rayon's global pool.
pub fn with_threads<R: Send>(t: Threads, f: impl FnOnce() -> R + Send) -> Result<R> {
    match t {
        Threads::Multi => Ok(f()),
        Threads::Single => rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .map(|pool| pool.install(f))
            .map_err(|e| Error::Failure(format!("cannot start a thread pool: {e}"))),
    }
}

/// `n` copies of `x` in a new `buf`, and the part of it that starts on a cache line (64
/// bytes). Every buffer is aligned so: `malloc` gives 16 bytes, and glibc's `rep movsb`, which
/// copies the mid-sized pieces of the multi-threaded memcpy, runs several times slower on some
/// AMD CPUs from a start that is not on a cache line.
pub fn aligned<T: Copy>(buf: &mut Vec<T>, n: usize, x: T) -> &mut [T] {
    *buf = vec![x; n + 64];
    let start = buf.as_ptr().align_offset(64).min(64);
    &mut buf[start..start + n]
}

/// `black_box` of a slice, so the compiler cannot see through the conversion.
pub fn bb<S: ?Sized>(x: &mut S) -> &mut S {
    black_box(x)
}

/// Copies `src` into `dst` with the threading `t` (multi: each thread its own contiguous
/// part, split by [`MEMCPY_SPLIT`]).
pub fn memcpy(t: Threads, src: &[u8], dst: &mut [u8]) {
    match t {
        Threads::Single => bb(dst).copy_from_slice(black_box(src)),
        Threads::Multi => {
            MEMCPY_SPLIT.run_pair(black_box(src), bb(dst), |_, s, d| d.copy_from_slice(s))
        }
    }
}

/// The first line of the tensor benchmarks' reports: the paths the tensor kernels and the
/// conversions take, and the thread count.
pub fn tensor_paths() -> String {
    format!(
        "tensor kernels: {}; conversions: {}; threads: {}",
        lowp_tensor::SimdPath::best().name(),
        lowp::bulk::active_path(),
        rayon::current_num_threads()
    )
}

/// `bytes` as `16KiB`, `1MiB`, `256MiB`, or plain bytes (`1000B`).
pub fn size_label(bytes: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_labels() {
        assert_eq!(size_label(16 << 10), "16KiB");
        assert_eq!(size_label(3 << 19), "1536KiB");
        assert_eq!(size_label(256 << 20), "256MiB");
        assert_eq!(size_label(1000), "1000B");
    }

    #[test]
    fn memcpy_copies_on_every_threading() {
        let src: Vec<u8> = (0..300_000u32).map(|i| i as u8).collect();
        for t in [Threads::Single, Threads::Multi] {
            let mut dst = vec![0u8; src.len()];
            memcpy(t, &src, &mut dst);
            assert_eq!(dst, src, "{t}");
        }
    }
}
