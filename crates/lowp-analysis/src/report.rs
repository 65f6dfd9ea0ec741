//! `lowp report`: every analysis on one Markdown page, with the pictures beside it: the
//! project's answer to "which format should I use, and what does it cost me?".
//!
//! Everything is computed first and written last (the page, the PNGs and the full tables as
//! CSV and JSON, each to a temporary name renamed into place), so an interrupted run leaves
//! nothing behind.

use crate::accumulate::{self, Distribution, Outcome, Setup};
use crate::conversion::{self, Measured};
use crate::error::Error;
use crate::error_table::{self, Errors, Row};
use crate::number::{approximate, readable};
#[cfg(feature = "plot")]
use crate::output;
#[cfg(feature = "plot")]
use crate::plot::{self, Picture};
use crate::progress::Control;
use lowp::Format;
use std::fmt::Write as _;
#[cfg(feature = "plot")]
use std::path::Path;
use std::path::PathBuf;
use std::time::Instant;

/// Values each format sums in the report's accumulation runs.
pub const ACCUMULATE_N: usize = 100_000;

/// The hand-measured FP16 table of math-function errors (FP16 against FP32, on sample inputs)
/// from the guide this project grew from, row by row: the functions of each row (the row's
/// label is their names joined by `/`) and its ranges of max abs, max rel, mean abs and mean
/// rel error, as printed there. `docs/precision-analysis.md` sets it beside lowp's figures.
pub const HAND_MEASURED_FUNCTION_ERRORS: [(&[&str], [&str; 4]); 6] = [
    (
        &[
            "sin", "cos", "atan", "acosh", "asinh", "tanh", "acos", "asin", "atanh",
        ],
        [
            "0.000244~0.003905",
            "0.000486~0.000517",
            "5.85E-05~0.001138",
            "0.000115~0.000179",
        ],
    ),
    (
        &["log2", "log10", "log1p"],
        [
            "0.001953~0.0033905",
            "0.000482~0.000487",
            "0.0004~0.001258",
            "0.000171~0.000175",
        ],
    ),
    (&["floor", "round", "relu", "ceil"], ["0", "0", "0", "0"]),
    (
        &["sqrt", "rsqrt"],
        [
            "0.031227~0.062485",
            "0.000488",
            "0.002071~0.004158",
            "0.000172~0.000179",
        ],
    ),
    (
        &[
            "exp",
            "expm1",
            "tan",
            "cosh",
            "sinh",
            "reciprocal",
            "square",
            "tanh_shrink",
        ],
        [
            "1~16",
            "0.000486~1",
            "0.000786~0.378427",
            "9.18E-05~0.082869",
        ],
    ),
    (
        &["logsigmoid", "sigmoid", "silu", "softsign"],
        [
            "0.000701~0.002665",
            "0.000486~0.000945",
            "6.55E-05~9.96E-05",
            "0.000104~0.000203",
        ],
    ),
];

/// The hand-measured statistics of rounding FP32 to FP16 (on sample inputs) from the guide this
/// project grew from: normals only, then with subnormals; max abs, max rel, mean abs, mean rel.
pub const HAND_MEASURED_F16_ROUNDING: [(&str, [&str; 4]); 2] = [
    (
        "normal (2^-14 ~ 65504)",
        ["16", "0.00048", "0.51876", "0.000175"],
    ),
    (
        "with subnormals (2^-24 ~ 65504)",
        ["16", "0.33289", "0.38871", "0.008834"],
    ),
];

/// The statistics of the hand-measured table's columns, from one [`Errors`].
fn hand_measured_columns(e: &Errors) -> [f64; 4] {
    [e.max_abs, e.max_rel, e.mean_abs(), e.mean_rel()]
}

