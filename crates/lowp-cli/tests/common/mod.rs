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
    let out = lowp(args);
    let err = String::from_utf8(out.stderr).expect("stderr is UTF-8");
    assert_eq!(
        out.status.code(),
        Some(2),
        "lowp {args:?} should exit 2: {err}"
    );
    assert!(out.stdout.is_empty(), "lowp {args:?} wrote to stdout");
    assert_eq!(err.lines().count(), 1, "lowp {args:?}: not one line: {err}");
    assert!(err.starts_with("error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}
