//! Runs the built `lowp` binary and checks what it prints and how it exits.

mod common;

use common::{json, lowp, stdout, usage_error, work_error};

use serde_json::Value;
use std::process::{Command, Output};

/// The line of a text table that starts with `name` and a space.
fn row<'a>(table: &'a str, name: &str) -> &'a str {
    table
        .lines()
        .find(|l| l.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("no row for {name} in\n{table}"))
}

/// The words of a row.
fn cells(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

const ALL_FORMATS: [&str; 12] = [
    "f16",
    "bf16",
    "f8e4m3fn",
    "f8e5m2",
    "f8e4m3fnuz",
    "f8e5m2fnuz",
    "f8e4m3",
    "f8e3m4",
    "f8e8m0fnu",
    "f6e2m3fn",
    "f6e3m2fn",
    "f4e2m1fn",
];

#[test]
fn formats_table_has_the_seed_figures() {
    let out = stdout(&["formats"]);
    assert_eq!(out.lines().count(), 2 + 12, "{out}");
    let header = cells(out.lines().next().unwrap());
    assert_eq!(
        header[..6],
        ["format", "bits", "sign", "exp", "mant", "bias"]
    );
    for name in ALL_FORMATS {
        row(&out, name);
    }
    // f16: epsilon 0.00097656, range 5.96e-8 to 65504.
    let f16 = cells(row(&out, "f16"));
    assert_eq!(f16[1..6], ["16", "1", "5", "10", "15"]);
    assert_eq!(f16[6], "0.0009765625");
    assert_eq!(f16[7], "5.9604644775390625e-8");
    assert_eq!(f16[8], "6.103515625e-5");
    assert_eq!(f16[9], "65504");
    assert_eq!(f16[10], "3");
    // bf16: epsilon 0.0078125, range 9.2e-41 to 3.39e38.
    let bf16 = cells(row(&out, "bf16"));
    assert_eq!(bf16[1..6], ["16", "1", "8", "7", "127"]);
    assert_eq!(bf16[6], "0.0078125");
    assert_eq!(bf16[7], "≈9.18355e-41");
    assert_eq!(bf16[9], "≈3.38953e38");
    // The rows follow the library's constants.
    assert_eq!(cells(row(&out, "f8e4m3fn"))[9], "448");
    assert_eq!(cells(row(&out, "f8e5m2"))[9], "57344");
    assert_eq!(cells(row(&out, "f8e3m4"))[9], "15.5");
    assert_eq!(cells(row(&out, "f4e2m1fn"))[9], "6");
}

#[test]
fn formats_table_shows_special_value_policies() {
    let out = stdout(&["formats"]);
    let f16 = row(&out, "f16");
    assert!(f16.contains("yes") && f16.contains("ieee (2046)") && f16.ends_with("signed    inf"));
    let e4m3 = row(&out, "f8e4m3fn");
    assert!(
        e4m3.contains("0x7f 0xff") && e4m3.ends_with("nan"),
        "{e4m3}"
    );
    let fnuz = row(&out, "f8e4m3fnuz");
    assert!(
        fnuz.contains(" 0x80 ") && fnuz.contains("unsigned"),
        "{fnuz}"
    );
    let e8m0 = row(&out, "f8e8m0fnu");
    assert!(e8m0.contains(" none "), "{e8m0}");
    let fp4 = row(&out, "f4e2m1fn");
    assert!(fp4.ends_with("saturate"), "{fp4}");
}

#[test]
fn formats_columns_are_aligned() {
    let out = stdout(&["formats"]);
    let lines: Vec<&str> = out.lines().collect();
    // Every column of the rule line starts where its heading does, in every row.
    let starts: Vec<usize> = lines[1]
        .char_indices()
        .filter(|&(i, c)| c == '-' && (i == 0 || lines[1].as_bytes()[i - 1] == b' '))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(starts.len(), 15);
    for line in &lines {
        let chars: Vec<char> = line.chars().collect();
        for &s in &starts[1..] {
            assert_eq!(chars.get(s - 1), Some(&' '), "misaligned: {line}");
        }
    }
}

#[test]
fn formats_json_has_twelve_records_with_the_library_maxima() {
    let v = json(&["formats", "--format", "json"]);
    let records = v.as_array().expect("an array");
    assert_eq!(records.len(), 12);
    let names: Vec<&str> = records
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ALL_FORMATS);
    let expected_max = [
        lowp::f16::MAX.to_f64(),
        lowp::bf16::MAX.to_f64(),
        lowp::f8e4m3fn::MAX.to_f64(),
        lowp::f8e5m2::MAX.to_f64(),
        lowp::f8e4m3fnuz::MAX.to_f64(),
        lowp::f8e5m2fnuz::MAX.to_f64(),
        lowp::f8e4m3::MAX.to_f64(),
        lowp::f8e3m4::MAX.to_f64(),
        lowp::f8e8m0fnu::MAX.to_f64(),
        lowp::f6e2m3fn::MAX.to_f64(),
        lowp::f6e3m2fn::MAX.to_f64(),
        lowp::f4e2m1fn::MAX.to_f64(),
    ];
    for (r, max) in records.iter().zip(expected_max) {
        assert_eq!(r["max"].as_f64(), Some(max), "{}", r["name"]);
    }
    assert_eq!(records[0]["max"], 65504.0);
    assert_eq!(records[2]["max"], 448.0);
    let f16 = &records[0];
    assert_eq!(f16["epsilon"], 0.0009765625);
    assert_eq!(f16["min_positive_subnormal"].as_f64(), Some(2f64.powi(-24)));
    assert_eq!(f16["min_positive_normal"].as_f64(), Some(2f64.powi(-14)));
    assert_eq!(f16["has_infinity"], true);
    assert_eq!(f16["nan_encoding"], "ieee");
    assert_eq!(f16["zero"], "signed");
    assert_eq!(records[1]["max"].as_f64(), Some(3.3895313892515355e38));
    assert_eq!(records[4]["zero"], "unsigned");
    assert!(records[8]["min_positive_subnormal"].is_null());
    // Every record has the same keys.
    let keys = |r: &Value| r.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert!(records.iter().all(|r| keys(r) == keys(&records[0])));
}

