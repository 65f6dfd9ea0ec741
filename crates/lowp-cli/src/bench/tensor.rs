//! `lowp bench sum` and `lowp bench matmul`: the tensor layer's reduction and matrix product.

use super::{
    MIN_BYTES_PER_THREAD, ThreadChoice, Threads, aligned, bb, best_seconds, parse_seconds,
    parse_size, per_thread, size_label, split,
};
use crate::error::CliError;
use crate::output::{self, Cell, Column, Table};
use clap::Args;
use lowp_tensor::{DType, SimdPath, Tensor};
use rayon::prelude::*;
use serde_json::{Value, json};
use std::hint::black_box;
use std::io::IsTerminal;

/// Arguments of `lowp bench sum`.
#[derive(Args)]
pub struct SumArgs {
    /// Dtypes to sum, comma separated (any float dtype).
    #[arg(long, value_name = "DTYPE", value_delimiter = ',', value_parser = parse_float_dtype, default_value = "f16,bf16")]
    dtypes: Vec<DType>,

    /// Bytes of the tensor, with an optional K, M or G suffix in KiB units.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "256M")]
    size: u64,

    /// One thread, all of rayon's threads, or both.
    #[arg(long, value_name = "THREADS", value_enum, default_value_t = ThreadChoice::Both)]
    threads: ThreadChoice,

    /// Sample each measurement for at least this many seconds.
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, default_value = "0.5")]
    min_time: f64,

    /// Also write the measurements to FILE as a JSON array of records (`name`, `bytes`,
    /// `seconds`, `gbps`, `baseline`, `ratio`; the sums' also `read_baseline`, `read_ratio`).
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
}

/// Arguments of `lowp bench matmul`.
#[derive(Args)]
pub struct MatmulArgs {
    /// The sizes n of the n x n x n products, comma separated.
    #[arg(long, alias = "size", value_name = "N", value_delimiter = ',', default_value = "256,512,1024,2048", value_parser = clap::value_parser!(u32).range(1..=8192))]
    sizes: Vec<u32>,

    /// Dtypes to multiply, comma separated; f32 is always measured too, as the baseline.
    #[arg(long, value_name = "DTYPE", value_delimiter = ',', value_parser = parse_float_dtype, default_value = "f32,f16,bf16")]
    dtypes: Vec<DType>,

    /// One thread, all of rayon's threads (RAYON_NUM_THREADS sets how many), or both.
    #[arg(long, value_name = "THREADS", value_enum, default_value_t = ThreadChoice::Both)]
    threads: ThreadChoice,

    /// Sample each measurement for at least this many seconds.
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, default_value = "0.5")]
    min_time: f64,

    /// Leave out the NumPy baseline (otherwise measured with `python3` when NumPy is
    /// installed: f32, and bf16 through ml_dtypes where that is installed too).
    #[arg(long)]
    no_numpy: bool,

    /// Also write the measurements to FILE as a JSON array of records (`name`, `flops`,
    /// `seconds`, `gflops`, `baseline`, `ratio`; lowp's also `numpy_ratio`).
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
}

