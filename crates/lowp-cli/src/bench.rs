//! `lowp bench`: the command line of the `lowp-bench` library. Each benchmark's flags become
//! its typed configuration; the header, table and notes it returns are printed here, and
//! its steps are shown on stderr when that is a terminal.

use crate::convert::parse_target;
use crate::error::CliError;
use crate::interrupt;
use crate::output;
use clap::{Args, Subcommand};
use lowp::bulk::{Path, forced_path_error};
use lowp_analysis::registry;
use lowp_bench::convert::{self as bulk, Direction};
use lowp_bench::convert_file::{self, Fp8Scales};
use lowp_bench::timing::ThreadChoice;
use lowp_bench::{Progress, Report, matmul, sum};
use lowp_io::Target;
use lowp_io::size::parse_size;
use lowp_tensor::DType;
use std::io::IsTerminal;
use std::path::PathBuf;

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
    Convert(ConvertArgs),
    /// `lowp convert` of a generated f32 safetensors file, beside `cp` of the same file.
    ///
    /// Writes a file of --size bytes of f32 tensors (16 of them, roughly normal values) in
    /// --dir, then alternately copies it (std::fs::copy, as cp does) and converts it to --to,
    /// --runs times each, both reading from the page cache and writing into it. GB/s is the
    /// input file's bytes per second; "vs cp" is the conversion's best time over cp's best
    /// time. The files are removed at the end.
    ConvertFile(ConvertFileArgs),
    /// The tensor layer's sum of a large f16/bf16 tensor, beside memcpy and a bare read of
    /// the same bytes.
    ///
    /// GB/s is the tensor's bytes per second (each read once); memcpy's is the bytes copied
    /// per second (each read once and written once), so "vs memcpy" compares the time to sum
    /// a tensor with the time to copy it. "read" reads the same bytes with next to no
    /// arithmetic: the memory's speed, which no sum can pass, so "vs read" says how close
    /// the sum comes to it.
    Sum(SumArgs),
    /// The tensor layer's matrix product, in GFLOP/s (2 n^3 flops per n x n x n product),
    /// for f32, f16 and bf16 side by side.
    Matmul(MatmulArgs),
}

/// Arguments of `lowp bench convert`.
#[derive(Args)]
#[command(after_help = format!("Formats: {}", registry::names()))]
pub struct ConvertArgs {
    /// Formats to measure, comma separated (default: every format).
    #[arg(long, value_name = "FORMAT", value_delimiter = ',', value_parser = registry::lookup)]
    formats: Vec<&'static lowp::Format>,

    /// Directions to measure, comma separated (default: all four).
    #[arg(long, value_name = "DIRECTION", value_enum, value_delimiter = ',')]
    directions: Vec<Direction>,

    /// Sizes of the f32 or f64 buffer, comma separated, each a multiple of 8 bytes: bytes, or
    /// with K, KiB, M, MiB, G, GiB (powers of 1024) or KB, MB, GB (powers of 1000) (default:
    /// 16K,1M,256M; with --quick: 4K).
    #[arg(long, value_name = "SIZE", value_delimiter = ',', value_parser = parse_buffer_size)]
    sizes: Vec<u64>,

    /// Single-threaded (the slice methods), multi-threaded (the par_ methods on all cores), or
    /// both.
    #[arg(long, value_name = "THREADS", value_enum, default_value_t = ThreadChoice::Both)]
    threads: ThreadChoice,

    /// Sample each measurement for at least this many seconds (default: 0.2; with --quick:
    /// 0.001).
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    min_time: Option<f64>,

    /// A quick smoke run: tiny buffers and a very short sampling time.
    #[arg(long)]
    quick: bool,

    /// Run this conversion path explicitly for the single-threaded rows (default: the active
    /// path); the multi-threaded rows use the active path.
    #[arg(long, value_name = "NAME", value_parser = bulk::parse_path)]
    path: Option<Path>,

    /// Also write every measurement, baselines included, to FILE as a JSON array.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Arguments of `lowp bench convert-file`.
#[derive(Args)]
pub struct ConvertFileArgs {
    /// Size of the generated f32 file: bytes, or with K, KiB, M, MiB, G, GiB (powers of 1024)
    /// or KB, MB, GB (powers of 1000).
    #[arg(long, value_name = "SIZE", value_parser = parse_buffer_size, default_value = "1G")]
    size: u64,

    /// The types or block-quantized schemes to convert to (as `lowp convert --to`), comma
    /// separated (default: every float type and every scheme).
    #[arg(long, value_name = "TYPE", value_delimiter = ',', value_parser = parse_target)]
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
    dir: Option<PathBuf>,

    /// Also write the measurements to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Arguments of `lowp bench sum`.
#[derive(Args)]
pub struct SumArgs {
    /// Dtypes to sum, comma separated (any float dtype).
    #[arg(long, value_name = "DTYPE", value_delimiter = ',', value_parser = parse_float_dtype, default_value = "f16,bf16")]
    dtypes: Vec<DType>,

