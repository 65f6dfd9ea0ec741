//! The baseline of `lowp bench matmul`: NumPy's matrix product (OpenBLAS's or MKL's sgemm),
//! and ml_dtypes' bfloat16 product where ml_dtypes is installed, timed by `python3` itself.

use crate::timing::{MIN_SAMPLES, SAMPLES_PER_MIN_TIME};
use std::process::Command;

/// What `python3` runs: for each size, the best seconds per call of `a @ b`, timed as lowp's
/// product is ([`crate::timing::best_seconds`]: a warm-up call, then samples of as many calls as take
/// about a tenth of `min_time`, until `min_time` has passed and `min_samples` samples are
/// taken), printed as `dtype n seconds` lines. Random normal operands, as lowp's.
///
/// Timed alike, the two meet the machine's noise alike. This script took the best single call
/// before, which favoured NumPy: on a shared Zen 4 its best single call beat its best sample
/// by 1% to 2% on one thread and 6% to 7% on two at n = 256 and 512 (samples of 12 to 92
/// calls), and by under 1% from n = 1024 (one to three calls).
const SCRIPT: &str = r#"
import math, sys, time
import numpy as np
try:
    import ml_dtypes
    dtypes = [("f32", np.float32), ("bf16", ml_dtypes.bfloat16)]
except ImportError:
    dtypes = [("f32", np.float32)]
min_time, per_min_time, min_samples = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
for n in map(int, sys.argv[4:]):
    rng = np.random.default_rng(1)
    for name, dt in dtypes:
        a = rng.standard_normal((n, n)).astype(dt)
        b = rng.standard_normal((n, n)).astype(dt)
        a @ b
        t = time.perf_counter()
        a @ b
        once = max(time.perf_counter() - t, 1e-9)
        calls = max(math.ceil(min_time / per_min_time / once), 1)
        best, total, samples = once, once, 1
        while total < min_time or samples < min_samples:
            t = time.perf_counter()
            for _ in range(calls):
                a @ b
            took = time.perf_counter() - t
            best = min(best, took / calls)
            total += took
            samples += 1
        print(name, n, best, flush=True)
"#;

/// One measurement of NumPy's: the dtype's lowp name (`f32`, `bf16`), the size and the best
/// time in seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    /// The dtype's lowp name.
    pub dtype: String,
    /// The size n of the n x n x n product.
    pub n: usize,
    /// The best seconds per product.
    pub seconds: f64,
}

/// NumPy's products of the given sizes on `threads` BLAS threads, or why there are none
/// (`python3` or NumPy missing, or the script failed).
pub fn matmul(sizes: &[usize], threads: usize, min_time: f64) -> Result<Vec<Measured>, String> {
    let threads = threads.to_string();
    let mut cmd = Command::new("python3");
    cmd.arg("-c").arg(SCRIPT).arg(min_time.to_string());
    cmd.arg(SAMPLES_PER_MIN_TIME.to_string());
    cmd.arg(MIN_SAMPLES.to_string());
    cmd.args(sizes.iter().map(|n| n.to_string()));
    // Read once, when the BLAS library loads: so set before `import numpy`.
    for var in ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"] {
        cmd.env(var, &threads);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("python3 could not be run: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("no message").trim();
        return Err(format!(
            "python3 with numpy failed ({}): {last}",
            out.status
        ));
    }
    parse(&String::from_utf8_lossy(&out.stdout))
}

/// The script's `dtype n seconds` lines.
fn parse(text: &str) -> Result<Vec<Measured>, String> {
    text.lines()
        .map(|line| {
            let mut words = line.split_whitespace();
            let (Some(dtype), Some(n), Some(secs), None) =
                (words.next(), words.next(), words.next(), words.next())
            else {
                return Err(format!("unexpected line from the numpy script: '{line}'"));
            };
            match (n.parse(), secs.parse::<f64>()) {
                (Ok(n), Ok(seconds)) if seconds > 0.0 => Ok(Measured {
                    dtype: dtype.to_string(),
                    n,
                    seconds,
                }),
                _ => Err(format!("unexpected line from the numpy script: '{line}'")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_lines_are_read_and_bad_ones_named() {
        let got = parse("f32 256 0.00025\nbf16 256 0.001\n").unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(
            (got[1].dtype.as_str(), got[1].n, got[1].seconds),
            ("bf16", 256, 0.001)
        );
        assert!(parse("f32 256\n").unwrap_err().contains("'f32 256'"));
        assert!(parse("f32 x 0.1\n").is_err());
        assert!(parse("f32 8 0\n").is_err());
        assert_eq!(parse("").unwrap(), []);
    }
}
