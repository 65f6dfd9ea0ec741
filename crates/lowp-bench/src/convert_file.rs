//! `lowp bench convert-file`: lowp-io's conversion of a generated f32 safetensors file, beside
//! cp of the same file.

use crate::data::weights;
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::report::Report;
use lowp_analysis::output::{Cell, Column, Table};
use lowp_io::Target;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// What `convert_file` measures.
#[derive(Clone, Debug)]
pub struct Config {
    /// Bytes of the generated f32 file (about: whole rows of its tensors).
    pub size: u64,
    /// The types and schemes to convert to (empty: [`every_target`]).
    pub to: Vec<Target>,
    /// How FP8 types are scaled.
    pub fp8_scale: Fp8Scales,
    /// How many times to run cp and each conversion (the best time counts).
    pub runs: u32,
    /// The folder for the generated file and the copies.
    pub dir: PathBuf,
}

/// Which FP8 scalings `lowp bench convert-file` measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Fp8Scales {
    /// Unscaled (`--fp8-scale none`).
    None,
    /// Scaled per tensor (`--fp8-scale per-tensor`).
    PerTensor,
    /// A row for each.
    Both,
}

/// Tensors in the generated file.
const FILE_TENSORS: u64 = 16;

/// Distinct values generated per tensor; a larger tensor repeats them (the conversion's speed
/// does not depend on where a value sits, and generating a whole GiB of normals would take
/// longer than converting it).
const GENERATED_PER_TENSOR: usize = 1 << 20;

/// What is measured by default: every float type narrower than f32, then every scheme.
pub fn every_target() -> Vec<Target> {
    ["f16", "bf16", "f8e4m3fn", "f8e5m2"]
        .into_iter()
        .filter_map(|name| Target::parse(name).ok())
        .chain(lowp_io::quant::Scheme::ALL.map(Target::Scheme))
        .collect()
}

/// One measured conversion: a target, scaled per tensor or not.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    /// The type or scheme converted to.
    pub to: Target,
    /// Whether FP8 values are scaled per tensor.
    pub per_tensor: bool,
}

impl Case {
    /// The cases of `targets`: FP8 types once or twice, as `scales` says, the rest once.
    pub fn all(targets: &[Target], scales: Fp8Scales) -> Vec<Case> {
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
    pub fn label(self) -> String {
        let scaled = if self.per_tensor {
            " --fp8-scale per-tensor"
        } else {
            ""
        };
        format!("lowp convert f32→{}{scaled}", self.to.name())
    }
}

/// The PID in the name of a file of this benchmark (`lowp-bench-PID[-WHAT].safetensors`), or
/// `None` for any other name.
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

/// The standard deviation of tensor `i` of the generated file: from 0.02 to 0.05.
fn sigma(i: u64) -> f64 {
    0.02 + 0.03 * i as f64 / (FILE_TENSORS - 1) as f64
}

/// Writes an f32 safetensors file of about `size` bytes at `path`: [`FILE_TENSORS`] tensors of
/// [`weights`], written a block at a time, then flushed to disk so that writing it back does
/// not overlap the measurements.
fn write_f32_file(path: &Path, size: u64, cancel: &AtomicBool) -> Result<u64> {
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
    let (header, _) = lowp_io::safetensors::layout(None, entries)?;
    let fail = |e: std::io::Error| Error::Failure(format!("cannot write {}: {e}", path.display()));
    let file = std::fs::File::create(path).map_err(fail)?;
    let mut w = std::io::BufWriter::new(&file);
    use std::io::Write;
    w.write_all(&header).map_err(fail)?;
    for i in 0..FILE_TENSORS {
        check(cancel)?;
        let block = weights(per_tensor.min(GENERATED_PER_TENSOR), sigma(i), i);
        let mut left = per_tensor;
        while left > 0 {
            check(cancel)?;
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

/// [`Error::Cancelled`] once `cancel` is set.
fn check(cancel: &AtomicBool) -> Result<()> {
    if cancel.load(Ordering::Relaxed) {
        Err(Error::Cancelled)
    } else {
        Ok(())
    }
}

/// The files a run in `dir` makes (the generated input, cp's copy, the conversion's output),
/// named after this process: removed at the end of [`run`], however it ends. A caller that
/// may exit before `run` returns (a second Ctrl-C) removes them itself.
pub fn scratch_files(dir: &Path) -> [PathBuf; 3] {
    let stem = format!("lowp-bench-{}", std::process::id());
    ["", "-cp", "-out"].map(|what| dir.join(format!("{stem}{what}.safetensors")))
}

/// Removes its files when dropped.
struct RemoveOnDrop<'a>(&'a [PathBuf]);

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        for path in self.0 {
            // Best effort: a file that is already gone is fine.
            let _ = std::fs::remove_file(path);
        }
    }
}

/// What `convert_file` measured.
struct Outcome {
    /// Bytes of the generated file.
    bytes: u64,
    /// Seconds of each cp.
    cp_times: Vec<f64>,
    /// Each conversion with its output's bytes and the seconds of each run.
    measured: Vec<(Case, u64, Vec<f64>)>,
    /// How many runs each took.
    runs: u32,
}

/// The shortest of `times`.
fn best(times: &[f64]) -> f64 {
    times.iter().copied().fold(f64::INFINITY, f64::min)
}

/// Generates the file in `config.dir`, then alternately copies it (`std::fs::copy`, as cp
/// does) and converts it, `config.runs` times each case. Files of earlier runs whose process
/// is gone are removed first (each reported as a note). Stops with [`Error::Cancelled`] at
/// its next step once `cancel` is set; its files are removed however it ends.
pub fn run(config: &Config, progress: &dyn Progress, cancel: &AtomicBool) -> Result<Report> {
    let dir = &config.dir;
    if let Err(e) = std::fs::read_dir(dir) {
        return Err(Error::Failure(format!(
            "cannot use --dir: no folder {}: {e}",
            dir.display()
        )));
    }
    let targets = if config.to.is_empty() {
        every_target()
    } else {
        config.to.clone()
    };
    let cases = Case::all(&targets, config.fp8_scale);
    if cases.is_empty() {
        return Err(Error::Invalid("--to names nothing to measure".to_string()));
    }
    // The files of earlier runs that were killed (SIGKILL, or a second Ctrl-C before this
    // release removed them).
    for leftover in lowp_io::leftovers::remove_dead(dir, bench_file_pid) {
        progress.note(&leftover.to_string());
    }
    let files = scratch_files(dir);
    let _remove = RemoveOnDrop(&files);
    let [input, copied, converted] = &files;
    progress.step(&format!("writing {} ...", input.display()));
    let bytes = write_f32_file(input, config.size, cancel)?;
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
        for run in 0..config.runs {
            progress.step(&format!(
                "{} ({}/{}): run {}/{}",
                case.to.name(),
                c + 1,
                cases.len(),
                run + 1,
                config.runs
            ));
            // cp and the conversion alternate, so that both see the same state of the
            // machine.
            let start = Instant::now();
            std::fs::copy(input, copied)
                .map_err(|e| Error::Failure(format!("cannot copy {}: {e}", input.display())))?;
            cp_times.push(start.elapsed().as_secs_f64());
            let _ = std::fs::remove_file(copied);
            check(cancel)?;
            let start = Instant::now();
            let report = lowp_io::convert_with(&opts, &Notes(progress), cancel)?;
            times.push(start.elapsed().as_secs_f64());
            out_bytes = report.file_bytes_out;
            let _ = std::fs::remove_file(converted);
        }
        measured.push((*case, out_bytes, times));
    }
    progress.done();
    let outcome = Outcome {
        bytes,
        cp_times,
        measured,
        runs: config.runs,
    };
    Ok(Report {
        header: None,
        table: outcome.table(),
        notes: outcome.notes(),
        json: outcome.to_json(),
    })
}

