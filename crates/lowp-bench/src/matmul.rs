//! `lowp bench matmul`: the tensor layer's matrix product, in GFLOP/s, for several dtypes side
//! by side, beside NumPy's.

use crate::error::Result;
use crate::progress::Progress;
use crate::report::Report;
use crate::timing::{Threads, best_seconds, tensor_paths, with_threads};
use lowp_analysis::output::{Cell, Column, Table};
use lowp_tensor::{DType, Tensor};
use serde_json::{Value, json};
use std::hint::black_box;

/// What `matmul` measures.
#[derive(Clone, Debug)]
pub struct Config {
    /// The sizes n of the n x n x n products.
    pub sizes: Vec<usize>,
    /// The float dtypes to multiply; f32 is always measured too, first, as the baseline.
    pub dtypes: Vec<DType>,
    /// The threadings, in order.
    pub threads: Vec<Threads>,
    /// Sample each measurement for at least this many seconds.
    pub min_time: f64,
    /// Whether to measure NumPy's products too (with `python3`, where NumPy is installed).
    pub numpy: bool,
}

/// Times the `n x n x n` products of `config`, f32 first in each threading, and NumPy's beside
/// them unless left out.
pub fn run(config: &Config, progress: &dyn Progress) -> Result<Report> {
    let mut dtypes = vec![DType::F32];
    dtypes.extend(config.dtypes.iter().copied().filter(|&d| d != DType::F32));
    let sizes = &config.sizes;
    let mut records = Vec::new();
    let mut rows = Vec::new();
    let mut numpy_note = None;
    for &t in &config.threads {
        let numpy = if !config.numpy {
            Vec::new()
        } else {
            progress.step(&format!("measuring numpy matmul {t}"));
            crate::numpy::matmul(sizes, t.count(), config.min_time).unwrap_or_else(|why| {
                numpy_note = Some(why);
                Vec::new()
            })
        };
        for &n in sizes {
            let shape = format!("{n}x{n}x{n}");
            let flops = 2.0 * (n as f64).powi(3);
            let numpy_f32 = numpy.iter().find(|m| m.n == n && m.dtype == "f32");
            let mut f32_secs = None;
            for &dtype in &dtypes {
                progress.step(&format!("measuring matmul {dtype} {shape} {t}"));
                let secs = time_matmul(dtype, n, t, config.min_time)?;
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
    progress.done();
    let numpy = match (numpy_note, config.numpy) {
        (_, false) => "The NumPy baseline was left out (--no-numpy).".to_string(),
        (Some(why), true) => format!("No NumPy baseline: {why}."),
        (None, true) => "numpy f32: NumPy's a @ b (its BLAS, on as many threads); ml_dtypes \
                         bf16: NumPy's product of ml_dtypes.bfloat16 arrays, where ml_dtypes is \
                         installed. vs numpy f32: NumPy's f32 time over this row's."
            .to_string(),
    };
    Ok(Report {
        header: Some(tensor_paths()),
        table: Table {
            columns: vec![
                Column::left("dtype", "dtype"),
                Column::right("shape", "m x k x n"),
                Column::left("threads", "threads"),
                Column::right("gflops", "GFLOP/s"),
                Column::right("ratio", "vs f32"),
                Column::right("numpy", "vs numpy f32"),
            ],
            rows,
        },
        notes: format!(
            "GFLOP/s: 2 n^3 floating-point operations per product over the best time of \
             samples of at least {} s. Every dtype accumulates in f32 (ordered fused \
             multiply-adds; see lowp_tensor::ops::gemm); the narrower ones are widened while \
             their blocks are packed, except bf16 on the avx512bf16 path, which vdpbf16ps \
             multiplies in pairs with the same bits. vs f32: lowp's f32 time over this dtype's, \
             in the same threading. {numpy}\n",
            config.min_time
        ),
        // Records `name`, `flops`, `seconds`, `gflops`, `baseline`, `ratio`; lowp's also
        // `numpy_ratio`.
        json: Value::Array(records),
    })
}

/// The best time of lowp's `n x n x n` product of random normal `dtype` matrices.
fn time_matmul(dtype: DType, n: usize, t: Threads, min_time: f64) -> Result<f64> {
    let a = Tensor::rand_normal(&[n, n], 0.0, 1.0, dtype, 1)?;
    let b = Tensor::rand_normal(&[n, n], 0.0, 1.0, dtype, 2)?;
    let mut failed = None;
    let secs = with_threads(t, || {
        best_seconds(min_time, || {
            if let Err(e) = black_box(&a).matmul(black_box(&b)) {
                failed = Some(e);
            }
        })
    })?;
    match failed {
        Some(e) => Err(e.into()),
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