/// clap's parser for a float dtype name.
fn parse_float_dtype(text: &str) -> Result<DType, CliError> {
    let d: DType = text
        .parse()
        .map_err(|e: lowp_tensor::Error| CliError::usage(e.to_string()))?;
    if d.is_float() {
        Ok(d)
    } else {
        Err(CliError::usage(format!(
            "'{text}' is not a float dtype; float dtypes: {}",
            DType::floats()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }
}

/// The threadings asked for.
fn threadings(choice: ThreadChoice) -> Vec<Threads> {
    match choice {
        ThreadChoice::Single => vec![Threads::Single],
        ThreadChoice::Multi => vec![Threads::Multi],
        ThreadChoice::Both => vec![Threads::Single, Threads::Multi],
    }
}

/// Runs `f` with the threading `t`: in a pool of one thread, or in rayon's global pool.
fn with_threads<R: Send>(t: Threads, f: impl FnOnce() -> R + Send) -> Result<R, CliError> {
    match t {
        Threads::Multi => Ok(f()),
        Threads::Single => rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .map(|pool| pool.install(f))
            .map_err(|e| CliError::failure(format!("cannot start a thread pool: {e}"))),
    }
}

/// The paths the kernels take, for the header line.
fn paths() -> String {
    format!(
        "tensor kernels: {}; conversions: {}; threads: {}",
        SimdPath::best().name(),
        lowp::bulk::active_path(),
        rayon::current_num_threads()
    )
}

/// Shows what is being measured on stderr, when it is a terminal.
fn show(what: &str) {
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2Kmeasuring {what}");
    }
}

/// Clears the progress line.
fn done() {
    if std::io::stderr().is_terminal() {
        eprint!("\r\x1b[2K");
    }
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
fn baselines(
    t: Threads,
    src: &[u8],
    dst: &mut [u8],
    min_time: f64,
) -> Result<(f64, f64), CliError> {
    with_threads(t, || match t {
        Threads::Single => (
            best_seconds(min_time, || bb(&mut *dst).copy_from_slice(black_box(src))),
            best_seconds(min_time, || {
                black_box(read_all(black_box(src)));
            }),
        ),
        Threads::Multi => {
            let chunk = per_thread(src.len(), MIN_BYTES_PER_THREAD);
            (
                best_seconds(min_time, || {
                    split(
                        black_box(src),
                        bb(&mut *dst),
                        MIN_BYTES_PER_THREAD,
                        |s, d| d.copy_from_slice(s),
                    )
                }),
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

/// Runs `lowp bench sum`.
pub(super) fn sum(args: &SumArgs) -> Result<String, CliError> {
    output::check_json(args.json.as_deref())?;
    let bytes = args.size as usize;
    let mut records = Vec::new();
    let mut rows = Vec::new();
    // memcpy and a bare read of the same bytes, per threading, measured once.
    let (mut src_buf, mut dst_buf) = (Vec::new(), Vec::new());
    let src = aligned(&mut src_buf, bytes, 0x5au8);
    let dst = aligned(&mut dst_buf, bytes, 0xa5u8);
    let mut baselines_measured = Vec::new();
    for t in threadings(args.threads) {
        show(&format!("memcpy and read {t}"));
        let (memcpy, read) = baselines(t, src, dst, args.min_time)?;
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
    for &dtype in &args.dtypes {
        let n = bytes / dtype.size();
        show(&format!("filling a {dtype} tensor"));
        let x = Tensor::rand_uniform(&[n], -1.0, 1.0, dtype, 1)
            .map_err(|e| CliError::failure(e.to_string()))?;
        for base in &baselines_measured {
            let t = base.threads;
            show(&format!("sum {dtype} {t}"));
            let mut failed = None;
            let secs = with_threads(t, || {
                best_seconds(args.min_time, || {
                    if let Err(e) = black_box(&x).sum(None) {
                        failed = Some(e);
                    }
                })
            })?;
            if let Some(e) = failed {
                return Err(CliError::failure(e.to_string()));
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
    done();
    if let Some(file) = &args.json {
        output::write_atomically(file, output::json_text(&Value::Array(records)).as_bytes())?;
    }
    let table = Table {
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
    };
    Ok(format!(
        "{}\n{}\nGB/s: the tensor's bytes per second, each read once and accumulated in f32 \
         (pairwise; see lowp_tensor::ops::reduce for the error bound). memcpy: copying as many \
         bytes, GB/s being bytes copied per second, so \"vs memcpy\" is memcpy's time over the \
         sum's. read: reading as many bytes with next to no arithmetic (a wrapping sum of \
         64-bit words), the speed of the memory and the most a sum can reach; \"vs read\" is \
         its time over the sum's. Best time over samples of at least {} s.\n",
        paths(),
        table.to_text(),
        args.min_time
    ))
}

/// Runs `lowp bench matmul`.
pub(super) fn matmul(args: &MatmulArgs) -> Result<String, CliError> {
    output::check_json(args.json.as_deref())?;
    let mut dtypes = vec![DType::F32];
    dtypes.extend(args.dtypes.iter().copied().filter(|&d| d != DType::F32));
    let sizes: Vec<usize> = args.sizes.iter().map(|&n| n as usize).collect();
    let mut records = Vec::new();
    let mut rows = Vec::new();
    let mut numpy_note = None;
    for t in threadings(args.threads) {
        let numpy = if args.no_numpy {
            Vec::new()
        } else {
            show(&format!("numpy matmul {t}"));
            let threads = match t {
                Threads::Single => 1,
                Threads::Multi => rayon::current_num_threads(),
            };
            super::numpy::matmul(&sizes, threads, args.min_time).unwrap_or_else(|why| {
                numpy_note = Some(why);
                Vec::new()
            })
        };
        for &n in &sizes {
            let shape = format!("{n}x{n}x{n}");
            let flops = 2.0 * (n as f64).powi(3);
            let numpy_f32 = numpy.iter().find(|m| m.n == n && m.dtype == "f32");
            let mut f32_secs = None;
            for &dtype in &dtypes {
                show(&format!("matmul {dtype} {shape} {t}"));
                let secs = time_matmul(dtype, n, t, args.min_time)?;
                let base = *f32_secs.get_or_insert(secs);
                let numpy_ratio = numpy_f32.map(|m| m.seconds / secs);
                records.push(json!({
                    "name": format!("matmul {dtype} {shape} {t}"), "flops": flops,
                    "seconds": secs, "gflops": flops / secs / 1e9,
                    "baseline": format!("matmul f32 {shape} {t}"), "ratio": base / secs,
                    "numpy_ratio": numpy_ratio, "dtype": dtype.name(), "threads": t.to_string(),
                }));
                rows.push(matmul_row(
                    dtype.name(),
                    &shape,
                    t,
                    flops / secs,
                    Some(base / secs),
                    numpy_ratio,
                ));
            }
            for m in numpy.iter().filter(|m| m.n == n) {
                let name = format!("numpy matmul {} {shape} {t}", m.dtype);
                let ratio = numpy_f32.map(|f| f.seconds / m.seconds);
                records.push(json!({
                    "name": name, "flops": flops, "seconds": m.seconds,
                    "gflops": flops / m.seconds / 1e9, "baseline": Value::Null,
                    "ratio": Value::Null, "numpy_ratio": ratio,
                    "dtype": m.dtype, "threads": t.to_string(),
                }));
                let who = if m.dtype == "f32" {
                    "numpy f32"
                } else {
                    "ml_dtypes bf16"
                };
                rows.push(matmul_row(who, &shape, t, flops / m.seconds, None, ratio));
            }
        }
    }
    done();
    if let Some(file) = &args.json {
        output::write_atomically(file, output::json_text(&Value::Array(records)).as_bytes())?;
    }
    let table = Table {
        columns: vec![
            Column::left("dtype", "dtype"),
            Column::right("shape", "m x k x n"),
            Column::left("threads", "threads"),
            Column::right("gflops", "GFLOP/s"),
            Column::right("ratio", "vs f32"),
            Column::right("numpy", "vs numpy f32"),
        ],
        rows,
    };
    let numpy = match (&numpy_note, args.no_numpy) {
        (_, true) => "The NumPy baseline was left out (--no-numpy).".to_string(),
        (Some(why), false) => format!("No NumPy baseline: {why}."),
        (None, false) => "numpy f32: NumPy's a @ b (its BLAS, on as many threads); ml_dtypes \
                          bf16: NumPy's product of ml_dtypes.bfloat16 arrays, where ml_dtypes \
                          is installed. vs numpy f32: NumPy's f32 time over this row's."
            .to_string(),
    };
    Ok(format!(
        "{}\n{}\nGFLOP/s: 2 n^3 floating-point operations per product over the best time of \
         samples of at least {} s. Every dtype accumulates in f32 (ordered fused multiply-adds; \
         see lowp_tensor::ops::gemm); the narrower ones are widened while their blocks are \
         packed, except bf16 on the avx512bf16 path, which vdpbf16ps multiplies in pairs with \
         the same bits. vs f32: lowp's f32 time over this dtype's, in the same threading. \
         {numpy}\n",
        paths(),
        table.to_text(),
        args.min_time
    ))
}

/// The best time of lowp's `n x n x n` product of random normal `dtype` matrices.
fn time_matmul(dtype: DType, n: usize, t: Threads, min_time: f64) -> Result<f64, CliError> {
    let a = Tensor::rand_normal(&[n, n], 0.0, 1.0, dtype, 1)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let b = Tensor::rand_normal(&[n, n], 0.0, 1.0, dtype, 2)
        .map_err(|e| CliError::failure(e.to_string()))?;
    let mut failed = None;
    let secs = with_threads(t, || {
        best_seconds(min_time, || {
            if let Err(e) = black_box(&a).matmul(black_box(&b)) {
                failed = Some(e);
            }
        })
    })?;
    match failed {
        Some(e) => Err(CliError::failure(e.to_string())),
        None => Ok(secs),
    }
}

/// A row of the matmul table.
fn matmul_row(
    who: &str,
    shape: &str,
    t: Threads,
    flops_per_sec: f64,
    vs_f32: Option<f64>,
    vs_numpy: Option<f64>,
) -> Vec<Cell> {
    let ratio =
        |r: Option<f64>| Cell::Text(r.map_or_else(|| "-".to_string(), |r| format!("{r:.2}")));
    vec![
        Cell::Text(who.to_string()),
        Cell::Text(shape.to_string()),
        Cell::Text(t.to_string()),
        Cell::Text(format!("{:.1}", flops_per_sec / 1e9)),
        ratio(vs_f32),
        ratio(vs_numpy),
    ]
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