/// lowp-io's progress reports, of which only the removed leftovers are passed on.
struct Notes<'a>(&'a dyn Progress);

impl lowp_io::Progress for Notes<'_> {
    fn removed_leftover(&self, leftover: &lowp_io::Leftover) {
        self.0.note(&leftover.to_string());
    }
}

impl Outcome {
    /// cp's best seconds.
    fn cp(&self) -> f64 {
        best(&self.cp_times)
    }

    /// The file's bytes per second in GB/s (10^9 bytes), at `seconds` per run.
    fn gbps(&self, seconds: f64) -> f64 {
        self.bytes as f64 / seconds / 1e9
    }

    /// The table: cp's row, then one per conversion.
    fn table(&self) -> Table {
        let cp = self.cp();
        let row = |name: String, out: u64, secs: f64, all: &[f64]| {
            vec![
                Cell::Text(name),
                Cell::Int(self.bytes as i64),
                Cell::Int(out as i64),
                Cell::Text(format!("{secs:.3}")),
                Cell::Text(format!("{:.2}", self.gbps(secs))),
                Cell::Text(format!("{:.2}", secs / cp)),
                Cell::Text(
                    all.iter()
                        .map(|s| format!("{s:.3}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
            ]
        };
        let mut rows = vec![row(
            "cp (std::fs::copy)".into(),
            self.bytes,
            cp,
            &self.cp_times,
        )];
        rows.extend(
            self.measured
                .iter()
                .map(|(case, out, times)| row(case.label(), *out, best(times), times)),
        );
        Table {
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
        }
    }

    /// What the table's columns mean and how it was measured.
    fn notes(&self) -> String {
        format!(
            "GB/s: bytes of the input file per second. vs cp: best time over cp's best time \
             (target: at most 1.5). {} runs each, each beside a cp; {} threads; the file was in \
             the page cache and the outputs were written into it. The weights are normal with \
             sigma 0.02 to 0.05 and one in 2000 an outlier 20 to 60 times larger.\n",
            self.runs,
            rayon::current_num_threads()
        )
    }

    /// The measurements as one JSON object.
    fn to_json(&self) -> Value {
        let cp = self.cp();
        let conversions: Vec<_> = self
            .measured
            .iter()
            .map(|(case, out, times)| {
                let secs = best(times);
                json!({
                    "to": case.to.name(),
                    "fp8_scale": if case.per_tensor { "per-tensor" } else { "none" },
                    "convert_seconds": times,
                    "convert_best": secs,
                    "convert_gbps": self.gbps(secs),
                    "ratio": secs / cp,
                    "output_bytes": out,
                })
            })
            .collect();
        json!({
            "size": self.bytes,
            "tensors": FILE_TENSORS,
            "weights": "normal, sigma 0.02 to 0.05 by tensor, one in 2000 an outlier x20..60",
            "threads": rayon::current_num_threads(),
            "cp_seconds": self.cp_times,
            "cp_best": cp,
            "cp_gbps": self.gbps(cp),
            "conversions": conversions,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::bench_file_pid;
    use std::ffi::OsStr;

    #[test]
    fn sigmas_run_from_002_to_005() {
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
