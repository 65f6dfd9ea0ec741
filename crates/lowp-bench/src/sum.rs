//! `lowp bench sum`: the tensor layer's sum of a large tensor, beside memcpy and a bare read
//! of the same bytes.

use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::report::Report;
use crate::timing::{
    MEMCPY_SPLIT, Threads, aligned, best_seconds, memcpy, size_label, tensor_paths, with_threads,
};
use lowp_analysis::output::{Cell, Column, Table};
use lowp_tensor::{DType, Tensor};
use rayon::prelude::*;
use serde_json::{Value, json};
use std::hint::black_box;

/// What `sum` measures.
#[derive(Clone, Debug)]
pub struct Config {
    /// The float dtypes to sum, in order.
    pub dtypes: Vec<DType>,
    /// Bytes of each tensor (of the memcpy and the read).
    pub size: u64,
    /// The threadings, in order.
    pub threads: Vec<Threads>,
    /// Sample each measurement for at least this many seconds.
    pub min_time: f64,
}

/// The wrapping sum of `bytes` read as little-endian u64 words (and the bytes past the last
/// whole word): a read of every byte with next to no arithmetic, so its speed is that of the
/// memory reading it (the ceiling of any sum). Compiled for the CPU's vector path by
/// [`lowp::vectorized`]; the compiler splits the one sum into running sums in registers.
///
/// Written as eight running sums over 64-byte chunks, this compiled for AVX-512 to gathers
/// (`vpgatherdq`, one lane per chunk) and read at a fifth of the sum's speed on a Zen 4.
fn read_all(bytes: &[u8]) -> u64 {
    lowp::vectorized(
        #[inline(always)]
        || {
            let (words, rest) = bytes.as_chunks::<8>();
            let words = words.iter().map(|&w| u64::from_le_bytes(w));
            let rest = rest.iter().map(|&b| u64::from(b));
            words.chain(rest).fold(0, u64::wrapping_add)
        },
    )
}

/// The best seconds of copying `src` into `dst` and of reading `src` ([`read_all`]), with
/// the threading `t` (multi: each thread its own contiguous part).
fn baselines(t: Threads, src: &[u8], dst: &mut [u8], min_time: f64) -> Result<(f64, f64)> {
    with_threads(t, || match t {
        Threads::Single => (
            best_seconds(min_time, || memcpy(t, src, dst)),
            best_seconds(min_time, || {
                black_box(read_all(black_box(src)));
            }),
        ),
        Threads::Multi => {
            let chunk = MEMCPY_SPLIT.part_len(src.len());
            (
                best_seconds(min_time, || memcpy(t, src, dst)),
                best_seconds(min_time, || {
                    let parts = black_box(src).par_chunks(chunk).map(read_all);
                    black_box(parts.reduce(|| 0, u64::wrapping_add));
                }),
            )
        }
    })
}

/// The baselines of one threading: memcpy's and the read's record names and best seconds.
struct Baseline {
    threads: Threads,
    memcpy: (String, f64),
    read: (String, f64),
}

