//! The words a user reads: help and report texts that cite no document the user lacks, error
//! messages that say what was typed and what is accepted (never a type's name), the error
//! table's account of flushed results agreeing with its numbers, and `lowp inspect` reading
//! the numbers Rust users write (hex floats, `-nan`, `1e400`).

mod common;

use common::{json, lowp, stdout, usage_error};

/// Every subcommand, for the help texts.
const COMMANDS: [&str; 11] = [
    "formats",
    "inspect",
    "convert",
    "kernels",
    "bench",
    "error-table",
    "conversion-error",
    "accumulate",
    "plot",
    "report",
    "train",
];

/// What the project's sources are called inside the project: a user has none of them.
fn cites_unseen_documents(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    [
        "seed's",
        "seeds'",
        "seed 00",
        "appendix",
        "table 3.",
        "section 1.4",
    ]
    .into_iter()
    .find(|cited| lower.contains(cited))
}

#[test]
fn help_texts_cite_no_unseen_documents() {
    let mut pages = vec![stdout(&["--help"])];
    for command in COMMANDS {
        pages.push(stdout(&[command, "--help"]));
        pages.push(stdout(&["help", command]));
    }
    for page in &pages {
        assert_eq!(cites_unseen_documents(page), None, "{page}");
    }
    let table = stdout(&["error-table", "--help"]);
    assert!(table.contains("docs/precision-analysis.md"), "{table}");
}

#[test]
fn outputs_cite_no_unseen_documents() {
    for args in [
        &["error-table", "--formats", "f16", "--functions", "exp,sin"][..],
        &["error-table", "--formats", "bf16", "--format", "markdown"],
        &["accumulate", "--n", "6000"],
    ] {
        let text = stdout(args);
        assert_eq!(cites_unseen_documents(&text), None, "{args:?}: {text}");
    }
}

/// The first table's heading says what the numbers do: a result flushed to zero is in the
/// error columns (relative error 1) and also counted under "to 0"; overflows are not.
#[test]
fn error_table_says_flushed_results_are_in_the_errors() {
    let text = stdout(&["error-table", "--formats", "f16", "--functions", "exp"]);
    let heading = text.lines().next().unwrap();
    assert!(
        heading.contains("flushed to 0 stays in them (relative error 1)"),
        "{heading}"
    );
    assert!(
        !heading.contains("flushed to 0 and NaNs counted apart"),
        "{heading}"
    );
    // And so the numbers: exp flushes some f16 results to zero, and its max rel is 1.
    let records = json(&[
        "error-table",
        "--formats",
        "f16",
        "--functions",
        "exp",
        "--format",
        "json",
    ]);
    let exp = &records[0];
    assert!(exp["underflows"].as_u64().unwrap() > 0, "{exp}");
    assert_eq!(exp["max_rel"], 1.0, "{exp}");
    // Overflows are left out: measured + overflows = inputs (no NaNs in exp).
    assert_eq!(
        exp["measured"].as_u64().unwrap() + exp["overflows"].as_u64().unwrap(),
        exp["inputs"].as_u64().unwrap(),
        "{exp}"
    );
}

#[test]
fn train_errors_name_what_is_accepted_not_types() {
    let err = usage_error(&["train", "--precision", "xyz"]);
    assert!(err.contains("'xyz'"), "{err}");
    assert!(err.contains("f32, f16, f16-noscale, bf16, fp8"), "{err}");
    assert!(!err.contains("Precision:"), "{err}");
    for epochs in ["0", "-1", "abc", "2.5"] {
        let err = usage_error(&["train", "--epochs", epochs]);
        assert!(err.contains(&format!("'{epochs}'")), "{err}");
        assert!(err.contains("epoch"), "{err}");
        assert!(!err.contains("TrainConfig"), "{err}");
    }
    for seed in ["-1", "abc", "18446744073709551616"] {
        let err = usage_error(&["train", "--seed", seed]);
        assert!(err.contains(&format!("'{seed}'")), "{err}");
        assert!(err.contains("whole number from 0 to"), "{err}");
    }
}