/// `lo~hi` of the statistics of `rows` (the functions `ops` of `format`), as the hand-measured
/// table writes a row's range: one number when they agree.
fn range(rows: &[Row], format: &str, ops: &[&str], against_f32: bool, stat: usize) -> String {
    let values: Vec<f64> = rows
        .iter()
        .filter(|r| r.format == format && ops.contains(&r.function))
        .map(|r| hand_measured_columns(if against_f32 { &r.f32 } else { &r.exact })[stat])
        .collect();
    if values.is_empty() {
        return "-".to_string();
    }
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(0.0, f64::max);
    let short = |x: f64| {
        if x == 0.0 {
            "0".to_string()
        } else {
            crate::number::Decimal::exact(x)
                .map(|d| d.rounded(4).auto())
                .unwrap_or_else(|| x.to_string())
        }
    };
    if short(lo) == short(hi) {
        short(lo)
    } else {
        format!("{}~{}", short(lo), short(hi))
    }
}

/// The hand-measured FP16 table of function errors ([`HAND_MEASURED_FUNCTION_ERRORS`]) beside lowp's f16 figures, row
/// by row, as Markdown.
pub fn function_errors_beside_hand_measured(rows: &[Row]) -> String {
    let stats = ["max abs", "max rel", "mean abs", "mean rel"];
    let mut out = String::from(
        "| functions | statistic | hand-measured FP16 vs FP32 | lowp f16 vs f32 | lowp f16 vs exact |\n\
         | --- | --- | ---: | ---: | ---: |\n",
    );
    for (ops, hand) in HAND_MEASURED_FUNCTION_ERRORS {
        let label = ops.join("/");
        for (k, stat) in stats.iter().enumerate() {
            let _ = writeln!(
                out,
                "| {} | {stat} | {} | {} | {} |",
                if k == 0 { label.as_str() } else { "" },
                hand[k],
                range(rows, "f16", ops, true, k),
                range(rows, "f16", ops, false, k)
            );
        }
    }
    out
}

/// The hand-measured statistics of rounding FP32 to FP16 ([`HAND_MEASURED_F16_ROUNDING`]) beside lowp's, as
/// Markdown.
pub fn rounding_errors_beside_hand_measured(m: &Measured) -> String {
    let mut out = String::from(
        "| range | statistic | hand-measured (sample) | lowp (every f32 in the range) |\n| --- | --- | ---: | ---: |\n",
    );
    for (i, (label, hand)) in HAND_MEASURED_F16_ROUNDING.iter().enumerate() {
        let s = if i == 0 {
            &m.normal
        } else {
            &m.with_subnormals
        };
        let ours = [s.max_abs, s.max_rel, s.mean_abs(), s.mean_rel()];
        for (k, stat) in ["max abs", "max rel", "mean abs", "mean rel"]
            .iter()
            .enumerate()
        {
            let _ = writeln!(
                out,
                "| {} | {stat} | {} | {} |",
                if k == 0 { *label } else { "" },
                hand[k],
                if k == 0 {
                    readable(ours[k])
                } else {
                    approximate(ours[k])
                }
            );
        }
    }
    out
}

/// Everything the page shows, computed.
pub struct Results {
    /// The formats covered.
    pub formats: Vec<&'static Format>,
    /// `lowp error-table` rows.
    pub error_rows: Vec<Row>,
    /// `lowp conversion-error` results.
    pub conversion: Vec<Measured>,
    /// `lowp accumulate` of each format that can hold a sum.
    pub sums: Vec<Outcome>,
    /// Seconds each part took: error table, conversion, sums, pictures.
    pub seconds: [f64; 4],
}

