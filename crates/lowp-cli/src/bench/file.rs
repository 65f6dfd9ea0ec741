//! `lowp bench convert-file`: `lowp convert` of a generated f32 safetensors file, beside cp.

use super::parse_size;
use crate::convert::{self as file_convert, cli_error};
use crate::error::CliError;
use crate::interrupt as files;
use crate::output::{self, Cell, Column, Table};
use clap::Args;
use lowp_io::Target;
use serde_json::json;
use std::io::IsTerminal;
use std::time::Instant;

#[derive(Args)]
pub struct ConvertFileArgs {
    /// Size of the generated f32 file, with an optional K, M or G suffix in KiB units.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "1G")]
    size: u64,

    /// The types or block-quantized schemes to convert to (as `lowp convert --to`), comma
    /// separated (default: every float type and every scheme).
    #[arg(long, value_name = "TYPE", value_delimiter = ',', value_parser = file_convert::parse_target)]
    to: Vec<Target>,

    /// How FP8 types are scaled (as `lowp convert --fp8-scale`): `none`, `per-tensor`, or
    /// `both`, a row for each.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = Fp8Scales::Both)]
    fp8_scale: Fp8Scales,

    /// How many times to run each of cp and each conversion (the best time counts).
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,

    /// The folder for the generated file and the copies (default: the system's temporary
    /// folder).
    #[arg(long, value_name = "DIR")]
    dir: Option<std::path::PathBuf>,

    /// Also write the measurements to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
}

/// Which FP8 scalings `lowp bench convert-file` measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Fp8Scales {
    /// Unscaled (`--fp8-scale none`).
    None,
    /// Scaled per tensor (`--fp8-scale per-tensor`).
    PerTensor,
    /// A row for each.
    Both,
}

/// Tensors in the file `lowp bench convert-file` generates.
const FILE_TENSORS: u64 = 16;

/// Distinct values generated per tensor; a larger tensor repeats them (the conversion's speed
/// does not depend on where a value sits, and generating a whole GiB of normals would take
/// longer than converting it).
const GENERATED_PER_TENSOR: usize = 1 << 20;

/// The default `--to`: every float type narrower than f32, then every scheme.
fn every_target() -> Vec<Target> {
    ["f16", "bf16", "f8e4m3fn", "f8e5m2"]
        .into_iter()
        .filter_map(|name| Target::parse(name).ok())
        .chain(lowp_io::quant::Scheme::ALL.map(Target::Scheme))
        .collect()
}

/// One measured conversion: a target, scaled per tensor or not.
#[derive(Clone, Copy)]
struct Case {
    to: Target,
    per_tensor: bool,
}

impl Case {
    /// The cases of `targets`: FP8 types once or twice, as `scales` says, the rest once.
    fn all(targets: &[Target], scales: Fp8Scales) -> Vec<Case> {
        let fp8 = |t: &Target| {
            matches!(
                t,
                Target::Float(lowp_io::FloatType::F8E4M3FN | lowp_io::FloatType::F8E5M2)
            )
        };
        targets
            .iter()
            .flat_map(|&to| {
                let modes: &[bool] = match (fp8(&to), scales) {
                    (false, _) | (true, Fp8Scales::None) => &[false],
                    (true, Fp8Scales::PerTensor) => &[true],
                    (true, Fp8Scales::Both) => &[false, true],
                };
                modes.iter().map(move |&per_tensor| Case { to, per_tensor })
            })
            .collect()
    }

    /// The row's name: `lowp convert f32→f8e4m3fn --fp8-scale per-tensor`.
    fn label(self) -> String {
        let scaled = if self.per_tensor {
            " --fp8-scale per-tensor"
        } else {
            ""
        };
        format!("lowp convert f32→{}{scaled}", self.to.name())
    }
}