/// Sums a tensor of `config.size` bytes of each dtype, with each threading, beside memcpy and
/// a bare read of as many bytes.
pub fn run(config: &Config, progress: &dyn Progress) -> Result<Report> {
    let bytes = usize::try_from(config.size)
        .map_err(|_| Error::Invalid(format!("{} bytes do not fit in memory", config.size)))?;
    let mut records = Vec::new();
    let mut rows = Vec::new();
    // memcpy and a bare read of the same bytes, per threading, measured once.
    let (mut src_buf, mut dst_buf) = (Vec::new(), Vec::new());
    let src = aligned(&mut src_buf, bytes, 0x5au8);
    let dst = aligned(&mut dst_buf, bytes, 0xa5u8);
    let mut baselines_measured = Vec::new();
    for &t in &config.threads {
        progress.step(&format!("measuring memcpy and read {t}"));
        let (memcpy, read) = baselines(t, src, dst, config.min_time)?;
        let label = size_label(bytes as u64);
        let (memcpy_name, read_name) = (format!("memcpy {label} {t}"), format!("read {label} {t}"));
        for (name, secs) in [(&memcpy_name, memcpy), (&read_name, read)] {
            records.push(json!({
                "name": name, "bytes": bytes, "seconds": secs, "gbps": bytes as f64 / secs / 1e9,
                "baseline": Value::Null, "ratio": Value::Null,
            }));
        }
        baselines_measured.push(Baseline {
            threads: t,
            memcpy: (memcpy_name, memcpy),
            read: (read_name, read),
        });
    }
    drop((src_buf, dst_buf));
    for &dtype in &config.dtypes {
        let n = bytes / dtype.size();
        progress.step(&format!("measuring filling a {dtype} tensor"));
        let x = Tensor::rand_uniform(&[n], -1.0, 1.0, dtype, 1)?;
        for base in &baselines_measured {
            let t = base.threads;
            progress.step(&format!("measuring sum {dtype} {t}"));
            let mut failed = None;
            let secs = with_threads(t, || {
                best_seconds(config.min_time, || {
                    if let Err(e) = black_box(&x).sum(None) {
                        failed = Some(e);
                    }
                })
            })?;
            if let Some(e) = failed {
                return Err(e.into());
            }
            let tensor_bytes = n * dtype.size();
            let gbps = tensor_bytes as f64 / secs / 1e9;
            // Times per byte, so that a tensor a few bytes short of `bytes` compares fairly.
            let per_byte = secs / tensor_bytes as f64;
            let memcpy_ratio = base.memcpy.1 / bytes as f64 / per_byte;
            let read_ratio = base.read.1 / bytes as f64 / per_byte;
            let name = format!("sum {dtype} {} {t}", size_label(tensor_bytes as u64));
            records.push(json!({
                "name": name, "bytes": tensor_bytes, "seconds": secs, "gbps": gbps,
                "baseline": base.memcpy.0, "ratio": memcpy_ratio,
                "read_baseline": base.read.0, "read_ratio": read_ratio,
                "dtype": dtype.name(), "threads": t.to_string(),
            }));
            rows.push(vec![
                Cell::Text(dtype.name().to_string()),
                Cell::Text(size_label(tensor_bytes as u64)),
                Cell::Text(t.to_string()),
                Cell::Text(format!("{gbps:.2}")),
                Cell::Text(format!("{:.2}", bytes as f64 / base.memcpy.1 / 1e9)),
                Cell::Text(format!("{memcpy_ratio:.2}")),
                Cell::Text(format!("{:.2}", bytes as f64 / base.read.1 / 1e9)),
                Cell::Text(format!("{read_ratio:.2}")),
            ]);
        }
    }
    progress.done();
    Ok(Report {
        header: Some(tensor_paths()),
        table: Table {
            columns: vec![
                Column::left("dtype", "dtype"),
                Column::right("size", "size"),
                Column::left("threads", "threads"),
                Column::right("gbps", "GB/s"),
                Column::right("memcpy_gbps", "memcpy GB/s"),
                Column::right("ratio", "vs memcpy"),
                Column::right("read_gbps", "read GB/s"),
                Column::right("read_ratio", "vs read"),
            ],
            rows,
        },
        notes: format!(
            "GB/s: the tensor's bytes per second, each read once and accumulated in f32 \
             (pairwise; see lowp_tensor::ops::reduce for the error bound). memcpy: copying as \
             many bytes, GB/s being bytes copied per second, so \"vs memcpy\" is memcpy's time \
             over the sum's. read: reading as many bytes with next to no arithmetic (a wrapping \
             sum of 64-bit words), the speed of the memory and the most a sum can reach; \"vs \
             read\" is its time over the sum's. Best time over samples of at least {} s.\n",
            config.min_time
        ),
        // Records `name`, `bytes`, `seconds`, `gbps`, `baseline`, `ratio`; the sums' also
        // `read_baseline`, `read_ratio`.
        json: Value::Array(records),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn read_all_adds_every_word_and_the_bytes_past_the_last() {
        let bytes: Vec<u8> = (0..77u8).map(|b| b.wrapping_mul(37)).collect();
        // Byte i weighs 256^(i mod 8) within its word, and 1 past the last whole word (72).
        let want = bytes.iter().enumerate().fold(0u64, |sum, (i, &b)| {
            let weight = if i < 72 { 1u64 << (8 * (i % 8)) } else { 1 };
            sum.wrapping_add(u64::from(b).wrapping_mul(weight))
        });
        assert_eq!(super::read_all(&bytes), want);
    }
}