/// Runs every analysis for `formats` (default: all), reporting each phase to `ctl`.
pub fn compute(formats: &[&'static Format], ctl: &Control<'_>) -> Result<Results, Error> {
    let formats = crate::registry::formats_or_all(formats);
    let ops = error_table::ordered(&[]);
    let mut seconds = [0.0; 4];

    let start = Instant::now();
    ctl.progress
        .start((formats.len() * ops.len()) as u64, "functions");
    let error_rows = error_table::rows(&formats, &ops, ctl);
    ctl.progress.finish();
    let error_rows = error_rows?;
    seconds[0] = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let conversion = conversion::run(&formats, ctl)?;
    seconds[1] = start.elapsed().as_secs_f64();

    let start = Instant::now();
    let setup = Setup {
        n: ACCUMULATE_N,
        distribution: Distribution::Uniform,
        seed: 0,
    };
    let mut sums = Vec::new();
    for f in &formats {
        ctl.check()?;
        if f.signed && f.has_zero() {
            sums.push(accumulate::run(f, &setup, ctl)?);
        }
    }
    seconds[2] = start.elapsed().as_secs_f64();
    Ok(Results {
        formats,
        error_rows,
        conversion,
        sums,
        seconds,
    })
}

/// The pictures of the page: those of `lowp plot`, each showing `results.formats` only, and
/// the running sums of f16, bf16 and f8e4m3fn where they were summed.
#[cfg(feature = "plot")]
pub fn pictures(results: &Results, ctl: &Control<'_>) -> Result<Vec<Picture>, Error> {
    let mut out = vec![
        plot::layout(&results.formats)?,
        plot::values(&results.formats)?,
        plot::rounding_error(&results.formats)?,
    ];
    for sum in &results.sums {
        if ["f16", "bf16", "f8e4m3fn"].contains(&sum.format) {
            ctl.check()?;
            out.push(plot::running_sums(sum)?);
        }
    }
    Ok(out)
}

/// What [`run`] wrote.
#[derive(Clone, Debug)]
pub struct Written {
    /// The page, `report.md` in the directory.
    pub page: PathBuf,
    /// How many pictures are beside it.
    pub pictures: usize,
    /// Seconds the whole run took.
    pub seconds: f64,
}

/// Computes everything for `formats` (default: all), then writes the page, the pictures and
/// the full tables into `dir` (created if missing). Nothing is written before everything is
/// computed, so a cancelled run leaves nothing behind.
#[cfg(feature = "plot")]
pub fn run(dir: &Path, formats: &[&'static Format], ctl: &Control<'_>) -> Result<Written, Error> {
    // A file, device or unwritable place is refused before the minutes of computing.
    lowp_fs::check_output(lowp_fs::Named::new("--out", dir), lowp_fs::Expect::Dir)?;
    let start = Instant::now();
    let mut results = compute(formats, ctl)?;
    let drawing = Instant::now();
    let pictures = pictures(&results, ctl)?;
    results.seconds[3] = drawing.elapsed().as_secs_f64();
    ctl.check()?;
    let total = start.elapsed().as_secs_f64();
    let names: Vec<&str> = pictures.iter().map(|p| p.name.as_str()).collect();
    let page = markdown(&results, &names, total);
    plot::create_dir(dir)?;
    let error_table = error_table::table(&results.error_rows, error_table::View::All);
    let conversion_table = conversion::table(&results.conversion);
    let files: [(&str, String); 4] = [
        ("error-table.csv", error_table.to_csv()),
        (
            "error-table.json",
            output::json_text(&serde_json::Value::Array(error_table.to_json_records())),
        ),
        ("conversion-error.csv", conversion_table.to_csv()),
        (
            "conversion-error.json",
            output::json_text(&serde_json::Value::Array(
                conversion_table.to_json_records(),
            )),
        ),
    ];
    for (name, text) in &files {
        output::write_atomically(&dir.join(name), text.as_bytes())?;
    }
    plot::write_all(dir, &pictures)?;
    let page_path = dir.join("report.md");
    output::write_atomically(&page_path, page.as_bytes())?;
    Ok(Written {
        page: page_path,
        pictures: pictures.len(),
        seconds: total,
    })
}

/// Finds the error-table row of `format` and `function`.
fn row<'a>(rows: &'a [Row], format: &str, function: &str) -> Option<&'a Row> {
    rows.iter()
        .find(|r| r.format == format && r.function == function)
}

