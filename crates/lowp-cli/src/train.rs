//! `lowp train`: the mixed-precision trainer of crate lowp-amp on scikit-learn's digits.
//!
//! One precision (`--precision`) prints a line per epoch: training loss, test loss, test
//! accuracy, loss scale and steps skipped so far. `--compare` trains every precision with the
//! same seed and prints one table (final accuracy, steps skipped, final loss scale, time) and
//! draws the loss curves as a PNG (`lowp_analysis::plot::losses`). `--json FILE` writes one record per
//! precision run. Files are written to a temporary name and renamed into place.
//!
//! A progress bar over the steps goes to stderr when stderr is a terminal.

use crate::error::CliError;
use crate::output::{self, Cell, Column, Table};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lowp_amp::data::Digits;
use lowp_amp::{EpochStats, Precision, RunResult, TrainConfig, train};
use lowp_analysis::plot::Picture;
use lowp_analysis::plot::losses::{self, Curve};
use serde_json::{Map, Value};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Arguments of `lowp train`.
#[derive(Args)]
pub struct TrainArgs {
    /// The precision to train in: f32 (reference), f16 (autocast + dynamic loss scaling), f16-noscale
    /// (f16 with a static loss scale of 1), bf16 (autocast, no scaling) or fp8 (delayed
    /// scaling, E4M3 forward, E5M2 gradients).
    #[arg(long, value_name = "PRECISION", default_value = "f32", value_parser = parse_precision)]
    precision: Precision,

    /// Train every precision with the same seed and print one comparison table.
    #[arg(long, conflicts_with = "precision")]
    compare: bool,

    /// Passes over the 1,438 training images (batches of 32), 1 or more.
    #[arg(long, value_name = "N", default_value_t = 20, value_parser = parse_epochs,
          allow_negative_numbers = true)]
    epochs: usize,

    /// Seeds the train/test split, the initial weights and the batch order (a whole number,
    /// 0 to 2^64 - 1).
    #[arg(long, value_name = "SEED", default_value_t = 0, value_parser = parse_seed,
          allow_negative_numbers = true)]
    seed: u64,

    /// Write one JSON record per precision run (precision, test_accuracy, skipped_steps,
    /// final_loss_scale, seconds, and the per-epoch losses).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,

    /// Draw the training-loss curves into this PNG (with --compare: default
    /// lowp-train-loss.png).
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
}

/// clap's parser for precision names; the library's message names the valid ones.
fn parse_precision(name: &str) -> Result<Precision, String> {
    name.parse().map_err(user_message)
}

/// What the user reads of a training library error: an argument's message without the name
/// of the type or op that checked it (`Precision:`, `TrainConfig:`), which means nothing to
/// someone typing options.
fn user_message(e: lowp_tensor::Error) -> String {
    match e {
        lowp_tensor::Error::Argument { message, .. } => message,
        other => other.to_string(),
    }
}

/// clap's parser for `--seed`: a whole number that fits 64 bits.
fn parse_seed(text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| "give a whole number from 0 to 18446744073709551615".to_string())
}

/// clap's parser for `--epochs`: a whole number, at least 1.
fn parse_epochs(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("train for at least 1 epoch".to_string()),
        Ok(n) => Ok(n),
        Err(_) => Err("give a whole number of epochs, 1 or more (20 by default)".to_string()),
    }
}

/// The default picture of `--compare`.
const DEFAULT_PLOT: &str = "lowp-train-loss.png";

/// The loss curves of `runs`, each precision in the colour of its place in [`Precision::ALL`]
/// whichever runs are drawn.
fn loss_curves(runs: &[RunResult], config: &TrainConfig) -> Result<Picture, CliError> {
    let curves: Vec<Curve> = runs
        .iter()
        .enumerate()
        .map(|(k, r)| Curve {
            label: format!("{} ({:.2}%)", r.precision, 100.0 * r.test_accuracy),
            points: r
                .epochs
                .iter()
                .map(|e| (e.epoch as f64, e.train_loss))
                .collect(),
            colour: Precision::ALL
                .iter()
                .position(|&p| p == r.precision)
                .unwrap_or(k),
        })
        .collect();
    let title = format!(
        "Training loss on digits, MLP {:?}, batch {}, seed {}",
        config.hidden, config.batch_size, config.seed
    );
    Ok(losses::loss_curves(&curves, &title)?)
}

