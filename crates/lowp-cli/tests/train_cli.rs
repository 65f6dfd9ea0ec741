//! `lowp train` end to end: the per-epoch lines, the comparison table, the JSON records and
//! the PNG, and the usage errors.

mod common;

use common::lowp;
use std::path::{Path, PathBuf};
use std::process::Output;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lowp-train-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The stdout of a run that must have succeeded.
fn stdout_of(out: Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    String::from_utf8(out.stdout).unwrap()
}

/// A JSON file, parsed.
fn read_json(file: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

#[test]
fn one_precision_prints_a_line_per_epoch_and_writes_json() {
    let dir = temp_dir("one");
    let json = dir.join("run.json");
    let out = lowp(&[
        "train",
        "--precision",
        "f16",
        "--epochs",
        "3",
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout_of(out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    for (i, line) in lines[..3].iter().enumerate() {
        assert!(
            line.starts_with(&format!("f16 epoch {}/3  loss ", i + 1)),
            "{line}"
        );
        assert!(
            line.contains("test accuracy") && line.contains("loss scale"),
            "{line}"
        );
        assert!(line.ends_with("skipped 0"), "{line}");
    }
    assert!(lines[3].starts_with("f16: test accuracy "), "{}", lines[3]);
    assert!(lines[3].contains("of 135 steps skipped"), "{}", lines[3]);

    let records = read_json(&json);
    let records = records.as_array().unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(r["precision"], "f16");
    let acc = r["test_accuracy"].as_f64().unwrap();
    assert!(acc > 0.8 && acc <= 1.0, "{acc}");
    assert_eq!(r["skipped_steps"], 0);
    assert!(r["final_loss_scale"].as_f64().unwrap() >= 65536.0);
    assert!(r["seconds"].as_f64().unwrap() > 0.0);
    assert_eq!(r["train_loss"].as_array().unwrap().len(), 3);
    // Written through a temporary file that is renamed: nothing else is left behind.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compare_prints_one_table_and_draws_the_curves() {
    let dir = temp_dir("compare");
    let png = dir.join("loss.png");
    let json = dir.join("all.json");
    let out = lowp(&[
        "train",
        "--compare",
        "--epochs",
        "1",
        "--plot",
        png.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let text = stdout_of(out);
    assert!(text.starts_with("precision "), "{text}");
    for p in ["f32", "f16", "f16-noscale", "bf16", "fp8"] {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{p} "))),
            "{p}: {text}"
        );
    }
    assert!(!text.contains("epoch 1/1"), "no per-epoch lines: {text}");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let records = read_json(&json);
    let names: Vec<&str> = records
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["precision"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["f32", "f16", "f16-noscale", "bf16", "fp8"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn usage_errors() {
    let out = lowp(&["train", "--precision", "f12"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value 'f12' for '--precision"),
        "{err}"
    );
    assert!(err.contains("valid precisions: f32, f16"), "{err}");
    let out = lowp(&["train", "--epochs", "0"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = lowp(&[
        "train",
        "--json",
        "/nonexistent-dir/x.json",
        "--epochs",
        "1",
    ]);
    // A missing folder is an I/O error, as a missing input is: exit 1 before any training.
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("No such file or directory"));
    let out = lowp(&["train", "--compare", "--precision", "bf16"]);
    assert_eq!(out.status.code(), Some(2));
}