/// The page.
/// `pictures` names the pictures beside the page (`layout.png`, ...): the page shows those.
pub fn markdown(results: &Results, pictures: &[&str], seconds: f64) -> String {
    let mut md = String::new();
    let has = |name: &str| results.formats.iter().any(|f| f.name == name);
    let picture = |name: &str| pictures.contains(&name);
    let threads = rayon::current_num_threads();
    let _ = write!(
        md,
        "# Which format should I use, and what does it cost me?\n\n\
         Measured by `lowp report` (lowp {}) in {seconds:.0} s on {threads} threads: every \
         input of every format where the input space allows it (every value of a format for \
         the math functions, every f32 in a format's range for rounding). Each section names the \
         command that prints its table alone; the full tables are beside this page as CSV and \
         JSON. The f16 sections also set the figures beside an earlier FP16 table measured by \
         hand on sample inputs (the FP16 vs FP32 error of each function, and of rounding f32 \
         to f16); `docs/precision-analysis.md` in lowp's repository explains each difference.\n\n",
        env!("CARGO_PKG_VERSION")
    );

    md.push_str("## At a glance\n\n");
    md.push_str(&glance(results));
    md.push('\n');
    md.push_str(&advice(results));

    md.push_str("\n## The formats (`lowp formats`)\n\n");
    if picture("layout.png") {
        md.push_str("![The bit layout of every format](layout.png)\n\n");
    }
    md.push_str(&crate::formats::table().to_markdown());
    if picture("values.png") {
        md.push_str(
            "\nWhere the values lie: one bar per binade `[2^e, 2^(e+1))`, its height the number \
             of values in it on a log scale (the bits of precision there), subnormal binades in \
             orange, the overflow threshold (`MAX` plus half its spacing) in red, 1 at the grey \
             line.\n\n![Representable values of every format on a log scale](values.png)\n",
        );
    }

    md.push_str(
        "\n## Rounding f32 into a format (`lowp conversion-error`)\n\n\
         Every f32 in the format's normal range (`[MIN_POSITIVE, MAX]` in magnitude, both signs) \
         and in its range including subnormals, rounded to nearest even. *max rel* is \
         `|y - x| / |x|`, relative to the input; *max rel of result* is `|y - x| / |y|`, the \
         error the bound `2^-p` (p bits of precision) is about: it reaches it exactly where a \
         tie `1 + 2^-p` rounds to 1, while against the input that tie errs by \
         `2^-p / (1 + 2^-p)`. With subnormals the bound is 1/2 of the result (inputs just \
         below 1.5 times the smallest subnormal `s` round down to `s`), a third of the input \
         at `1.5 s` itself. *bound abs* is half the spacing at `MAX`.\n\n",
    );
    md.push_str(&conversion::table(&results.conversion).to_markdown());
    if picture("rounding-error.png") {
        md.push_str(
            "\nThe largest relative rounding error at each magnitude: the error of rounding the \
             midpoint between neighbouring values, relative to it. Each binade repeats the \
             same saw-tooth, from `2^-p` down to half that; below the normal range the error \
             climbs to 1 (flushed to zero) as the spacing stays fixed.\n\n\
             ![Relative rounding error against magnitude](rounding-error.png)\n",
        );
    }
    if let Some(m) = results.conversion.iter().find(|m| m.format.name == "f16") {
        md.push_str("\n### f16 beside the hand-measured FP16 figures\n\n");
        md.push_str(&rounding_errors_beside_hand_measured(m));
        md.push_str(
            "\nThe hand-measured 0.33289 is the 1/3 measured here at `1.5 * 2^-24` (a tie rounded \
             up to `2^-23`): its sample did not hold that input itself, or lost it to rounding in \
             its own arithmetic. Its means are over its own sample; ours weigh every f32 in the \
             range once, so large binades (whose absolute errors are larger) count as much as \
             small ones.\n",
        );
    }

    md.push_str(
        "\n## Math functions (`lowp error-table`)\n\n\
         Each element-wise op as the tensor layer runs it (the input widened to f32, the \
         function evaluated once, the result rounded once) on every finite input of the \
         format inside the function's domain, against the exact result (f64 on the same \
         input) and against the same op run in f32 (the hand-measured table's method). Errors \
         cover every result that fits the format, results flushed to zero included: each of \
         those errs by its whole value (relative error 1) and is also counted in *to 0*. \
         Overflows (exact result beyond `MAX`, or infinity out) and NaNs are counted apart and \
         left out of the errors. *max ulp* is the largest error in units of the format's \
         spacing at the exact result: at most 1/2 means correctly rounded.\n\n\
         Per group, over its functions (against the exact result):\n\n",
    );
    md.push_str(&group_summary(results));
    if has("f16") {
        md.push_str("\n### f16 beside the hand-measured FP16 table\n\n");
        md.push_str(&function_errors_beside_hand_measured(&results.error_rows));
        md.push_str(&function_errors_notes(&results.error_rows));
    }
    for name in ["f16", "bf16"] {
        if has(name) {
            let rows: Vec<Row> = results
                .error_rows
                .iter()
                .filter(|r| r.format == name)
                .cloned()
                .collect();
            let _ = write!(md, "\n### Every function in {name}\n\n");
            md.push_str(&error_table::human(&rows, true));
        }
    }

    md.push_str(&format!(
        "\n## Summing (`lowp accumulate`): where a running sum stops growing\n\n\
         {ACCUMULATE_N} values drawn uniformly from [0, 1) (random seed 0) and rounded into \
         each format, summed five ways and compared with the exact sum of the rounded values.\n\n"
    ));
    md.push_str(&stall_table(&results.sums));
    for sum in &results.sums {
        let name = format!("accumulate-{}.png", sum.format);
        if picture(&name) {
            let _ = write!(
                md,
                "\n### {}\n\n{}\n{}\n![Running sums in {}]({name})\n",
                sum.format,
                sum.summary(),
                sum.table().to_markdown(),
                sum.format
            );
        }
    }
    let s = &results.seconds;
    let _ = write!(
        md,
        "\n---\nTimes: math functions {:.1} s, rounding {:.1} s, sums {:.1} s, pictures {:.1} s.\n",
        s[0], s[1], s[2], s[3]
    );
    md
}

