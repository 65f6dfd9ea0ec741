//! `lowp bench`: throughput of the library's hot paths, each beside a baseline measured in the
//! same run (memcpy, the `half` crate, cp), so that a shared, noisy machine still gives
//! meaningful ratios.
//!
//! * [`convert`]: bulk slice conversion of every format, both ways, beside memcpy and `half`;
//! * [`file`](mod@file): `lowp convert` of a whole safetensors file beside cp;
//! * [`tensor`]: the tensor layer's sum (beside memcpy and a bare read) and matrix products (GFLOP/s).
//!
//! A figure is the best (shortest) time per call over several samples after a warm-up call,
//! which is least sensitive to other work on a shared machine.

mod convert;
mod file;
mod numpy;
mod tensor;

use crate::error::CliError;
use clap::{Args, Subcommand, ValueEnum};
use rayon::prelude::*;
use std::fmt;
use std::hint::black_box;
use std::time::Instant;

/// Arguments of `lowp bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// What to measure.
    #[command(subcommand)]
    pub what: BenchCommand,
}

/// The benchmarks.
#[derive(Subcommand)]
pub enum BenchCommand {
    /// Bulk conversion throughput in GB/s, beside memcpy and the half crate.
    ///
    /// GB/s counts bytes read plus bytes written (10^9 bytes per GB). Each figure is the best
    /// time per call over several samples after a warm-up, sampling for at least --min-time.
    Convert(convert::ConvertArgs),
    /// `lowp convert` of a generated f32 safetensors file, beside `cp` of the same file.
    ///
    /// Writes a file of --size bytes of f32 tensors (16 of them, roughly normal values) in
    /// --dir, then alternately copies it (std::fs::copy, as cp does) and converts it to --to,
    /// --runs times each, both reading from the page cache and writing into it. GB/s is the
    /// input file's bytes per second; "vs cp" is the conversion's best time over cp's best
    /// time. The files are removed at the end.
    ConvertFile(file::ConvertFileArgs),
    /// The tensor layer's sum of a large f16/bf16 tensor, beside memcpy and a bare read of
    /// the same bytes.
    ///
    /// GB/s is the tensor's bytes per second (each read once); memcpy's is the bytes copied
    /// per second (each read once and written once), so "vs memcpy" compares the time to sum
    /// a tensor with the time to copy it. "read" reads the same bytes with next to no
    /// arithmetic: the memory's speed, which no sum can pass, so "vs read" says how close
    /// the sum comes to it.
    Sum(tensor::SumArgs),
    /// The tensor layer's matrix product, in GFLOP/s (2 n^3 flops per n x n x n product),
    /// for f32, f16 and bf16 side by side.
    Matmul(tensor::MatmulArgs),
}

/// Which threadings to measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ThreadChoice {
    /// One thread.
    Single,
    /// All of rayon's threads.
    Multi,
    /// Both.
    Both,
}

/// One threading of a measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Threads {
    /// The calling thread.
    Single,
    /// Every thread of rayon's global pool.
    Multi,
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
const MIN_SAMPLES: u32 = 3;

/// Each sample repeats the call until it lasts about this fraction of the sampling time.
const SAMPLES_PER_MIN_TIME: f64 = 10.0;

/// Fewest bytes each thread copies in the multi-threaded memcpy baseline (about what lowp's
/// 32Ki elements per thread move).
const MIN_BYTES_PER_THREAD: usize = 128 << 10;

/// clap's parser for `--sizes`: a byte count with an optional K, M or G suffix (KiB units,
/// `KiB` and `KB` spellings accepted), a positive multiple of 8.
fn parse_size(text: &str) -> Result<u64, CliError> {
    let bad = || {
        CliError::usage(format!(
            "'{text}' is not a size: give a positive multiple of 8 bytes, with an optional K, M \
             or G suffix in KiB units (16K, 1M, 256M)"
        ))
    };
    let lower = text.trim().to_ascii_lowercase();
    let unit = lower.trim_end_matches("ib").trim_end_matches('b');
    let (digits, shift) = match unit.char_indices().last() {
        Some((i, 'k')) => (&unit[..i], 10),
        Some((i, 'm')) => (&unit[..i], 20),
        Some((i, 'g')) => (&unit[..i], 30),
        _ => (unit, 0),
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    n.checked_mul(1 << shift)
        .filter(|&b| b > 0 && b % 8 == 0)
        .ok_or_else(bad)
}

/// clap's parser for `--min-time`: a positive number of seconds.
fn parse_seconds(text: &str) -> Result<f64, CliError> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0)
        .ok_or_else(|| CliError::usage(format!("'{text}' is not a positive number of seconds")))
}

/// `bytes` as `16KiB`, `1MiB`, `256MiB`, or plain bytes (`1000B`).
fn size_label(bytes: u64) -> String {
    for (unit, shift) in [("GiB", 30), ("MiB", 20), ("KiB", 10)] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    format!("{bytes}B")
}

