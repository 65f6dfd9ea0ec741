//! Running the built `lowp` binary, shared by the CLI test files.

// Each test file is its own crate and uses only some of these.
#![allow(dead_code)]

use serde_json::Value;
use std::process::{Command, Output};

/// Runs `lowp` with `args`.
pub fn lowp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lowp"))
        .args(args)
        .output()
        .expect("the lowp binary runs")
}

/// Runs `lowp`, expects success with nothing on stderr, and returns stdout.
pub fn stdout(args: &[&str]) -> String {
    let out = lowp(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "lowp {args:?} failed: {err}");
    assert!(err.is_empty(), "lowp {args:?} wrote to stderr: {err}");
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

/// Runs `lowp` and parses its stdout as JSON.
pub fn json(args: &[&str]) -> Value {
    serde_json::from_str(&stdout(args)).expect("valid JSON")
}

/// Runs `lowp`, expects exit code 2, nothing on stdout and one line on stderr starting with
/// `error: `, and returns that line.
pub fn usage_error(args: &[&str]) -> String {
    error_exit(2, args)
}

/// Runs `lowp`, expects exit code 1 (a failure of the work, such as a bad input file), nothing
/// on stdout and one line on stderr starting with `error: `, and returns that line.
pub fn work_error(args: &[&str]) -> String {
    error_exit(1, args)
}

/// Runs `lowp`, expects exit code `code`, nothing on stdout and one `error: ` line on stderr.
fn error_exit(code: i32, args: &[&str]) -> String {
    let out = lowp(args);
    let err = String::from_utf8(out.stderr).expect("stderr is UTF-8");
    assert_eq!(
        out.status.code(),
        Some(code),
        "lowp {args:?} should exit {code}: {err}"
    );
    assert!(out.stdout.is_empty(), "lowp {args:?} wrote to stdout");
    assert_eq!(err.lines().count(), 1, "lowp {args:?}: not one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// The names of the files in `dir`, sorted.
pub fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("the folder can be read")
        .map(|e| {
            e.expect("a folder entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// A fixture's path (tests/data, made by tools/make_convert_fixtures.py).
pub fn data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}