/// Notes under the f16 comparison: what makes the columns differ.
fn function_errors_notes(rows: &[Row]) -> String {
    let mut out = String::from(
        "\nThe hand-measured table used inputs of its authors' choosing; these figures cover every \
         finite f16 input in each function's domain, so maxima can only be larger where its \
         inputs missed the worst case, and means differ with the mix of inputs. \
         Against the exact result every relative error is within one rounding of the result \
         (about 2^-11, 0.000488) except where the result underflows: ",
    );
    let mut flushed: Vec<String> = rows
        .iter()
        .filter(|r| r.format == "f16" && r.underflows > 0)
        .map(|r| format!("{} ({})", r.function, r.underflows))
        .collect();
    if flushed.is_empty() {
        flushed.push("none".to_string());
    }
    let _ = write!(
        out,
        "{} have results flushed to zero (relative error 1), which is where the hand-measured \
         maximum relative error of 1 comes from.",
        flushed.join(", ")
    );
    if let Some(exp) = row(rows, "f16", "exp") {
        let _ = write!(
            out,
            " exp overflows on {} inputs (every f16 above ln(65520) ≈ 11.09), square on {}, \
             cosh and sinh on {} and {}.",
            exp.overflows,
            row(rows, "f16", "square").map_or(0, |r| r.overflows),
            row(rows, "f16", "cosh").map_or(0, |r| r.overflows),
            row(rows, "f16", "sinh").map_or(0, |r| r.overflows),
        );
    }
    out.push('\n');
    out
}