/// Runs `lowp train`; the per-epoch lines are printed as they come, the returned text is
/// what follows them.
pub fn run(args: &TrainArgs) -> Result<String, CliError> {
    let config = TrainConfig {
        epochs: args.epochs,
        seed: args.seed,
        ..TrainConfig::default()
    };
    // Only --epochs reaches the configuration, and clap has checked it; a knob out of range
    // here would be this program's own, so say what it is without the type's name.
    config
        .validate()
        .map_err(|e| CliError::usage(user_message(e)))?;
    let plot = match (&args.plot, args.compare) {
        (Some(p), _) => Some(p.clone()),
        (None, true) => Some(PathBuf::from(DEFAULT_PLOT)),
        (None, false) => None,
    };
    // Before the training: a --json or --plot that cannot be written fails now, not after it.
    output::check_outputs(
        &[],
        &[
            ("--json", args.json.as_deref(), output::Expect::File),
            ("--plot", plot.as_deref(), output::Expect::File),
        ],
    )?;
    let data = Digits::load()
        .and_then(|d| d.split(config.test_fraction, config.seed))
        .map_err(|e| CliError::failure(e.to_string()))?;
    let precisions: Vec<Precision> = if args.compare {
        Precision::ALL.to_vec()
    } else {
        vec![args.precision]
    };

    let steps_per_run = data.train.len().div_ceil(config.batch_size) as u64 * args.epochs as u64;
    let bar = progress(steps_per_run * precisions.len() as u64);
    let mut runs = Vec::with_capacity(precisions.len());
    for (k, &p) in precisions.iter().enumerate() {
        bar.set_message(p.name());
        let done_before = steps_per_run * k as u64;
        let result = train(
            p,
            &config,
            &data,
            |done, _| bar.set_position(done_before + done),
            |e| {
                if !args.compare {
                    bar.suspend(|| print_line(&epoch_line(p, args.epochs, e)));
                }
            },
        )
        .map_err(|e| CliError::failure(format!("training in {p} failed: {e}")))?;
        runs.push(result);
    }
    bar.finish_and_clear();

    if let Some(file) = &args.json {
        output::write_atomically(file, output::json_text(&json_records(&runs)).as_bytes())?;
    }
    let mut text = if args.compare {
        comparison(&runs).to_text()
    } else {
        summary(&runs[0])
    };
    if let Some(file) = &plot {
        let picture = loss_curves(&runs, &config)?;
        output::write_atomically(file, &picture.png)?;
        text.push_str(&format!("loss curves: {}\n", file.display()));
    }
    Ok(text)
}

/// A progress bar over `total` steps on stderr, hidden when stderr is not a terminal.
fn progress(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} steps eta {eta} {msg}") {
        bar.set_style(style);
    }
    bar
}

/// Prints one line on stdout now (a closed pipe is ignored; the summary reports errors).
fn print_line(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|()| out.flush());
}

/// The line of one epoch.
fn epoch_line(p: Precision, epochs: usize, e: &EpochStats) -> String {
    format!(
        "{p} epoch {:>w$}/{epochs}  loss {:.4}  test loss {:.4}  test accuracy {:6.2}%  \
         loss scale {}  skipped {}",
        e.epoch,
        e.train_loss,
        e.test_loss,
        100.0 * e.test_accuracy,
        e.loss_scale,
        e.skipped_steps,
        w = epochs.to_string().len()
    )
}

/// The closing line of a single run.
fn summary(r: &RunResult) -> String {
    format!(
        "{}: test accuracy {:.2}%, {} of {} steps skipped, final loss scale {}, {:.2} s\n",
        r.precision,
        100.0 * r.test_accuracy,
        r.skipped_steps,
        r.epochs.last().map_or(0, |e| e.steps),
        r.final_loss_scale,
        r.seconds
    )
}

