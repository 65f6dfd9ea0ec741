//! `lowp bench sum` and `lowp bench matmul`: the tensor layer's reduction and matrix product.

use super::{
    MIN_BYTES_PER_THREAD, ThreadChoice, Threads, aligned, bb, best_seconds, parse_seconds,
    parse_size, size_label, split,
};
use crate::error::CliError;
use crate::output::{self, Cell, Column, Table};
use clap::Args;
use lowp_tensor::{DType, SimdPath, Tensor};
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
    /// `seconds`, `gbps`, `baseline`, `ratio`).
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
}

/// Arguments of `lowp bench matmul`.
#[derive(Args)]
pub struct MatmulArgs {
    /// The size n of the n x n x n products.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..=8192))]
    size: u32,

    /// Dtypes to multiply, comma separated; f32 is always measured too, as the baseline.
    #[arg(long, value_name = "DTYPE", value_delimiter = ',', value_parser = parse_float_dtype, default_value = "f32,f16,bf16")]
    dtypes: Vec<DType>,

    /// One thread, all of rayon's threads, or both.
    #[arg(long, value_name = "THREADS", value_enum, default_value_t = ThreadChoice::Multi)]
    threads: ThreadChoice,

    /// Sample each measurement for at least this many seconds.
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, default_value = "1")]
    min_time: f64,

    /// Also write the measurements to FILE as a JSON array of records (`name`, `flops`,
    /// `seconds`, `gflops`, `baseline`, `ratio`).
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

/// Runs `lowp bench sum`.
pub(super) fn sum(args: &SumArgs) -> Result<String, CliError> {
    output::check_json(args.json.as_deref())?;
    let bytes = args.size as usize;
    let mut records = Vec::new();
    let mut rows = Vec::new();
    // memcpy of the same bytes, per threading, measured once.
    let (mut src_buf, mut dst_buf) = (Vec::new(), Vec::new());
    let src = aligned(&mut src_buf, bytes, 0x5au8);
    let dst = aligned(&mut dst_buf, bytes, 0xa5u8);
    let mut memcpy = Vec::new();
    for t in threadings(args.threads) {
        show(&format!("memcpy {t}"));
        let secs = with_threads(t, || match t {
            Threads::Single => best_seconds(args.min_time, || {
                bb(&mut *dst).copy_from_slice(black_box(&*src))
            }),
            Threads::Multi => best_seconds(args.min_time, || {
                split(
                    black_box(&*src),
                    bb(&mut *dst),
                    MIN_BYTES_PER_THREAD,
                    |s, d| d.copy_from_slice(s),
                )
            }),
        })?;
        let name = format!("memcpy {} {t}", size_label(bytes as u64));
        records.push(json!({
            "name": name, "bytes": bytes, "seconds": secs, "gbps": bytes as f64 / secs / 1e9,
            "baseline": Value::Null, "ratio": Value::Null,
        }));
        memcpy.push((t, name, secs));
    }
    drop((src_buf, dst_buf));
    for &dtype in &args.dtypes {
        let n = bytes / dtype.size();
        show(&format!("filling a {dtype} tensor"));
        let x = Tensor::rand_uniform(&[n], -1.0, 1.0, dtype, 1)
            .map_err(|e| CliError::failure(e.to_string()))?;
        for (t, base_name, base) in &memcpy {
            show(&format!("sum {dtype} {t}"));
            let mut failed = None;
            let secs = with_threads(*t, || {
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
            let base_gbps = bytes as f64 / base / 1e9;
            let name = format!("sum {dtype} {} {t}", size_label(tensor_bytes as u64));
            records.push(json!({
                "name": name, "bytes": tensor_bytes, "seconds": secs, "gbps": gbps,
                "baseline": base_name, "ratio": gbps / base_gbps,
                "dtype": dtype.name(), "threads": t.to_string(),
            }));
            rows.push(vec![
                Cell::Text(dtype.name().to_string()),
                Cell::Text(size_label(tensor_bytes as u64)),
                Cell::Text(t.to_string()),
                Cell::Text(format!("{gbps:.2}")),
                Cell::Text(format!("{base_gbps:.2}")),
                Cell::Text(format!("{:.2}", gbps / base_gbps)),
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
        ],
        rows,
    };
    Ok(format!(
        "{}\n{}\nGB/s: the tensor's bytes per second, each read once and accumulated in f32 \
         (pairwise; see lowp_tensor::ops::reduce for the error bound). memcpy: copying as many \
         bytes, GB/s being bytes copied per second, so \"vs memcpy\" is memcpy's time over the \
         sum's. Best time over samples of at least {} s.\n",
        paths(),
        table.to_text(),
        args.min_time
    ))
}

/// Runs `lowp bench matmul`.
pub(super) fn matmul(args: &MatmulArgs) -> Result<String, CliError> {
    output::check_json(args.json.as_deref())?;
    let n = args.size as usize;
    let flops = 2.0 * (n as f64).powi(3);
    let mut dtypes = vec![DType::F32];
    dtypes.extend(args.dtypes.iter().copied().filter(|&d| d != DType::F32));
    let mut records = Vec::new();
    let mut rows = Vec::new();
    for t in threadings(args.threads) {
        let mut f32_secs = None;
        for &dtype in &dtypes {
            show(&format!("matmul {dtype} {t}"));
            let a = Tensor::rand_normal(&[n, n], 0.0, 1.0, dtype, 1)
                .map_err(|e| CliError::failure(e.to_string()))?;
            let b = Tensor::rand_normal(&[n, n], 0.0, 1.0, dtype, 2)
                .map_err(|e| CliError::failure(e.to_string()))?;
            let mut failed = None;
            let secs = with_threads(t, || {
                best_seconds(args.min_time, || {
                    if let Err(e) = black_box(&a).matmul(black_box(&b)) {
                        failed = Some(e);
                    }
                })
            })?;
            if let Some(e) = failed {
                return Err(CliError::failure(e.to_string()));
            }
            let base = *f32_secs.get_or_insert(secs);
            let gflops = flops / secs / 1e9;
            let name = format!("matmul {dtype} {n}x{n}x{n} {t}");
            records.push(json!({
                "name": name, "flops": flops, "seconds": secs, "gflops": gflops,
                "baseline": format!("matmul f32 {n}x{n}x{n} {t}"), "ratio": base / secs,
                "dtype": dtype.name(), "threads": t.to_string(),
            }));
            rows.push(vec![
                Cell::Text(dtype.name().to_string()),
                Cell::Text(format!("{n}x{n}x{n}")),
                Cell::Text(t.to_string()),
                Cell::Text(format!("{gflops:.1}")),
                Cell::Text(format!("{:.2}", base / secs)),
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
            Column::right("shape", "m x k x n"),
            Column::left("threads", "threads"),
            Column::right("gflops", "GFLOP/s"),
            Column::right("ratio", "vs f32"),
        ],
        rows,
    };
    Ok(format!(
        "{}\n{}\nGFLOP/s: 2 n^3 floating-point operations per product over the best time of \
         samples of at least {} s. Every dtype accumulates in f32 (ordered fused multiply-adds; \
         see lowp_tensor::ops::gemm); the narrower ones are widened while their blocks are \
         packed. vs f32: f32's time over this dtype's, in the same threading.\n",
        paths(),
        table.to_text(),
        args.min_time
    ))
}