/// Per format and group: the largest max rel and max ulp, the mean rel range, overflows and
/// NaNs.
fn group_summary(results: &Results) -> String {
    let mut out = String::from(
        "| format | group | max rel | mean rel | max ulp | overflows | to 0 | NaN |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for f in &results.formats {
        for (k, (group, ops)) in error_table::GROUPS.iter().enumerate() {
            let rows: Vec<&Row> = results
                .error_rows
                .iter()
                .filter(|r| r.format == f.name && ops.contains(&r.function))
                .collect();
            if rows.is_empty() {
                continue;
            }
            let max = |g: &dyn Fn(&Row) -> f64| rows.iter().map(|r| g(r)).fold(0.0, f64::max);
            let sum = |g: &dyn Fn(&Row) -> u64| rows.iter().map(|r| g(r)).sum::<u64>();
            let _ = writeln!(
                out,
                "| {} | {group} | {} | {} | {} | {} | {} | {} |",
                if k == 0 { f.name } else { "" },
                approximate(max(&|r| r.exact.max_rel)),
                range(&results.error_rows, f.name, ops, false, 3),
                approximate(max(&|r| r.exact.max_ulp)),
                sum(&|r| r.overflows),
                sum(&|r| r.underflows),
                sum(&|r| r.nans),
            );
        }
    }
    out
}

/// Per format: where the running sum stalled and the final errors of the methods.
fn stall_table(sums: &[Outcome]) -> String {
    let mut out = String::from(
        "| format | exact sum | in the format | stalled after | Kahan in the format | \
         pairwise in the format | f32 accumulator | Tensor::sum |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for s in sums {
        let stalled = s
            .stall
            .frozen
            .map_or("-".to_string(), |(step, _)| format!("{step} values"));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {stalled} | {} | {} | {} | {} |",
            s.format,
            approximate(s.exact),
            readable(s.methods[0].result),
            readable(s.methods[1].result),
            readable(s.methods[2].result),
            readable(s.methods[3].result),
            readable(s.methods[4].result),
        );
    }
    out
}

/// The summary table: one row per format.
fn glance(results: &Results) -> String {
    let mut out = String::from(
        "| format | bits | precision | largest | smallest normal | max rel rounding error \
         (normals) | sum of 100000 U[0,1) kept in it | with an f32 accumulator |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for f in &results.formats {
        let fmt = f;
        let rounding = results
            .conversion
            .iter()
            .find(|m| m.format.name == f.name)
            .map_or("-".to_string(), |m| approximate(m.normal.max_rel));
        let sum = results.sums.iter().find(|s| s.format == f.name);
        let _ = writeln!(
            out,
            "| {} | {} | {} bits | {} | {} | {rounding} | {} | {} |",
            f.name,
            fmt.total_bits(),
            fmt.precision(),
            readable(f.max_value()),
            readable(f.min_positive_value()),
            sum.map_or("-".to_string(), |s| readable(s.methods[0].result)),
            sum.map_or("-".to_string(), |s| readable(s.methods[3].result)),
        );
    }
    if let Some(s) = results.sums.first() {
        let _ = writeln!(
            out,
            "\nThe exact sum of the {} values is {} (each format rounds the draws a little \
             differently). inf and NaN mark sums beyond the format's largest value: summed in \
             f32 and rounded once, the total overflows the FP8 formats without a scale, and \
             saturates at MAX in FP6 and FP4.",
            s.setup.n,
            approximate(s.exact)
        );
    }
    out
}