    /// Bytes of the tensor: bytes, or with K, KiB, M, MiB, G, GiB (powers of 1024) or KB, MB,
    /// GB (powers of 1000).
    #[arg(long, value_name = "SIZE", value_parser = parse_buffer_size, default_value = "256M")]
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
    json: Option<PathBuf>,
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
    json: Option<PathBuf>,
}

/// clap's parser for `--min-time`: a positive number of seconds.
fn parse_seconds(text: &str) -> Result<f64, CliError> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0)
        .ok_or_else(|| CliError::usage(format!("'{text}' is not a positive number of seconds")))
}

/// clap's parser for `--size` and `--sizes`: a size ([`parse_size`]) of a buffer of f32s or
/// f64s, so a multiple of 8 bytes.
fn parse_buffer_size(text: &str) -> Result<u64, CliError> {
    let bytes = parse_size(text).map_err(|e| CliError::usage(e.to_string()))?;
    if bytes.is_multiple_of(8) {
        Ok(bytes)
    } else {
        Err(CliError::usage(format!(
            "'{text}' is {bytes} bytes: give a multiple of 8"
        )))
    }
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

/// The benchmarks' steps on stderr, each over the last, when stderr is a terminal; notes on
/// lines of their own always.
struct Status(bool);

impl Progress for Status {
    fn step(&self, text: &str) {
        if self.0 {
            eprint!("\r\x1b[2K{text}");
        }
    }
    fn note(&self, text: &str) {
        eprintln!("note: {}", crate::printable::printable(text));
    }
    fn done(&self) {
        if self.0 {
            eprint!("\r\x1b[2K");
        }
    }
}

/// Writes the report's JSON to the `--json` file, if one was given, and answers its text.
fn finish(report: Report, json: Option<&std::path::Path>) -> Result<String, CliError> {
    if let Some(file) = json {
        output::write_atomically(file, output::json_text(&report.json).as_bytes())?;
    }
    Ok(report.to_text())
}

/// Runs `lowp bench …` and returns the table to print. `convert` prints its first line (the
/// paths and threads) at once, since a full run takes minutes.
pub fn run(args: &BenchArgs) -> Result<String, CliError> {
    let status = Status(std::io::stderr().is_terminal());
    match &args.what {
        BenchCommand::Convert(args) => {
            if let Some(err) = forced_path_error() {
                return Err(CliError::usage(err.to_string()));
            }
            output::check_json(args.json.as_deref())?;
            let config = bulk::Config {
                formats: if args.formats.is_empty() {
                    registry::all().collect()
                } else {
                    args.formats.clone()
                },
                directions: if args.directions.is_empty() {
                    Direction::ALL.to_vec()
                } else {
                    args.directions.clone()
                },
                sizes: match (&args.sizes[..], args.quick) {
                    ([], false) => bulk::DEFAULT_SIZES.to_vec(),
                    ([], true) => vec![bulk::QUICK_SIZE],
                    (sizes, _) => sizes.to_vec(),
                },
                threads: args.threads.threads(),
                min_time: args.min_time.unwrap_or(if args.quick {
                    bulk::QUICK_MIN_TIME
                } else {
                    bulk::DEFAULT_MIN_TIME
                }),
                path: args.path,
            };
            output::emit(&bulk::header(args.path))?;
            finish(bulk::run(&config, &status)?, args.json.as_deref())
        }
        BenchCommand::ConvertFile(args) => {
            output::check_outputs(
                &[],
                &[
                    ("--json", args.json.as_deref(), output::Expect::File),
                    ("--dir", args.dir.as_deref(), output::Expect::Dir),
                ],
            )?;
            let config = convert_file::Config {
                size: args.size,
                to: args.to.clone(),
                fp8_scale: args.fp8_scale,
                runs: args.runs,
                dir: args.dir.clone().unwrap_or_else(std::env::temp_dir),
            };
            // Ctrl-C and SIGTERM stop the run at its next step; a second one exits at once,
            // removing the files first.
            interrupt::watch_interrupts();
            let _scratch = interrupt::Scratch::new(convert_file::scratch_files(&config.dir).into());
            let report = convert_file::run(&config, &status, interrupt::flag())?;
            finish(report, args.json.as_deref())
        }
        BenchCommand::Sum(args) => {
            output::check_json(args.json.as_deref())?;
            let config = sum::Config {
                dtypes: args.dtypes.clone(),
                size: args.size,
                threads: args.threads.threads(),
                min_time: args.min_time,
            };
            finish(sum::run(&config, &status)?, args.json.as_deref())
        }
        BenchCommand::Matmul(args) => {
            output::check_json(args.json.as_deref())?;
            let config = matmul::Config {
                sizes: args.sizes.iter().map(|&n| n as usize).collect(),
                dtypes: args.dtypes.clone(),
                threads: args.threads.threads(),
                min_time: args.min_time,
                numpy: !args.no_numpy,
            };
            finish(matmul::run(&config, &status)?, args.json.as_deref())
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn buffer_sizes_are_multiples_of_8_bytes() {
        assert_eq!(super::parse_buffer_size("1KB").unwrap(), 1000);
        assert_eq!(super::parse_buffer_size("4K").unwrap(), 4096);
        let err = super::parse_buffer_size("12").unwrap_err().to_string();
        assert!(err.contains("multiple of 8"), "{err}");
    }
}