/// `n` copies of `x` in a new `buf`, and the part of it that starts on a cache line (64
/// bytes). Every buffer is aligned so: `malloc` gives 16 bytes, and glibc's `rep movsb`, which
/// copies the mid-sized pieces of the multi-threaded memcpy, runs several times slower on some
/// AMD CPUs from a start that is not on a cache line.
fn aligned<T: Copy>(buf: &mut Vec<T>, n: usize, x: T) -> &mut [T] {
    *buf = vec![x; n + 64];
    let start = buf.as_ptr().align_offset(64).min(64);
    &mut buf[start..start + n]
}

/// `black_box` of a slice, so the compiler cannot see through the conversion.
fn bb<S: ?Sized>(x: &mut S) -> &mut S {
    black_box(x)
}

/// The length of each thread's contiguous part of `len` elements: one part per rayon thread,
/// none shorter than `min`, rounded up to a multiple of 64 (as lowp's par_ methods split).
fn per_thread(len: usize, min: usize) -> usize {
    len.div_ceil(rayon::current_num_threads().max(1))
        .max(min)
        .next_multiple_of(64)
}

/// Runs `f` on contiguous ranges of `src` and `dst` of [`per_thread`] elements (the whole
/// slices on the calling thread when short).
fn split<S: Sync, D: Send>(
    src: &[S],
    dst: &mut [D],
    min: usize,
    f: impl Fn(&[S], &mut [D]) + Sync,
) {
    let chunk = per_thread(src.len(), min);
    if chunk >= src.len() {
        return f(src, dst);
    }
    dst.par_chunks_mut(chunk)
        .zip(src.par_chunks(chunk))
        .for_each(|(d, s)| f(s, d));
}

/// The best seconds per call of `f`: one warm-up call, then samples of repeated calls (each
/// about a tenth of `min_time`) until at least `min_time` has passed and [`MIN_SAMPLES`]
/// samples are taken.
fn best_seconds(min_time: f64, mut f: impl FnMut()) -> f64 {
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

/// A wide type the benchmarks fill with test values.
trait Sample: Copy + Default + Send + Sync + 'static {
    /// `x` rounded to this type.
    fn from_f64(x: f64) -> Self;
}

impl Sample for f32 {
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

impl Sample for f64 {
    fn from_f64(x: f64) -> Self {
        x
    }
}

/// Fills `dst` with deterministic, roughly normal values (a sum of four uniforms) with a
/// standard deviation of `max / 3`: almost all in range and rounding, a few (about 4 in
/// 10,000) beyond `max`.
/// Unsigned formats get magnitudes.
fn fill<W: Sample>(dst: &mut [W], max: f64, signed: bool) {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut uniform = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let scale = max / 3.0 * 3f64.sqrt();
    for x in dst {
        let z = uniform() + uniform() + uniform() + uniform() - 2.0;
        *x = W::from_f64(if signed { z * scale } else { z.abs() * scale });
    }
}

/// Runs `lowp bench …` and returns the table to print. The first line (the paths and threads)
/// is printed at once, since a full run takes minutes.
pub fn run(args: &BenchArgs) -> Result<String, CliError> {
    match &args.what {
        BenchCommand::Convert(args) => convert::run(args),
        BenchCommand::ConvertFile(args) => file::run(args),
        BenchCommand::Sum(args) => tensor::sum(args),
        BenchCommand::Matmul(args) => tensor::matmul(args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_kib_units() {
        assert_eq!(parse_size("16K").unwrap(), 16384);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("256MiB").unwrap(), 256 << 20);
        assert_eq!(parse_size("1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        for bad in ["", "K", "0", "12", "1.5M", "16Q", "-1K", "99999999999999G"] {
            let err = parse_size(bad).unwrap_err().to_string();
            assert!(err.contains(&format!("'{bad}'")), "{err}");
        }
    }

    #[test]
    fn size_labels() {
        assert_eq!(size_label(16 << 10), "16KiB");
        assert_eq!(size_label(3 << 19), "1536KiB");
        assert_eq!(size_label(256 << 20), "256MiB");
        assert_eq!(size_label(1000), "1000B");
    }

    #[test]
    fn fill_is_deterministic_and_mostly_in_range() {
        let mut a = vec![0f32; 10_000];
        let mut b = vec![0f32; 10_000];
        fill(&mut a, 448.0, true);
        fill(&mut b, 448.0, true);
        assert_eq!(a, b);
        let beyond = a.iter().filter(|x| x.abs() > 448.0).count();
        assert!(beyond < 10, "{beyond}");
        assert!(a.iter().any(|&x| x < 0.0) && a.iter().any(|&x| x > 100.0));
        fill(&mut b, 6.0, false);
        assert!(b.iter().all(|&x| x >= 0.0));
    }
}