/// The advice, with the measured figures it rests on.
fn advice(results: &Results) -> String {
    let mut out = String::new();
    let sum = |name: &str| results.sums.iter().find(|s| s.format == name);
    let rounding = |name: &str| {
        results
            .conversion
            .iter()
            .find(|m| m.format.name == name)
            .map(|m| m.normal.max_rel_of_result)
    };
    if let (Some(h), Some(b)) = (sum("f16"), sum("bf16")) {
        let _ = writeln!(
            out,
            "* **Accumulate in f32, whatever you store in.** A running sum kept in the format \
             stalls once each addend is below half an ulp of the sum: {} values of [0, 1) \
             summed in f16 stop at {} and in bf16 at {}, of about {}. The same values summed \
             in an f32 accumulator and rounded once end within an ulp of the exact sum (f16: \
             {}, bf16: {}). lowp-tensor's reductions all accumulate in f32.",
            h.setup.n,
            readable(h.methods[0].result),
            readable(b.methods[0].result),
            approximate(h.exact),
            readable(h.methods[3].result),
            readable(b.methods[3].result),
        );
    }
    if let (Some(h), Some(b)) = (rounding("f16"), rounding("bf16")) {
        let exp = row(&results.error_rows, "f16", "exp").map_or(0, |r| r.overflows);
        let _ = writeln!(
            out,
            "* **f16 or bf16?** f16 keeps 3 more bits (relative rounding error at most {} \
             against bf16's {}), but its range ends at 65504: exp overflows on {exp} f16 \
             inputs (all above 11.09), and gradients below 6e-8 vanish without loss scaling. \
             bf16 has f32's range, so it overflows only where f32 would: prefer it for \
             training without loss scaling, f16 where precision matters more than range \
             (inference, activations of known scale).",
            approximate(h),
            approximate(b),
        );
    }
    if let (Some(e4), Some(e5)) = (rounding("f8e4m3fn"), rounding("f8e5m2")) {
        let _ = writeln!(
            out,
            "* **FP8:** E4M3 rounds within {} and reaches 448, E5M2 within {} and reaches \
             57344: E4M3 for weights and activations, E5M2 for gradients, both with a \
             per-tensor scale (`lowp convert --fp8-scale per-tensor`), since neither range \
             holds a tensor's values unscaled. Keep every sum in f32: in E4M3 a sum of \
             [0, 1) values stalls at {}.",
            approximate(e4),
            approximate(e5),
            sum("f8e4m3fn").map_or("-".to_string(), |s| readable(s.methods[0].result)),
        );
    }
    if results
        .formats
        .iter()
        .any(|f| f.name.starts_with("f6") || f.name.starts_with("f4"))
    {
        let _ = writeln!(
            out,
            "* **FP6 and FP4** keep 2 to 4 bits (relative rounding error up to {} for FP4) and \
             a handful of binades: only with a scale per small block of values (the MX \
             formats, with E8M0 scales), never for sums.",
            rounding("f4e2m1fn").map_or("-".to_string(), approximate),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format_grid::pow2;
    use crate::registry::lookup;

    #[test]
    fn small_report_has_every_section() {
        let formats = [lookup("f4e2m1fn").unwrap(), lookup("f6e2m3fn").unwrap()];
        let results = compute(&formats, &Control::none()).unwrap();
        assert_eq!(
            results.error_rows.len(),
            2 * lowp_tensor::ops::UNARY_OPS.len()
        );
        assert_eq!(results.conversion.len(), 2);
        assert_eq!(results.sums.len(), 2);
        let md = markdown(&results, &[], 1.0);
        for heading in [
            "# Which format should I use",
            "## At a glance",
            "## Rounding f32 into a format",
            "## Math functions",
            "## Summing",
        ] {
            assert!(md.contains(heading), "{heading}");
        }
        assert!(md.contains("| f4e2m1fn | 4 | 2 bits | 6 | 1 |"), "{md}");
        assert!(!md.contains("beside the hand-measured"));
    }

    /// The page never cites documents the reader does not have (the project's sources are
    /// numbered "seeds" with appendix tables); it names what each comparison is and points to
    /// `docs/precision-analysis.md`, and says flushed results are in the errors, as they are.
    #[test]
    fn the_f16_page_cites_no_unseen_documents() {
        let f16 = lookup("f16").unwrap();
        let error_rows =
            error_table::measure::<lowp::f16>(&["exp", "sin", "sqrt"], &Control::none()).unwrap();
        let results = Results {
            formats: vec![f16],
            error_rows,
            // The exhaustive walk of f32 is not the point here: empty statistics render too.
            conversion: vec![Measured {
                format: f16,
                normal: Default::default(),
                with_subnormals: Default::default(),
            }],
            sums: Vec::new(),
            seconds: [0.0; 4],
        };
        let md = markdown(&results, &[], 1.0);
        assert!(
            md.contains("### f16 beside the hand-measured FP16 table"),
            "{md}"
        );
        assert!(md.contains("docs/precision-analysis.md"), "{md}");
        let lower = md.to_lowercase();
        for cited in ["seed", "appendix", "table 3.", "section 1.4"] {
            assert!(
                !lower.replace("random seed", "").contains(cited),
                "{cited}: {md}"
            );
        }
        assert!(
            md.contains("results flushed to zero included") && md.contains("relative error 1"),
            "{md}"
        );
        assert!(!md.contains("flushed to 0 and NaNs counted apart"), "{md}");
    }

    #[test]
    fn hand_measured_ranges_print_as_the_hand_table_does() {
        let rows = error_table::measure::<lowp::f16>(
            &["floor", "round", "sqrt", "rsqrt"],
            &Control::none(),
        )
        .unwrap();
        assert_eq!(range(&rows, "f16", &["floor", "round"], true, 0), "0");
        // Both correctly rounded: just under 2^-11 = 0.00048828125, printed lo~hi.
        let r = range(&rows, "f16", &["sqrt", "rsqrt"], false, 1);
        let (lo, hi) = r.split_once('~').unwrap();
        let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
        assert!(0.000487 < lo && lo <= hi && hi < pow2(-11), "{r}");
        let table = function_errors_beside_hand_measured(&rows);
        assert!(
            table.contains("| sqrt/rsqrt | max abs | 0.031227~0.062485 |"),
            "{table}"
        );
    }

    #[cfg(feature = "plot")]
    #[test]
    fn report_pictures_show_only_the_chosen_formats() {
        use crate::plot::PALETTE;
        use crate::plot::test_image::Image;
        let chosen = vec![lookup("f16").unwrap(), lookup("bf16").unwrap()];
        let setup = Setup {
            n: 3000,
            distribution: Distribution::Uniform,
            seed: 0,
        };
        let sum = crate::accumulate::run(chosen[0], &setup, &Control::none()).unwrap();
        let results = Results {
            formats: chosen.clone(),
            error_rows: Vec::new(),
            conversion: Vec::new(),
            sums: vec![sum],
            seconds: [0.0; 4],
        };
        let pictures = pictures(&results, &Control::none()).unwrap();
        let names: Vec<&str> = pictures.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "layout.png",
                "values.png",
                "rounding-error.png",
                "accumulate-f16.png"
            ]
        );
        // The layout: f32 for reference, then f16 and bf16.
        let layout = Image::decode(&pictures[0].png);
        assert_eq!(layout.runs_down(142, PALETTE[3]), 3);
        // The values: one row per chosen format.
        let values = Image::decode(&pictures[1].png);
        assert_eq!(values.height, 120 + 56 * 2);
        // The rounding error: two panels, f16's colour and bf16's, and no third.
        let rounding = Image::decode(&pictures[2].png);
        assert_eq!((rounding.width, rounding.height), (960, 64 + 290));
        assert!(rounding.pixels(&rounding.all(), PALETTE[0]).len() > 100);
        assert!(rounding.pixels(&rounding.all(), PALETTE[1]).len() > 100);
        // (Grey, the eighth colour, is also a shade of anti-aliased text.)
        for other in PALETTE[2..].iter().filter(|c| c.0 != c.1) {
            assert!(
                rounding.pixels(&rounding.all(), *other).is_empty(),
                "{other:?}"
            );
        }
    }
}
