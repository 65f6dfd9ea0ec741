//! `lowp bench convert-file`: `lowp convert` of a generated f32 safetensors file, beside cp.

use super::{fill, parse_size};
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

    /// The type or block-quantized scheme to convert to (as `lowp convert --to`).
    #[arg(long, value_name = "TYPE", value_parser = file_convert::parse_target, default_value = "bf16")]
    to: Target,

    /// How many times to run each of cp and the conversion (the best time counts).
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

/// Tensors in the file `lowp bench convert-file` generates.
const FILE_TENSORS: u64 = 16;

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

/// Writes an f32 safetensors file of about `size` bytes at `path`: [`FILE_TENSORS`] tensors of
/// [`fill`]ed values, written a block at a time, then flushed to disk so that writing it back
/// does not overlap the measurements.
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
    let mut block = vec![0f32; per_tensor.min(1 << 20)];
    fill(&mut block, 3.0, true);
    for _ in 0..FILE_TENSORS {
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
    // The files of earlier runs that were killed (SIGKILL, or a second Ctrl-C before this
    // release removed them).
    for leftover in lowp_io::leftovers::remove_dead(&dir, bench_file_pid) {
        eprintln!("note: {leftover}");
    }
    let stem = format!("lowp-bench-{}", std::process::id());
    let input = dir.join(format!("{stem}.safetensors"));
    let copied = dir.join(format!("{stem}-cp.safetensors"));
    let converted = dir.join(format!("{stem}-{}.safetensors", args.to.name()));
    // Ctrl-C and SIGTERM stop the run at its next step and the files go with `_scratch`.
    files::watch_interrupts();
    let _scratch = files::Scratch::new(vec![input.clone(), copied.clone(), converted.clone()]);
    let progress = std::io::stderr().is_terminal();
    if progress {
        eprint!("writing {} ...", input.display());
    }
    let bytes = write_f32_file(&input, args.size)?;
    let opts = lowp_io::Options::new(input.clone(), Some(converted.clone()), args.to);
    let (mut cp_times, mut convert_times) = (Vec::new(), Vec::new());
    let mut out_bytes = 0;
    for run in 0..args.runs {
        if progress {
            eprint!("\r\x1b[2Krun {}/{}", run + 1, args.runs);
        }
        let start = Instant::now();
        std::fs::copy(&input, &copied)
            .map_err(|e| CliError::failure(format!("cannot copy {}: {e}", input.display())))?;
        cp_times.push(start.elapsed().as_secs_f64());
        let _ = std::fs::remove_file(&copied);
        files::check_interrupted()?;
        let start = Instant::now();
        let report = file_convert::convert(&opts, false)?;
        convert_times.push(start.elapsed().as_secs_f64());
        out_bytes = report.file_bytes_out;
        let _ = std::fs::remove_file(&converted);
    }
    if progress {
        eprint!("\r\x1b[2K");
    }
    let best = |t: &[f64]| t.iter().copied().fold(f64::INFINITY, f64::min);
    let (cp, conv) = (best(&cp_times), best(&convert_times));
    let gbps = |s: f64| bytes as f64 / s / 1e9;
    let what = format!("lowp convert f32→{}", args.to.name());
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
        rows: [
            ("cp (std::fs::copy)", bytes, cp, &cp_times),
            (&what[..], out_bytes, conv, &convert_times),
        ]
        .into_iter()
        .map(|(name, out, secs, all)| {
            vec![
                Cell::Text(name.to_string()),
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
        })
        .collect(),
    };
    if let Some(file) = &args.json {
        let value = json!({
            "size": bytes,
            "to": args.to.name(),
            "tensors": FILE_TENSORS,
            "threads": rayon::current_num_threads(),
            "cp_seconds": cp_times,
            "convert_seconds": convert_times,
            "cp_best": cp,
            "convert_best": conv,
            "cp_gbps": gbps(cp),
            "convert_gbps": gbps(conv),
            "ratio": conv / cp,
            "output_bytes": out_bytes,
        });
        output::write_atomically(file, output::json_text(&value).as_bytes())?;
    }
    Ok(format!(
        "{}\nGB/s: bytes of the input file per second. vs cp: best time over cp's best time \
         (target: at most 1.5). {} runs each, alternating; {} threads; the file was in the page \
         cache and the outputs were written into it.\n",
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