/// The `--compare` table.
fn comparison(runs: &[RunResult]) -> Table {
    let columns = vec![
        Column::left("precision", "precision"),
        Column::left("recipe", "recipe"),
        Column::right("test_accuracy", "test accuracy %"),
        Column::right("final_loss", "final train loss"),
        Column::right("skipped_steps", "skipped steps"),
        Column::right("final_loss_scale", "final loss scale"),
        Column::right("seconds", "seconds"),
    ];
    let rows = runs
        .iter()
        .map(|r| {
            let loss = r.epochs.last().map_or(f64::NAN, |e| e.train_loss);
            vec![
                Cell::Text(r.precision.name().to_string()),
                Cell::Text(r.precision.description().to_string()),
                Cell::Text(format!("{:.2}", 100.0 * r.test_accuracy)),
                Cell::Text(format!("{loss:.4}")),
                Cell::Int(i64::try_from(r.skipped_steps).unwrap_or(i64::MAX)),
                Cell::Number(f64::from(r.final_loss_scale)),
                Cell::Text(format!("{:.2}", r.seconds)),
            ]
        })
        .collect();
    Table { columns, rows }
}

/// The `--json` records: one object per run.
fn json_records(runs: &[RunResult]) -> Value {
    let number = |x: f64| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number);
    Value::Array(
        runs.iter()
            .map(|r| {
                let mut m = Map::new();
                m.insert("precision".into(), r.precision.name().into());
                m.insert("test_accuracy".into(), number(r.test_accuracy));
                m.insert("skipped_steps".into(), r.skipped_steps.into());
                m.insert(
                    "final_loss_scale".into(),
                    number(f64::from(r.final_loss_scale)),
                );
                m.insert("seconds".into(), number(r.seconds));
                m.insert("epochs".into(), r.epochs.len().into());
                m.insert(
                    "train_loss".into(),
                    r.epochs.iter().map(|e| number(e.train_loss)).collect(),
                );
                m.insert(
                    "test_accuracy_per_epoch".into(),
                    r.epochs.iter().map(|e| number(e.test_accuracy)).collect(),
                );
                Value::Object(m)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_result() -> RunResult {
        let epoch = |epoch, loss| EpochStats {
            epoch,
            train_loss: loss,
            test_loss: 0.5,
            test_accuracy: 0.9,
            loss_scale: 65536.0,
            skipped_steps: 2,
            steps: 45 * epoch as u64,
        };
        RunResult {
            precision: Precision::F16,
            epochs: vec![epoch(1, 1.5), epoch(2, 0.25)],
            test_accuracy: 0.9,
            skipped_steps: 2,
            final_loss_scale: 65536.0,
            seconds: 1.25,
        }
    }

    #[test]
    fn json_records_carry_the_documented_fields() {
        let v = json_records(&[run_result()]);
        let r = &v[0];
        assert_eq!(r["precision"], "f16");
        assert_eq!(r["test_accuracy"], 0.9);
        assert_eq!(r["skipped_steps"], 2);
        assert_eq!(r["final_loss_scale"], 65536.0);
        assert_eq!(r["seconds"], 1.25);
        assert_eq!(r["train_loss"], serde_json::json!([1.5, 0.25]));
    }

    #[test]
    fn lines_and_table_show_the_numbers() {
        let r = run_result();
        let line = epoch_line(r.precision, 20, &r.epochs[1]);
        assert_eq!(
            line,
            "f16 epoch  2/20  loss 0.2500  test loss 0.5000  test accuracy  90.00%  \
             loss scale 65536  skipped 2"
        );
        assert_eq!(
            summary(&r),
            "f16: test accuracy 90.00%, 2 of 90 steps skipped, final loss scale 65536, 1.25 s\n"
        );
        let text = comparison(&[r]).to_text();
        assert!(text.contains("90.00"), "{text}");
        assert!(text.contains("65536"), "{text}");
    }
}