/// The input line and the results of `lowp inspect VALUE --to f16,...` as JSON.
fn inspect(value: &str, to: &str) -> serde_json::Value {
    json(&["inspect", value, "--to", to, "--format", "json"])
}

#[test]
fn inspect_reads_hex_floats_exactly() {
    for (text, bits) in [
        ("0x1.8p3", "0x4a00"),
        ("-0x1.8p3", "0xca00"),
        ("0X1.8P3", "0x4a00"),
        ("0x1.8", "0x3e00"),
        ("0x1p-24", "0x0001"),
        ("-0x1p-25", "0x8000"), // a tie with 0: to even
        ("0x1.000000000000000000001p-25", "0x0001"),
        ("0x1.002p0", "0x3c00"), // the tie between 1 and 1 + 2^-10: to even
        ("0x1.002000000000000000000001p0", "0x3c01"),
    ] {
        let v = inspect(text, "f16");
        assert_eq!(v["results"][0]["bits"], bits, "{text}: {v}");
        assert_eq!(v["input"]["kind"], "hex float", "{text}");
    }
    // Subnormal in f32 (not a lowp format, so through bf16, whose range is f32's).
    let v = inspect("0x1p-133", "bf16");
    assert_eq!(v["results"][0]["bits"], "0x0001", "{v}");
    // Rounded once from the exact value: this one is a hair above the f16 tie at 1 + 2^-11,
    // yet its nearest f64 is the tie itself, which would round down.
    let v = inspect("0x1.0020000000000000001p0", "f16");
    assert_eq!(v["results"][0]["bits"], "0x3c01", "{v}");
    assert_eq!(v["results"][0]["double_rounding"], true, "{v}");
    // The table shows it too; no --as is needed as for a bit pattern.
    let text = stdout(&["inspect", "0x1.8p3", "--to", "f16"]);
    assert!(text.starts_with("input: 0x1.8p3 (as f64: 12)"), "{text}");
    // Malformed ones say how to write one.
    let err = usage_error(&["inspect", "0x1.8p"]);
    assert!(err.contains("0x1.8p3"), "{err}");
}

#[test]
fn inspect_reads_infinities_nan_and_f64_overflow() {
    let v = inspect("-inf", "f16");
    assert_eq!(v["results"][0]["bits"], "0xfc00", "{v}");
    let v = inspect("inf", "f16");
    assert_eq!(v["results"][0]["bits"], "0x7c00", "{v}");
    let v = inspect("-nan", "f16");
    assert_eq!(v["results"][0]["category"], "nan", "{v}");
    let text = stdout(&["inspect", "1e400", "--to", "f16"]);
    assert!(
        text.starts_with("input: 1e400 is beyond f64's range: read as inf"),
        "{text}"
    );
    assert!(text.contains("overflow to inf"), "{text}");
    let v = inspect("-1e400", "f16");
    assert_eq!(
        v["input"]["note"],
        "-1e400 is beyond f64's range: read as -inf; errors are measured against -f64::MAX"
    );
    assert_eq!(v["results"][0]["bits"], "0xfc00", "{v}");
    let v = inspect("inf", "f16");
    assert!(v["input"]["note"].is_null(), "{v}");
}

#[test]
fn inspect_bit_patterns_are_unchanged() {
    let v = json(&["inspect", "0x3c00", "--as", "f16", "--format", "json"]);
    assert_eq!(v["input"]["kind"], "bits");
    assert_eq!(v["results"][0]["value"], 1.0);
    let err = usage_error(&["inspect", "0x3c00"]);
    assert!(err.contains("--as f16"), "{err}");
    let out = lowp(&["inspect", "-0x3c00", "--as", "f16"]);
    assert_eq!(out.status.code(), Some(2));
}
