//! `lowp kernels`, `lowp bench sum` and `lowp bench matmul`.

mod common;

use common::{stdout, usage_error, work_error};

use serde_json::Value;

/// `lowp kernels` with `COLUMNS` set to `columns`, or unset (stdout is a pipe here, not a
/// terminal).
fn kernels_text(columns: Option<&str>) -> String {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_lowp"));
    command.arg("kernels");
    match columns {
        Some(c) => command.env("COLUMNS", c),
        None => command.env_remove("COLUMNS"),
    };
    let out = command.output().unwrap();
    assert!(out.status.success() && out.stderr.is_empty(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The blocks of the wrapped matrix: each a header line and its op rows.
fn blocks(text: &str) -> Vec<Vec<&str>> {
    text.split("\n\n")
        .filter(|b| b.starts_with("op "))
        .map(|b| b.lines().filter(|l| !l.starts_with('-')).collect())
        .collect()
}

#[test]
fn kernels_matrix_fits_the_width() {
    let wide = kernels_text(Some("1000"));
    let ops = blocks(&wide)[0].len() - 1;
    for (columns, width) in [
        (None, 80),
        (Some("80"), 80),
        (Some("120"), 120),
        (Some("30"), 30),
    ] {
        let out = kernels_text(columns);
        for line in out.lines() {
            // Only a lone dtype column may not fit a very narrow terminal.
            assert!(
                line.chars().count() <= width || width < 40,
                "{columns:?}: {} columns: {line}",
                line.chars().count()
            );
        }
        let blocks = blocks(&out);
        assert!(blocks.len() > 1, "{columns:?}: {out}");
        // Every block lists every op; together they hold every dtype once, in order.
        let mut dtypes = Vec::new();
        for block in &blocks {
            assert_eq!(block.len() - 1, ops, "{columns:?}");
            dtypes.extend(block[0].split_whitespace().skip(1));
        }
        let all: Vec<&str> = blocks_header(&wide);
        assert_eq!(dtypes, all, "{columns:?}");
        // cast has a kernel for every dtype, wherever its column went.
        let casts: usize = out
            .lines()
            .filter(|l| l.starts_with("cast "))
            .map(|l| l.split_whitespace().filter(|&c| c == "x").count())
            .sum();
        assert_eq!(casts, 19, "{columns:?}");
        assert!(out.contains("kernels for"), "{out}");
    }
    assert_eq!(blocks(&kernels_text(Some("120"))).len(), 2);
    assert_eq!(blocks(&kernels_text(None)).len(), 3);
}

/// The dtype names of the one-block matrix's header.
fn blocks_header(text: &str) -> Vec<&str> {
    text.lines()
        .next()
        .unwrap()
        .split_whitespace()
        .skip(1)
        .collect()
}

#[test]
fn kernels_matrix_lists_every_op_and_dtype() {
    let out = kernels_text(Some("1000"));
    let header: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header[0], "op");
    assert_eq!(header.len(), 1 + 19);
    assert_eq!(header[1..3], ["f16", "bf16"]);
    let cast = out.lines().find(|l| l.starts_with("cast ")).unwrap();
    assert_eq!(cast.split_whitespace().filter(|&c| c == "x").count(), 19);
    let sin = out.lines().find(|l| l.starts_with("sin ")).unwrap();
    let marks: Vec<&str> = sin.split_whitespace().skip(1).collect();
    assert_eq!(marks.iter().filter(|&&c| c == "x").count(), 14, "{sin}");
    assert_eq!(
        marks[14..],
        [".", ".", ".", ".", "."],
        "no sin for integers or bool"
    );
    assert!(out.contains("kernels for"), "{out}");
    let md = stdout(&["kernels", "--format", "markdown"]);
    assert!(md.starts_with("| op "), "{md}");
    assert!(md.lines().nth(1).unwrap().starts_with("| ---"), "{md}");
    assert_eq!(
        md.lines().filter(|l| l.starts_with('|')).count(),
        out.lines().count() - 2
    );
    // Markdown stays one table, whatever the width.
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_lowp"));
    let narrow = command
        .args(["kernels", "--format", "markdown"])
        .env("COLUMNS", "40")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(narrow.stdout).unwrap(), md);
}

#[test]
fn kernels_json_maps_ops_to_dtype_names() {
    let v: Value = serde_json::from_str(&stdout(&["kernels", "--format", "json"])).unwrap();
    let obj = v.as_object().unwrap();
    assert!(obj.len() >= 58, "{}", obj.len());
    let matmul: Vec<&str> = obj["matmul"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert!(matmul.contains(&"bf16") && matmul.contains(&"f32") && !matmul.contains(&"i32"));
    assert_eq!(obj["cast"].as_array().unwrap().len(), 19);
}

#[test]
fn bench_sum_and_matmul_run_small() {
    let dir = std::env::temp_dir().join(format!("lowp-tensor-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("sum.json");
    let out = stdout(&[
        "bench",
        "sum",
        "--size",
        "64K",
        "--min-time",
        "0.01",
        "--json",
        file.to_str().unwrap(),
    ]);
    assert!(out.starts_with("tensor kernels: "), "{out}");
    assert!(
        out.contains("vs memcpy") && out.contains("vs read"),
        "{out}"
    );
    let records: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    // memcpy and read, single and multi, then f16 and bf16 in each.
    assert_eq!(records.len(), 8);
    for r in &records {
        assert!(r["gbps"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["bytes"], 64 * 1024, "{r}");
    }
    assert_eq!(records[1]["name"], "read 64KiB single");
    assert_eq!(records[4]["name"], "sum f16 64KiB single");
    assert_eq!(records[4]["baseline"], "memcpy 64KiB single");
    assert_eq!(records[4]["read_baseline"], "read 64KiB single");
    // Each ratio is the baseline's time over the sum's.
    let ratio = |base: usize| {
        records[base]["seconds"].as_f64().unwrap() / records[4]["seconds"].as_f64().unwrap()
    };
    assert!((records[4]["ratio"].as_f64().unwrap() / ratio(0) - 1.0).abs() < 1e-9);
    assert!((records[4]["read_ratio"].as_f64().unwrap() / ratio(1) - 1.0).abs() < 1e-9);

    let file = dir.join("mm.json");
    let out = stdout(&[
        "bench",
        "matmul",
        "--size",
        "48",
        "--dtypes",
        "bf16",
        "--min-time",
        "0.01",
        "--no-numpy",
        "--json",
        file.to_str().unwrap(),
    ]);
    assert!(out.contains("GFLOP/s") && out.contains("48x48x48"), "{out}");
    assert!(out.contains("baseline was left out (--no-numpy)"), "{out}");
    let records: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let names: Vec<&str> = records
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    // One thread and all of them, by default.
    assert_eq!(
        names,
        [
            "matmul f32 48x48x48 single",
            "matmul bf16 48x48x48 single",
            "matmul f32 48x48x48 multi",
            "matmul bf16 48x48x48 multi"
        ]
    );
    assert_eq!(records[0]["ratio"], 1.0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bench_tensor_usage_errors() {
    let err = usage_error(&["bench", "sum", "--dtypes", "i32"]);
    assert!(
        err.contains("'i32' is not a float dtype") && err.contains("bf16"),
        "{err}"
    );
    let err = usage_error(&["bench", "sum", "--dtypes", "f7"]);
    assert!(err.contains("'f7'"), "{err}");
    let err = usage_error(&["bench", "matmul", "--size", "0"]);
    assert!(err.contains("0"), "{err}");
    let err = work_error(&["bench", "sum", "--json", "/nonexistent/lowp/x.json"]);
    assert!(
        err.contains("no folder /nonexistent/lowp: No such file or directory"),
        "{err}"
    );
}
