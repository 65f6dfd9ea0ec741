//! `lowp error-table`, `conversion-error`, `accumulate`, `plot` and `report` on small inputs,
//! checked against figures computed here independently (with the `half` crate, or by hand).

mod common;

use common::{json, stdout, usage_error};

use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// A fresh, empty directory under the target directory for one test's output.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Whether the file starts with the PNG signature and is more than a header.
fn is_png(path: &Path) -> bool {
    let bytes = std::fs::read(path).unwrap_or_default();
    bytes.len() > 1000 && bytes.starts_with(b"\x89PNG\r\n\x1a\n")
}

#[test]
fn f16_exp_overflows_above_ln_65504() {
    let v = json(&[
        "error-table",
        "--formats",
        "f16",
        "--functions",
        "exp",
        "--format",
        "json",
    ]);
    let rec = &v.as_array().unwrap()[0];
    assert_eq!(rec["format"], "f16");
    assert_eq!(rec["function"], "exp");
    // Counted with the half crate: finite f16 inputs, and those whose exp (in f64) is past
    // 65504 + 16, where rounding to f16 gives infinity.
    let finite: Vec<f64> = (0..=u16::MAX)
        .map(|b| half::f16::from_bits(b).to_f64())
        .filter(|x| x.is_finite())
        .collect();
    let overflows = finite.iter().filter(|x| x.exp() >= 65520.0).count();
    assert_eq!(rec["inputs"], finite.len());
    assert_eq!(rec["overflows"], overflows);
    // ... which are exactly the inputs above ln(65504): no f16 lies between it and ln(65520).
    let above = finite.iter().filter(|&&x| x > 65504f64.ln()).count();
    assert_eq!(overflows, above);
    assert_eq!(rec["nans"], 0);
    // Computed in f32 and rounded once: within half an ulp (and a hair for the f32 step).
    let ulp = rec["max_ulp"].as_f64().unwrap();
    assert!(ulp > 0.49 && ulp < 0.5001, "{ulp}");
}

#[test]
fn fp4_square_and_exact_functions() {
    let v = json(&[
        "error-table",
        "--formats",
        "f4e2m1fn",
        "--functions",
        "square,floor",
        "--format",
        "json",
    ]);
    let recs = v.as_array().unwrap();
    let square = recs.iter().find(|r| r["function"] == "square").unwrap();
    // ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}: 9, 16 and 36 pass 7 (the tie above MAX = 6).
    assert_eq!(square["inputs"], 16);
    assert_eq!(square["overflows"], 6);
    // 1.5^2 = 2.25 rounds to 2, 2^2 = 4, 0.5^2 = 0.25 rounds to 0 (tie to even): the worst
    // relative error among the results that fit is 0.25 -> 0, i.e. 1.
    assert_eq!(square["max_rel"], 1.0);
    let floor = recs.iter().find(|r| r["function"] == "floor").unwrap();
    assert_eq!(floor["max_abs"], 0.0);
    assert_eq!(floor["max_rel"], 0.0);
}

#[test]
fn error_table_text_is_grouped_like_the_seed() {
    let text = stdout(&[
        "error-table",
        "--formats",
        "f8e4m3fn",
        "--functions",
        "exp,sin,sqrt",
    ]);
    let sin = text.lines().position(|l| l.contains(" sin ")).unwrap();
    let sqrt = text.lines().position(|l| l.contains(" sqrt ")).unwrap();
    let exp = text.lines().position(|l| l.contains(" exp ")).unwrap();
    assert!(sin < sqrt && sqrt < exp, "the seed's row order: {text}");
    let csv = stdout(&[
        "error-table",
        "--formats",
        "f8e4m3fn",
        "--functions",
        "exp",
        "--format",
        "csv",
    ]);
    assert!(csv.lines().next().unwrap().contains("max_ulp"), "{csv}");
    assert_eq!(csv.lines().count(), 2, "{csv}");
}

#[test]
fn f16_rounding_reaches_2_pow_minus_11_exactly() {
    let v = json(&["conversion-error", "--formats", "f16", "--format", "json"]);
    let recs = v.as_array().unwrap();
    let normal = recs.iter().find(|r| r["range"] == "normal").unwrap();
    let sub = recs
        .iter()
        .find(|r| r["range"] == "with subnormals")
        .unwrap();
    let u = 2f64.powi(-11);
    // The tie 1 + 2^-11 rounds to 1: 2^-11 of the result, 2^-11 / (1 + 2^-11) of the input.
    assert_eq!(normal["max_rel_of_result"], u);
    assert_eq!(normal["max_rel"], u / (1.0 + u));
    assert_eq!(normal["bound_rel"], u);
    // Half the spacing (32) of the top binade, as the seed found.
    assert_eq!(normal["max_abs"], 16.0);
    // Every f32 from 2^-14 to 65504, both signs.
    let count = 2 * ((65504f32.to_bits() - 2f32.powi(-14).to_bits()) as u64 + 1);
    assert_eq!(normal["values"], count);
    // With subnormals the tie 1.5 * 2^-24 rounds up to 2^-23: a third of the input.
    assert_eq!(sub["max_rel"], 1.0 / 3.0);
    assert_eq!(sub["max_rel_at"], 1.5 * 2f64.powi(-24));
    let from_sub = 2 * ((65504f32.to_bits() - 2f32.powi(-24).to_bits()) as u64 + 1);
    assert_eq!(sub["values"], from_sub);
}