/// The PID in the name of a file of `lowp bench convert-file`
/// (`lowp-bench-PID[-WHAT].safetensors`), or `None` for any other name.
fn bench_file_pid(name: &std::ffi::OsStr) -> Option<u32> {
    let rest = name
        .to_str()?
        .strip_prefix("lowp-bench-")?
        .strip_suffix(".safetensors")?;
    let pid = rest.split_once('-').map_or(rest, |(pid, _)| pid);
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Values shaped like a trained layer's weights: normal with standard deviation `sigma`
/// (Box-Muller over a fixed linear congruential sequence, seeded by `seed`), and one value in
/// 2,000 an outlier 20 to 60 times larger, as the few large weights of real models are. With
/// sigma 0.02..0.05 about half the values are subnormal in E4M3 (below 2^-6) and most in
/// E2M1: the conversions' rare cases are common here, as they are in real checkpoints.
fn weights(n: usize, sigma: f64, seed: u64) -> Vec<f32> {
    let mut state = seed ^ 0x2545_f491_4f6c_dd1d;
    let mut uniform = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    (0..n)
        .map(|i| {
            let (u, v) = (uniform(), uniform());
            let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
            let outlier = if i % 2000 == 0 { 20.0 + 40.0 * v } else { 1.0 };
            (z * sigma * outlier) as f32
        })
        .collect()
}

/// The standard deviation of tensor `i` of the generated file: from 0.02 to 0.05.
fn sigma(i: u64) -> f64 {
    0.02 + 0.03 * i as f64 / (FILE_TENSORS - 1) as f64
}

/// Writes an f32 safetensors file of about `size` bytes at `path`: [`FILE_TENSORS`] tensors of
/// [`weights`], written a block at a time, then flushed to disk so that writing it back does
/// not overlap the measurements.
fn write_f32_file(path: &std::path::Path, size: u64) -> Result<u64, CliError> {
    // Matrices of 4096 columns (a typical hidden size), so that the block-quantized schemes
    // have weights to quantize.
    let wanted = (size / FILE_TENSORS / 4).max(1) as usize;
    let cols = wanted.min(4096);
    let rows = wanted / cols;
    let per_tensor = rows * cols;
    let entries = (0..FILE_TENSORS)
        .map(|i| {
            (
                format!("layers.{i:02}.weight"),
                safetensors::Dtype::F32,
                vec![rows, cols],
            )
        })
        .collect();
    let (header, _) = lowp_io::safetensors::layout(None, entries).map_err(cli_error)?;
    let fail =
        |e: std::io::Error| CliError::failure(format!("cannot write {}: {e}", path.display()));
    let file = std::fs::File::create(path).map_err(fail)?;
    let mut w = std::io::BufWriter::new(&file);
    use std::io::Write;
    w.write_all(&header).map_err(fail)?;
    for i in 0..FILE_TENSORS {
        files::check_interrupted()?;
        let block = weights(per_tensor.min(GENERATED_PER_TENSOR), sigma(i), i);
        let mut left = per_tensor;
        while left > 0 {
            files::check_interrupted()?;
            let n = left.min(block.len());
            w.write_all(bytemuck::cast_slice(&block[..n]))
                .map_err(fail)?;
            left -= n;
        }
    }
    w.flush().map_err(fail)?;
    drop(w);
    file.sync_all().map_err(fail)?;
    Ok(file.metadata().map_err(fail)?.len())
}

/// Runs `lowp bench convert-file`.
pub(super) fn run(args: &ConvertFileArgs) -> Result<String, CliError> {
    output::check_outputs(
        &[],
        &[
            ("--json", args.json.as_deref(), output::Expect::File),
            ("--dir", args.dir.as_deref(), output::Expect::Dir),
        ],
    )?;
    let dir = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    if let Err(e) = std::fs::read_dir(&dir) {
        return Err(CliError::failure(format!(
            "cannot use --dir: no folder {}: {e}",
            dir.display()
        )));
    }
    let targets = if args.to.is_empty() {
        every_target()
    } else {
        args.to.clone()
    };
    let cases = Case::all(&targets, args.fp8_scale);
    if cases.is_empty() {
        return Err(CliError::usage("--to names nothing to measure".to_string()));
    }
    // The files of earlier runs that were killed (SIGKILL, or a second Ctrl-C before this
    // release removed them).
    for leftover in lowp_io::leftovers::remove_dead(&dir, bench_file_pid) {
        eprintln!("note: {leftover}");
    }
    let stem = format!("lowp-bench-{}", std::process::id());
    let input = dir.join(format!("{stem}.safetensors"));
    let copied = dir.join(format!("{stem}-cp.safetensors"));
    let converted = dir.join(format!("{stem}-out.safetensors"));
    // Ctrl-C and SIGTERM stop the run at its next step and the files go with `_scratch`.
    files::watch_interrupts();
    let _scratch = files::Scratch::new(vec![input.clone(), copied.clone(), converted.clone()]);
    let progress = std::io::stderr().is_terminal();
    if progress {
        eprint!("writing {} ...", input.display());
    }
    let bytes = write_f32_file(&input, args.size)?;
    let mut cp_times = Vec::new();
    let mut measured = Vec::new();
    for (c, case) in cases.iter().enumerate() {
        let mut opts = lowp_io::Options::new(input.clone(), Some(converted.clone()), case.to);
        opts.per_tensor_scale = case.per_tensor;
        // compressed-tensors holds every scheme, in any number of rows of these columns.
        if matches!(case.to, Target::Scheme(_)) {
            opts.layout = Some(lowp_io::layouts::Layout::CompressedTensors);
        }
        let (mut times, mut out_bytes) = (Vec::new(), 0);
        for run in 0..args.runs {
            if progress {
                eprint!(
                    "\r\x1b[2K{} ({}/{}): run {}/{}",
                    case.to.name(),
                    c + 1,
                    cases.len(),
                    run + 1,
                    args.runs
                );
            }
            // cp and the conversion alternate, so that both see the same state of the
            // machine.
            let start = Instant::now();
            std::fs::copy(&input, &copied)
                .map_err(|e| CliError::failure(format!("cannot copy {}: {e}", input.display())))?;
            cp_times.push(start.elapsed().as_secs_f64());
            let _ = std::fs::remove_file(&copied);
            files::check_interrupted()?;
            let start = Instant::now();
            let report = file_convert::convert(&opts, false)?;
            times.push(start.elapsed().as_secs_f64());
            out_bytes = report.file_bytes_out;
            let _ = std::fs::remove_file(&converted);
        }
        measured.push((*case, out_bytes, times));
    }
    if progress {
        eprint!("\r\x1b[2K");
    }
    let best = |t: &[f64]| t.iter().copied().fold(f64::INFINITY, f64::min);
    let cp = best(&cp_times);
    let gbps = |s: f64| bytes as f64 / s / 1e9;
    let row = |name: String, out: u64, secs: f64, all: &[f64]| {
        vec![
            Cell::Text(name),
            Cell::Int(bytes as i64),
            Cell::Int(out as i64),
            Cell::Text(format!("{secs:.3}")),
            Cell::Text(format!("{:.2}", gbps(secs))),
            Cell::Text(format!("{:.2}", secs / cp)),
            Cell::Text(
                all.iter()
                    .map(|s| format!("{s:.3}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        ]
    };
    let mut rows = vec![row("cp (std::fs::copy)".into(), bytes, cp, &cp_times)];
    rows.extend(
        measured
            .iter()
            .map(|(case, out, times)| row(case.label(), *out, best(times), times)),
    );
    let table = Table {
        columns: vec![
            Column::left("what", "what"),
            Column::right("bytes_in", "bytes in"),
            Column::right("bytes_out", "bytes out"),
            Column::right("seconds", "best s"),
            Column::right("gbps", "GB/s"),
            Column::right("ratio", "vs cp"),
            Column::left("runs", "all runs, s"),
        ],
        rows,
    };
    if let Some(file) = &args.json {
        let conversions: Vec<_> = measured
            .iter()
            .map(|(case, out, times)| {
                let secs = best(times);
                json!({
                    "to": case.to.name(),
                    "fp8_scale": if case.per_tensor { "per-tensor" } else { "none" },
                    "convert_seconds": times,
                    "convert_best": secs,
                    "convert_gbps": gbps(secs),
                    "ratio": secs / cp,
                    "output_bytes": out,
                })
            })
            .collect();
        let value = json!({
            "size": bytes,
            "tensors": FILE_TENSORS,
            "weights": "normal, sigma 0.02 to 0.05 by tensor, one in 2000 an outlier x20..60",
            "threads": rayon::current_num_threads(),
            "cp_seconds": cp_times,
            "cp_best": cp,
            "cp_gbps": gbps(cp),
            "conversions": conversions,
        });
        output::write_atomically(file, output::json_text(&value).as_bytes())?;
    }
    Ok(format!(
        "{}\nGB/s: bytes of the input file per second. vs cp: best time over cp's best time \
         (target: at most 1.5). {} runs each, each beside a cp; {} threads; the file was in the \
         page cache and the outputs were written into it. The weights are normal with sigma \
         0.02 to 0.05 and one in 2000 an outlier 20 to 60 times larger.\n",
        table.to_text(),
        args.runs,
        rayon::current_num_threads()
    ))
}

#[cfg(test)]
mod tests {
    use super::bench_file_pid;
    use std::ffi::OsStr;

    #[test]
    fn generated_weights_look_like_a_layers() {
        let n = 1 << 20;
        let w = super::weights(n, 0.02, 3);
        assert_eq!(w, super::weights(n, 0.02, 3), "deterministic");
        // One value in 2000 is multiplied by 20 to 60: about 4 in 5 of those land beyond 10
        // sigma (the rest had a small normal factor), and almost no other value does.
        let outliers = w.iter().filter(|x| x.abs() > 0.02 * 10.0).count();
        assert!(
            (n / 2000 * 7 / 10..=n / 2000 + 10).contains(&outliers),
            "{outliers}"
        );
        let rest: Vec<f64> = w
            .iter()
            .map(|&x| x as f64)
            .filter(|x| x.abs() <= 0.2)
            .collect();
        let mean = rest.iter().sum::<f64>() / rest.len() as f64;
        let sd = (rest.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / rest.len() as f64).sqrt();
        assert!(mean.abs() < 1e-4 && (sd - 0.02).abs() < 2e-4, "{mean} {sd}");
        // About 55% of N(0, 0.02) lies below E4M3's smallest normal, 2^-6.
        let subnormal = rest.iter().filter(|x| x.abs() < 2f64.powi(-6)).count();
        let share = subnormal as f64 / rest.len() as f64;
        assert!((0.55..0.58).contains(&share), "{share}");
        assert_eq!(super::sigma(0), 0.02);
        assert!((super::sigma(15) - 0.05).abs() < 1e-15);
    }

    #[test]
    fn fp8_types_get_a_row_per_scaling() {
        use super::{Case, Fp8Scales, every_target};
        let all = every_target();
        assert_eq!(all.len(), 9);
        let labels = |s| {
            Case::all(&all, s)
                .into_iter()
                .map(Case::label)
                .collect::<Vec<_>>()
        };
        let both = labels(Fp8Scales::Both);
        assert_eq!(both.len(), 11);
        assert!(both.contains(&"lowp convert f32→f8e5m2 --fp8-scale per-tensor".to_string()));
        assert_eq!(labels(Fp8Scales::None).len(), 9);
        let scaled = labels(Fp8Scales::PerTensor);
        assert_eq!(
            scaled.iter().filter(|l| l.contains("per-tensor")).count(),
            2
        );
        assert_eq!(scaled.len(), 9);
    }

    #[test]
    fn bench_file_names() {
        let pid = |s: &str| bench_file_pid(OsStr::new(s));
        assert_eq!(pid("lowp-bench-42.safetensors"), Some(42));
        assert_eq!(pid("lowp-bench-42-cp.safetensors"), Some(42));
        assert_eq!(pid("lowp-bench-42-mxfp4.safetensors"), Some(42));
        for other in [
            "lowp-bench-.safetensors",
            "lowp-bench-x1.safetensors",
            "lowp-bench-42.safetensors.bak",
            "my-lowp-bench-42.safetensors",
            "lowp-bench-42.npy",
        ] {
            assert_eq!(pid(other), None, "{other}");
        }
    }
}