#[test]
fn formats_markdown_and_csv() {
    let md = stdout(&["formats", "--format", "markdown"]);
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines.len(), 14);
    assert!(lines[0].starts_with("| format "));
    assert!(lines[1].starts_with("| ---"));
    assert!(lines[2].starts_with("| f16 ") && lines[2].contains("| 65504 "));
    assert!(lines.iter().all(|l| l.starts_with('|') && l.ends_with('|')));

    let csv = stdout(&["formats", "--format", "csv"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 13);
    assert!(lines[0].starts_with("name,total_bits,sign_bits,exponent_bits,mantissa_bits,bias,"));
    let header: Vec<&str> = lines[0].split(',').collect();
    let f16: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(header.len(), f16.len());
    let field = |name| f16[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(field("max"), "65504");
    assert_eq!(field("epsilon"), "0.0009765625");
    assert_eq!(
        field("min_positive_subnormal").parse::<f64>(),
        Ok(2f64.powi(-24))
    );
    let bf16: Vec<&str> = lines[2].split(',').collect();
    let max = bf16[header.iter().position(|h| *h == "max").unwrap()];
    assert_eq!(max.parse::<f64>(), Ok(lowp::bf16::MAX.to_f64()));
}

#[test]
fn inspect_point_one_in_f16() {
    let out = stdout(&["inspect", "0.1", "--to", "f16"]);
    assert!(out.starts_with(
        "input: 0.1 (as f64: 0.1000000000000000055511151231257827021181583404541015625)\n"
    ));
    let f16 = cells(row(&out, "f16"));
    assert_eq!(
        f16,
        [
            "f16",
            "0.0999755859375",
            "0.1",
            "0x2e66",
            "0|01011|1001100110",
            "0.09991455078125",
            "0.10003662109375",
            "≈2.44141e-5",
            "≈0.000244141",
            "rounded"
        ]
    );
}

#[test]
fn inspect_point_one_json() {
    let v = json(&["inspect", "0.1", "--to", "f16,bf16", "--format", "json"]);
    assert_eq!(v["input"]["value"], 0.1);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    let f16 = &results[0];
    assert_eq!(f16["format"], "f16");
    assert_eq!(f16["bits"], "0x2e66");
    assert_eq!(f16["sign"], "0");
    assert_eq!(f16["exponent"], "01011");
    assert_eq!(f16["mantissa"], "1001100110");
    assert_eq!(f16["next_down_bits"], "0x2e65");
    assert_eq!(f16["next_up_bits"], "0x2e67");
    assert_eq!(
        f16["value"].as_f64(),
        Some(lowp::f16::from_bits(0x2e66).to_f64())
    );
    let abs = f16["abs_error"].as_f64().unwrap();
    assert!((abs - (0.1 - 0.0999755859375)).abs() < 1e-18);
    assert_eq!(f16["status"], "rounded");
    assert_eq!(results[1]["bits"], "0x3dcd");
}

#[test]
fn inspect_flags_double_rounding_through_f64() {
    let out = stdout(&["inspect", "1.00048828125000001", "--to", "f16"]);
    let f16 = row(&out, "f16");
    // The decimal rounds once, up; its nearest f64 is the midpoint itself, which ties down.
    assert!(f16.contains("0x3c01"), "{f16}");
    assert!(
        f16.ends_with("through the nearest f64 it would double-round to 1"),
        "{f16}"
    );
}

#[test]
fn inspect_defaults_to_every_format() {
    let out = stdout(&["inspect", "1"]);
    for name in ALL_FORMATS {
        assert!(row(&out, name).ends_with("exact"), "{name}");
    }
    let v = json(&["inspect", "1", "--format", "json"]);
    assert_eq!(v["results"].as_array().unwrap().len(), 12);
}

#[test]
fn inspect_overflow_to_infinity() {
    let out = stdout(&["inspect", "70000", "--to", "f16"]);
    let f16 = row(&out, "f16");
    assert!(f16.contains(" inf ") && f16.contains("0x7c00"), "{f16}");
    assert!(f16.ends_with("overflow to inf"), "{f16}");
    // The largest finite value is its lower neighbour.
    assert!(f16.contains(" 65504 "), "{f16}");
}

#[test]
fn inspect_overflow_to_nan() {
    let out = stdout(&["inspect", "500", "--to", "f8e4m3fn"]);
    let line = row(&out, "f8e4m3fn");
    assert!(line.contains("NaN") && line.contains("0x7f"), "{line}");
    assert!(line.ends_with("overflow to NaN"), "{line}");
    // 464 is the tie between 448 and the first overflowing value: it rounds to even, 448.
    let tie = stdout(&["inspect", "464", "--to", "f8e4m3fn"]);
    assert_eq!(cells(row(&tie, "f8e4m3fn"))[1], "448");
}

#[test]
fn inspect_saturation_underflow_and_subnormals() {
    let out = stdout(&["inspect", "-100", "--to", "f4e2m1fn"]);
    assert!(row(&out, "f4e2m1fn").ends_with("overflow, saturated to -MAX"));
    let out = stdout(&["inspect", "1e-10", "--to", "f16"]);
    assert!(row(&out, "f16").ends_with("underflow to 0"));
    let out = stdout(&["inspect", "1e-5", "--to", "f16"]);
    assert!(row(&out, "f16").ends_with("subnormal, rounded"));
    let v = json(&["inspect", "1e-5", "--to", "f16", "--format", "json"]);
    assert_eq!(v["results"][0]["subnormal"], true);
    let v = json(&["inspect", "70000", "--to", "f16", "--format", "json"]);
    assert_eq!(v["results"][0]["overflow"], "inf");
    assert!(v["results"][0]["value"].is_null());
    assert_eq!(v["results"][0]["value_exact"], "inf");
}

#[test]
fn inspect_bits() {
    let out = stdout(&["inspect", "0x3c00", "--as", "f16"]);
    assert!(out.starts_with("input: 0x3c00 as f16 = 1\n"), "{out}");
    assert_eq!(out.lines().count(), 2 + 2 + 1, "only the f16 row:\n{out}");
    let f16 = cells(row(&out, "f16"));
    assert_eq!(f16[1..5], ["1", "1", "0x3c00", "0|01111|0000000000"]);

    let out = stdout(&["inspect", "0x3c00", "--as", "f16", "--to", "bf16,f8e4m3fn"]);
    assert_eq!(cells(row(&out, "bf16"))[3], "0x3f80");
    assert_eq!(cells(row(&out, "f8e4m3fn"))[3], "0x38");

    let out = stdout(&["inspect", "0b1111110", "--as", "f8e4m3fn", "--to", "f16"]);
    assert_eq!(cells(row(&out, "f8e4m3fn"))[1], "448");
    assert_eq!(cells(row(&out, "f16"))[3], "0x5f00");
}

#[test]
fn inspect_special_inputs() {
    let out = stdout(&["inspect", "nan", "--to", "f16,f6e2m3fn"]);
    assert!(row(&out, "f16").ends_with("NaN"));
    // As ml_dtypes converts it: a NaN becomes the zero of the other sign.
    assert!(row(&out, "f6e2m3fn").contains("NaN (no NaN in format) to -0"));
    let out = stdout(&["inspect", "-inf", "--to", "f16,f8e4m3fn"]);
    assert!(row(&out, "f16").contains("-inf"));
    assert!(row(&out, "f8e4m3fn").ends_with("to NaN"));
    let out = stdout(&["inspect", "-0", "--to", "f16,f8e4m3fnuz,f8e8m0fnu"]);
    assert_eq!(cells(row(&out, "f16"))[1], "-0");
    assert_eq!(cells(row(&out, "f8e4m3fnuz"))[1], "0");
    assert!(row(&out, "f8e8m0fnu").ends_with("not representable: NaN"));
    let out = stdout(&["inspect", "-1.5", "--to", "f16"]);
    assert_eq!(cells(row(&out, "f16"))[3], "0xbe00");
}

#[test]
fn error_bad_value() {
    let err = usage_error(&["inspect", "abc"]);
    assert!(err.contains("'abc'") && err.contains("decimal"), "{err}");
    let err = usage_error(&["inspect", "0x3c00"]);
    assert!(err.contains("--as"), "{err}");
    let err = usage_error(&["inspect", "0xzz", "--as", "f16"]);
    assert!(err.contains("hexadecimal"), "{err}");
}

#[test]
fn error_unknown_format_names_the_valid_ones() {
    for args in [
        &["inspect", "1", "--to", "f7"][..],
        &["inspect", "1", "--to", "f16,f7"],
        &["inspect", "0x3c00", "--as", "f7"],
    ] {
        let err = usage_error(args);
        assert!(err.contains("'f7'"), "{err}");
        for name in ALL_FORMATS {
            assert!(err.contains(name), "{err} lacks {name}");
        }
    }
}

#[test]
fn error_too_many_bits() {
    let err = usage_error(&["inspect", "0x1ffff", "--as", "f16"]);
    assert!(
        err.contains("0x1ffff") && err.contains("16 bits") && err.contains("0xffff"),
        "{err}"
    );
    let err = usage_error(&["inspect", "0x40", "--as", "f6e2m3fn"]);
    assert!(err.contains("6 bits"), "{err}");
    usage_error(&[
        "inspect",
        "0x123456789abcdef0123456789abcdef01",
        "--as",
        "f16",
    ]);
}

#[test]
fn error_bad_output_style() {
    let err = usage_error(&["formats", "--format", "xml"]);
    assert!(err.contains("'xml'"), "{err}");
    for style in ["table", "markdown", "csv", "json"] {
        assert!(err.contains(style), "{err} lacks {style}");
    }
    let err = usage_error(&["inspect", "1", "--format", "csv"]);
    assert!(err.contains("table") && err.contains("json"), "{err}");
}

#[test]
fn other_usage_errors_exit_2() {
    for args in [
        &["inspect"][..],
        &["inspect", "1", "--bogus"],
        &["frobnicate"],
        &[],
    ] {
        assert_eq!(lowp(args).status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn help_documents_every_long_flag() {
    let help = stdout(&["inspect", "--help"]);
    for flag in ["--to <FORMAT>", "--as <FORMAT>", "--format <STYLE>"] {
        let at = help
            .find(flag)
            .unwrap_or_else(|| panic!("{flag} missing:\n{help}"));
        let text = help[at + flag.len()..].trim_start();
        assert!(
            text.chars().next().is_some_and(char::is_uppercase),
            "{flag}: {help}"
        );
    }
    let help = stdout(&["formats", "--help"]);
    assert!(help.contains("--format <STYLE>") && help.contains("markdown"));
    let help = stdout(&["--help"]);
    assert!(help.contains("formats") && help.contains("inspect"));
}

#[test]
fn no_panics_on_odd_values() {
    let odd = [
        "",
        " ",
        "-",
        "+",
        ".",
        "e5",
        "1e",
        "0x",
        "0b",
        "-0x1",
        "1_000",
        "١",
        "💥",
        "1e99999",
        "-1e-99999",
        "NaN",
        "INFINITY",
        "0.1.2",
        "--",
        "0x-1",
    ];
    for value in odd {
        for extra in [
            &[][..],
            &["--as", "f16"],
            &["--as", "f4e2m1fn", "--to", "f8e8m0fnu"],
        ] {
            let mut args = vec!["inspect", "--format", "json", "--", value];
            args.splice(1..1, extra.iter().copied());
            let out = lowp(&args);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("panicked"), "{args:?}: {err}");
            assert!(matches!(out.status.code(), Some(0 | 2)), "{args:?}: {err}");
        }
    }
}

#[test]
fn bit_patterns_of_every_kind() {
    // NaN, infinity, zero, subnormal, normal and the largest pattern of a few formats.
    let cases = [
        ("f16", "0x7e00", "nan"),
        ("f16", "0xfc00", "exact"),
        ("f16", "0x8000", "exact"),
        ("f16", "0x0001", "subnormal"),
        ("bf16", "0xffff", "nan"),
        ("f8e4m3fnuz", "0x80", "nan"),
        ("f8e8m0fnu", "0x00", "exact"),
        ("f8e8m0fnu", "0xff", "nan"),
        ("f6e3m2fn", "0x3f", "exact"),
        ("f4e2m1fn", "0xf", "exact"),
    ];
    for (format, bits, status) in cases {
        let args = [
            "inspect",
            bits,
            "--as",
            format,
            "--to",
            "f16,f8e8m0fnu,f4e2m1fn",
            "--format",
            "json",
        ];
        let v = json(&args);
        let first = &v["results"][0];
        assert_eq!(first["format"], format);
        assert_eq!(first["bits"], bits);
        assert_eq!(first["status"], status, "{args:?}");
    }
}

/// Runs `lowp` with `LOWP_FORCE_PATH` set to `forced`, or unset.
fn lowp_forced(forced: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lowp"));
    match forced {
        Some(path) => cmd.env("LOWP_FORCE_PATH", path),
        None => cmd.env_remove("LOWP_FORCE_PATH"),
    };
    cmd.args(args).output().expect("the lowp binary runs")
}

/// A quick `lowp bench convert` with `extra` arguments: expects success, returns stdout.
fn quick_bench(forced: Option<&str>, extra: &[&str]) -> String {
    let mut args = vec!["bench", "convert", "--quick"];
    args.extend_from_slice(extra);
    let out = lowp_forced(forced, &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "lowp {args:?} failed: {err}");
    assert!(err.is_empty(), "lowp {args:?} wrote to stderr: {err}");
    String::from_utf8(out.stdout).expect("stdout is UTF-8")
}

#[test]
fn bench_convert_prints_a_table_and_writes_json() {
    let dir = std::env::temp_dir().join(format!("lowp-bench-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bench.json");
    let out = quick_bench(
        None,
        &[
            "--formats",
            "f16,f8e4m3fn",
            "--directions",
            "from-f32",
            "--json",
            file.to_str().unwrap(),
        ],
    );
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with("conversion path: ") && first.contains("supported paths: portable"),
        "{out}"
    );
    let header = cells(out.lines().nth(1).unwrap());
    assert_eq!(header[..4], ["format", "direction", "size", "threads"]);
    assert!(out.contains("GB/s") && out.contains("vs memcpy") && out.contains("vs half"));
    for name in ["f16", "f8e4m3fn"] {
        let rows: Vec<&str> = out.lines().filter(|l| l.starts_with(name)).collect();
        assert_eq!(rows.len(), 2, "{out}");
        assert_eq!(cells(rows[0])[1..4], ["from-f32", "4KiB", "single"]);
        assert_eq!(cells(rows[1])[3], "multi");
    }

    let text = std::fs::read_to_string(&file).unwrap();
    let records: Vec<Value> = serde_json::from_str(&text).expect("valid JSON");
    let names: Vec<&str> = records
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    for r in &records {
        assert!(r["gbps"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["seconds"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["bytes"].as_u64().unwrap() > 0, "{r}");
        let baseline = r["baseline"].as_str();
        assert_eq!(baseline.is_some(), r["library"] == "lowp", "{r}");
        assert_eq!(r["ratio"].is_number(), r["library"] == "lowp", "{r}");
        if let Some(b) = baseline {
            assert!(names.contains(&b) && b.starts_with("memcpy "), "{r}");
            let half = r["half_baseline"].as_str().unwrap();
            assert!(names.contains(&half) && half.starts_with("half "), "{r}");
            assert!(r["half_gbps"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r["ratio_half"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    let lowp: Vec<&Value> = records.iter().filter(|r| r["library"] == "lowp").collect();
    assert_eq!(lowp.len(), 4);
    let f16 = lowp[0];
    assert_eq!(f16["name"], "f16 from-f32 4KiB single");
    assert_eq!(f16["format"], "f16");
    assert_eq!(f16["direction"], "from-f32");
    assert_eq!(f16["threads"], "single");
    // 1024 f32s read, 1024 f16s written; memcpy copies half of that each way.
    assert_eq!(f16["bytes"], 1024 * 6);
    assert_eq!(f16["baseline"], "memcpy 3KiB single");
    assert_eq!(f16["half_baseline"], "half f16 from-f32 4KiB single");
    assert_eq!(lowp[2]["bytes"], 1024 * 5);
    assert_eq!(lowp[2]["half_baseline"], "half bf16 from-f32 4KiB single");
    // Nothing but the JSON file is left in the directory.
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(left.len(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bench_convert_follows_lowp_force_path_and_path() {
    let out = quick_bench(
        Some("portable"),
        &["--formats", "bf16", "--directions", "to-f64"],
    );
    assert!(out.starts_with("conversion path: portable;"), "{out}");
    let out = quick_bench(
        None,
        &[
            "--path",
            "portable",
            "--formats",
            "f4e2m1fn",
            "--threads",
            "single",
        ],
    );
    assert!(
        out.lines()
            .nth(3)
            .unwrap()
            .starts_with("f4e2m1fn  from-f32"),
        "{out}"
    );
    assert_eq!(out.matches("f4e2m1fn ").count(), 4, "{out}");
}

#[test]
fn bench_convert_usage_errors() {
    let out = lowp_forced(Some("nonsense"), &["bench", "convert", "--quick"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: LOWP_FORCE_PATH") && err.contains("portable, f16c, avx512"),
        "{err}"
    );

    let err = usage_error(&["bench", "convert", "--formats", "f16,f7"]);
    assert!(err.contains("'f7'") && err.contains("f8e5m2fnuz"), "{err}");
    let err = usage_error(&["bench", "convert", "--sizes", "16K,16Q"]);
    assert!(err.contains("'16Q'") && err.contains("256M"), "{err}");
    let err = usage_error(&["bench", "convert", "--directions", "sideways"]);
    assert!(err.contains("from-f32") && err.contains("to-f64"), "{err}");
    let err = usage_error(&["bench", "convert", "--path", "fast"]);
    assert!(err.contains("'fast'") && err.contains("portable"), "{err}");
    if let Some(p) = lowp::bulk::Path::ALL.iter().find(|p| !p.is_supported()) {
        let err = usage_error(&["bench", "convert", "--path", p.name()]);
        assert!(
            err.contains("cannot run") && err.contains("portable"),
            "{err}"
        );
    }
    let err = work_error(&["bench", "convert", "--json", "/nonexistent/lowp/b.json"]);
    assert!(
        err.contains("no folder /nonexistent/lowp: No such file or directory"),
        "{err}"
    );
}