#[test]
fn accumulate_in_f16_stalls_at_2048() {
    let dir = scratch("accumulate");
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("sums.png");
    let v = json(&[
        "accumulate",
        "--n",
        "6000",
        "--json",
        "--plot",
        png.to_str().unwrap(),
    ]);
    assert_eq!(v["format"], "f16");
    assert_eq!(v["n"], 6000);
    // Addends in [0, 1): at 2048 the spacing is 2, every addend is below half of it, and the
    // sum cannot move (the seeds' ceiling, sum / addend = 2^11).
    let methods = v["methods"].as_array().unwrap();
    assert_eq!(methods[0]["result"], 2048.0, "{v}");
    assert_eq!(v["stalled"]["sum"], 2048.0);
    let exact = v["exact"].as_f64().unwrap();
    assert!((exact - 3000.0).abs() < 100.0, "{exact}");
    // The f32 accumulator ends within one f16 ulp (2) of the exact sum.
    let f32_row = methods
        .iter()
        .find(|m| m["method"].as_str().unwrap().starts_with("f32"))
        .unwrap();
    assert!((f32_row["result"].as_f64().unwrap() - exact).abs() <= 2.0);
    assert!(is_png(&png));
}

#[test]
fn accumulate_counts_in_any_spelling_and_dtype_is_format_renamed() {
    // One sum, asked for in every accepted spelling: the same JSON each time.
    let expected = json(&["accumulate", "--dtype", "bf16", "--n", "2000", "--json"]);
    for (flag, n) in [
        ("--dtype", "2e3"),
        ("--dtype", "2_000"),
        ("--dtype", "2,000"),
        ("--format", "2000"),
    ] {
        let got = json(&["accumulate", flag, "bf16", "--n", n, "--json"]);
        assert_eq!(got, expected, "{flag} bf16 --n {n}");
    }
    assert_ne!(
        json(&["accumulate", "--dtype", "bf16", "--n", "20", "--json"]),
        expected,
        "--n changes the sum"
    );
    let help = stdout(&["accumulate", "--help"]);
    assert!(
        help.contains("--dtype") && !help.contains("--format"),
        "{help}"
    );
}

#[test]
fn plot_writes_three_pngs() {
    let dir = scratch("plot");
    let out = stdout(&["plot", "--out", dir.to_str().unwrap()]);
    for name in ["layout.png", "values.png", "rounding-error.png"] {
        assert!(is_png(&dir.join(name)), "{name}: {out}");
        assert!(out.contains(name), "{out}");
    }
}

#[test]
fn report_on_two_small_formats() {
    let dir = scratch("report");
    stdout(&[
        "report",
        "--out",
        dir.to_str().unwrap(),
        "--formats",
        "f4e2m1fn,f6e3m2fn",
    ]);
    let page = std::fs::read_to_string(dir.join("report.md")).unwrap();
    for heading in [
        "## At a glance",
        "## Rounding f32 into a format",
        "## Math functions",
        "## Summing",
    ] {
        assert!(page.contains(heading), "{heading}");
    }
    // Every picture the page embeds is beside it.
    let mut pictures = 0;
    for line in page.lines().filter(|l| l.starts_with("![")) {
        let name = &line[line.find("](").unwrap() + 2..line.len() - 1];
        assert!(is_png(&dir.join(name)), "{name}");
        pictures += 1;
    }
    assert!(pictures >= 3, "{page}");
    // The pictures show the chosen formats only: two rounding-error panels side by side, and
    // three rows of bit layout (f32 for reference, f4e2m1fn, f6e3m2fn).
    let size = |name: &str| {
        let file = std::fs::File::open(dir.join(name)).unwrap();
        let reader = png::Decoder::new(std::io::BufReader::new(file))
            .read_info()
            .unwrap();
        (reader.info().width, reader.info().height)
    };
    assert_eq!(size("rounding-error.png"), (960, 64 + 290));
    assert_eq!(size("layout.png"), (1200, 70 + 40 * 3 + 20));
    let table: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("error-table.json")).unwrap())
            .unwrap();
    let n_functions = table
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["format"] == "f4e2m1fn")
        .count();
    assert!(n_functions > 30, "{n_functions}");
    assert!(dir.join("conversion-error.csv").exists());
}

#[test]
fn bad_arguments_exit_2_with_one_line() {
    let e = usage_error(&["error-table", "--formats", "f17"]);
    assert!(e.contains("f17"), "{e}");
    let e = usage_error(&["error-table", "--functions", "sine"]);
    assert!(e.contains("sine"), "{e}");
    usage_error(&["error-table", "--format", "xml"]);
    usage_error(&["conversion-error", "--formats", "fp8"]);
    usage_error(&["accumulate", "--n", "0"]);
    usage_error(&["accumulate", "--n", "ten"]);
    usage_error(&["accumulate", "--distribution", "cauchy"]);
    usage_error(&["accumulate", "--format", "f8e8m0fnu"]);
    usage_error(&["accumulate", "--dtype", "f8e8m0fnu"]);
    for bad in ["1.5", "1e9", "0", "1e", "inf"] {
        let e = usage_error(&["accumulate", "--n", bad]);
        assert!(e.contains("--n"), "{bad}: {e}");
    }
    // A missing required flag gets clap's usage text, with the same exit code.
    for args in [&["plot"][..], &["report"], &["error-table", "--bogus"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_lowp"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    let file = scratch("not-a-dir");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, b"x").unwrap();
    let e = usage_error(&["report", "--out", file.to_str().unwrap()]);
    assert!(e.contains("not a directory"), "{e}");
}
