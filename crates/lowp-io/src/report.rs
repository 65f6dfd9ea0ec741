//! The report of `lowp convert`: one row per tensor with what the conversion cost, a verdict,
//! and a summary.
//!
//! Verdicts, from worst to best (the thresholds are the `*_WARN` constants below):
//! * `fail`: values became ±inf or NaN: a finite value overflowed (without `--saturate`) or a
//!   non-NaN value was stored as NaN (infinity in E4M3, which has none); or, decoding a
//!   quantized weight, some of its blocks have a bad scale: NaN, ±inf, negative, or zero over
//!   non-zero elements ([`crate::quant::check_scales`]), which decode to NaN, infinities,
//!   negated values or zeros that the conversion's own figures may not show.
//! * `warn`: values saturated to ±MAX (with `--saturate`); or more than 0.1% of the elements
//!   were flushed to zero; or more than 1% became subnormal (fewer significant bits); or the
//!   mean relative error exceeds the target's unit roundoff (2^-(mantissa bits + 1), the most
//!   rounding within the normal range can lose), which means much of the tensor lies outside
//!   that range.
//! * `ok`: only rounding within the range.
//! * `exact`: every finite value stored exactly.
//! * `kept`: not converted (not a float, not matched by `--only`, or already the target type).
//!
//! A block-quantized weight ([`QuantReport::verdict`]) gets `fail` when it held NaN or ±inf
//! (its blocks' scales become NaN or infinite); `warn` when elements saturated beyond the
//! element format's top binade (any at all, as a conversion's saturation warns), when more of
//! its elements were flushed to zero than [`QuantReport::flush_warn_above`] allows (the share
//! of a conversion, [`FLUSH_WARN`], for E4M3 elements), or when its relative Frobenius error
//! `‖x - x̂‖ / ‖x‖` exceeds the element format's unit roundoff (2^-4 for E4M3, 2^-2 for E2M1:
//! what rounding alone costs when every block is well scaled); `ok` otherwise. The error as a
//! whole is not enough: one huge row keeps it tiny while the rest of its block is flushed.

use crate::float_type::FloatType;
use crate::layouts::Layout;
use crate::quant::{QuantStats, ScaleCheck, Scheme};
use lowp::fit::FitStats;
use serde_json::{Map, Value, json};
use std::fmt;

/// Above this fraction of the elements flushed to zero, a tensor gets `warn`.
pub const FLUSH_WARN: f64 = 1e-3;

/// Above this fraction of the elements stored as subnormals, a tensor gets `warn`.
pub const SUBNORMAL_WARN: f64 = 1e-2;

/// What happened to one tensor.
#[derive(Clone, Debug)]
pub struct TensorReport {
    /// The tensor's name (an `.npz` member without `.npy`; a `.npy` file's stem).
    pub name: String,
    /// Its shape.
    pub shape: Vec<u64>,
    /// Its element type in the input, as the file names it (`F32`, `<f4`, `I64`).
    pub from: String,
    /// Its element type in the output, as the file names it.
    pub to: String,
    /// The target type, when converted.
    pub target: Option<FloatType>,
    /// The statistics, when converted (or measured in a dry run).
    pub stats: Option<FitStats>,
    /// The per-tensor scale of an FP8 tensor (`--fp8-scale per-tensor`), as the file stores it
    /// in `NAME.scale`: the factor that restores the values (`NAME * NAME.scale`), a power of
    /// two. The values were divided by it (multiplied by its inverse) before rounding.
    pub scale: Option<f64>,
    /// Why the tensor was kept as it is.
    pub note: String,
    /// Bytes of data in the input.
    pub bytes_in: u64,
    /// Bytes of data in the output.
    pub bytes_out: u64,
    /// What block quantization cost, when the tensor was quantized.
    pub quant: Option<QuantReport>,
    /// What checking the scales of a decoded quantized weight found (its blocks, and those
    /// whose scale is NaN, infinite, negative, or zero over non-zero elements: see
    /// [`crate::quant::check_scales`]); `None` for every other tensor.
    pub scale_check: Option<ScaleCheck>,
}

/// What quantizing one weight cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuantReport {
    /// The scheme.
    pub scheme: Scheme,
    /// The layout the weight is stored in.
    pub layout: Layout,
    /// The error and clipping figures.
    pub stats: QuantStats,
}

impl QuantReport {
    /// The largest relative Frobenius error that rounding alone explains: the unit roundoff
    /// of the scheme's element format.
    pub fn warn_above(&self) -> f64 {
        let format = self.scheme.element_format();
        2f64.powi(-(format.precision() as i32))
    }

    /// The largest share of the elements flushed to zero that does not warn.
    ///
    /// E4M3 elements: [`FLUSH_WARN`], as for a conversion. Their zero is reached only below
    /// 2^-10 of a step, 2^-19 of the block's largest value: a value flushed there is lost to
    /// the format's range, as in a conversion (a block holding values that far apart, or a
    /// scale clamped to its type's range).
    ///
    /// E2M1 elements: their unit roundoff, 2^-2. Their smallest non-zero value is a twelfth of
    /// their largest, so zero is the nearest element of every value below a 24th of its
    /// block's amax: rounding alone flushes several percent of Gaussian weights (7% under
    /// nvfp4, 8% under mxfp4; more with outliers), and [`FLUSH_WARN`] would warn of every
    /// weight. Each flushed element has relative error 1: past this share the flushes alone
    /// make the mean relative error exceed what rounding explains, which a conversion warns
    /// of too.
    pub fn flush_warn_above(&self) -> f64 {
        if self.scheme.bits_per_element() == 8 {
            FLUSH_WARN
        } else {
            self.warn_above()
        }
    }
}

/// A tensor's verdict, worst first (the order sorts by it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Values became ±inf or NaN.
    Fail,
    /// Saturated, flushed, subnormal or imprecise beyond rounding (see the module docs).
    Warn,
    /// Only rounding within the range.
    Ok,
    /// Every finite value stored exactly.
    Exact,
    /// Not converted.
    Kept,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Fail => "fail",
            Verdict::Warn => "warn",
            Verdict::Ok => "ok",
            Verdict::Exact => "exact",
            Verdict::Kept => "kept",
        })
    }
}

/// `part` as a percentage of `whole`, to three significant digits.
pub fn percent(part: u64, whole: u64) -> String {
    let p = 100.0 * part as f64 / whole.max(1) as f64;
    format!("{}%", significant(p))
}

/// `x` to three significant digits, without exponent for ordinary sizes (`0.391`, `12.5`,
/// `3.00e-7`; `0` for zero). Whole numbers keep their digits (`12346`), and a value that
/// rounds up to the next power of ten keeps three digits too (9.996 is `10.0`).
pub fn significant(x: f64) -> String {
    if x == 0.0 {
        "0".to_string()
    } else if !(1e-4..1e6).contains(&x.abs()) {
        format!("{x:.2e}")
    } else {
        let decimals = (2 - x.abs().log10().floor() as i32).max(0) as usize;
        let text = format!("{x:.decimals$}");
        let digits = text.replace(['.', '-'], "");
        if decimals > 0 && digits.trim_start_matches('0').len() > 3 {
            format!("{x:.*}", decimals - 1)
        } else {
            text
        }
    }
}

impl TensorReport {
    /// The tensor's figures as one JSON-ready record, in this order: `name`, `from`, `to`,
    /// `elements`, the counts `overflowed`, `flushed_to_zero`, `subnormal`, `became_nan`, the
    /// errors `max_rel_error`, `mean_rel_error`, `max_abs_error`, `mean_abs_error`, the counts
    /// `nan_inputs`, `infinite_inputs`, `exact`, the largest finite magnitude `amax`,
    /// `bytes_in`, `bytes_out`, `scale` (only when `with_scale`: the number stored in
    /// `NAME.scale`, which restores the values as `NAME * scale`), when `with_quant` the block-quantization figures
    /// `scheme`, `sqnr_db` (10·log10(Σx² / Σ(x - x̂)²)), `rel_frobenius_error`
    /// (‖x - x̂‖ / ‖x‖), `clipped_blocks` and `blocks` (blocks whose scale made some element
    /// saturate), `flushed_share` (`flushed_to_zero`, which a quantized weight fills with the
    /// codec's count, over `elements`), `saturated` and `saturated_share` (elements saturated
    /// beyond the top binade, see [`QuantStats::saturated`]), `bytes_per_param` (output bytes,
    /// scales included, per element), `verdict`, `why` (see [`TensorReport::verdict`], under
    /// `saturate`) and `shape`. When `with_checks`, before `verdict`, a decoded quantized
    /// weight's `blocks` (unless `with_quant` put it already) and `bad_scales` (blocks whose
    /// scale is bad, see [`crate::quant::check_scales`]). Figures that do not apply (a kept
    /// tensor's statistics, an unscaled tensor's scale) and non-finite numbers are `null`.
    pub fn record(
        &self,
        saturate: bool,
        with_scale: bool,
        with_quant: bool,
        with_checks: bool,
    ) -> Map<String, Value> {
        let count = |n: u64| json!(i64::try_from(n).unwrap_or(i64::MAX));
        let number = |x: f64| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number);
        let (verdict, why) = self.verdict(saturate);
        let mut map = Map::new();
        map.insert("name".into(), json!(self.name));
        map.insert("from".into(), json!(self.from));
        map.insert("to".into(), json!(self.to));
        map.insert("elements".into(), count(self.shape.iter().product()));
        let stats: [(&str, Value); 12] = match &self.stats {
            Some(s) => [
                ("overflowed", count(s.overflowed)),
                ("flushed_to_zero", count(s.flushed_to_zero)),
                ("subnormal", count(s.subnormal)),
                ("became_nan", count(s.became_nan)),
                ("max_rel_error", number(s.max_rel_error)),
                ("mean_rel_error", number(s.mean_rel_error())),
                ("max_abs_error", number(s.max_abs_error)),
                ("mean_abs_error", number(s.mean_abs_error())),
                ("nan_inputs", count(s.nan_inputs)),
                ("infinite_inputs", count(s.infinite_inputs)),
                ("exact", count(s.exact)),
                ("amax", number(s.amax)),
            ],
            None => [
                "overflowed",
                "flushed_to_zero",
                "subnormal",
                "became_nan",
                "max_rel_error",
                "mean_rel_error",
                "max_abs_error",
                "mean_abs_error",
                "nan_inputs",
                "infinite_inputs",
                "exact",
                "amax",
            ]
            .map(|k| (k, Value::Null)),
        };
        map.extend(stats.map(|(k, v)| (k.to_string(), v)));
        if let Some(q) = &self.quant {
            // A quantized weight's flushes, counted by the codec, under the conversion's name.
            map.insert("flushed_to_zero".into(), count(q.stats.flushed));
        }
        map.insert("bytes_in".into(), count(self.bytes_in));
        map.insert("bytes_out".into(), count(self.bytes_out));
        if with_scale {
            map.insert("scale".into(), self.scale.map_or(Value::Null, number));
        }
        if with_quant {
            let q = self.quant.as_ref();
            let elements = self.shape.iter().product::<u64>().max(1) as f64;
            map.insert(
                "scheme".into(),
                q.map_or(Value::Null, |q| json!(q.scheme.name())),
            );
            map.insert(
                "sqnr_db".into(),
                q.map_or(Value::Null, |q| number(q.stats.sqnr_db())),
            );
            map.insert(
                "rel_frobenius_error".into(),
                q.map_or(Value::Null, |q| number(q.stats.rel_frobenius())),
            );
            map.insert(
                "clipped_blocks".into(),
                q.map_or(Value::Null, |q| count(q.stats.clipped_blocks)),
            );
            map.insert(
                "blocks".into(),
                q.map_or(Value::Null, |q| count(q.stats.blocks)),
            );
            let share = |n: u64| number(n as f64 / elements);
            map.insert(
                "flushed_share".into(),
                q.map_or(Value::Null, |q| share(q.stats.flushed)),
            );
            map.insert(
                "saturated".into(),
                q.map_or(Value::Null, |q| count(q.stats.saturated)),
            );
            map.insert(
                "saturated_share".into(),
                q.map_or(Value::Null, |q| share(q.stats.saturated)),
            );
            map.insert(
                "bytes_per_param".into(),
                number(self.bytes_out as f64 / elements),
            );
        }
        if with_checks {
            let c = self.scale_check.as_ref();
            if !with_quant {
                map.insert("blocks".into(), c.map_or(Value::Null, |c| count(c.blocks)));
            }
            map.insert("bad_scales".into(), c.map_or(Value::Null, |c| count(c.bad)));
        }
        map.insert("verdict".into(), json!(verdict.to_string()));
        map.insert("why".into(), json!(why));
        map.insert("shape".into(), json!(self.shape));
        map
    }

    /// The verdict and, unless `ok`/`exact`/`kept`, the reasons.
    ///
    /// A decoded quantized weight is judged as a conversion from the decoded values, and fails
    /// besides when some of its blocks have a bad scale (`3 of 64 blocks have a bad scale
    /// (NaN, inf, zero or negative)`, listed first): such a block decodes to NaN, infinities,
    /// zeros or negated values, which the statistics of the conversion cannot all tell.
    pub fn verdict(&self, saturate: bool) -> (Verdict, String) {
        if let Some(q) = &self.quant {
            return q.verdict();
        }
        let (Some(s), Some(to)) = (&self.stats, self.target) else {
            return (Verdict::Kept, self.note.clone());
        };
        let mut fails = Vec::new();
        if let Some(c) = &self.scale_check
            && c.bad > 0
        {
            fails.push(format!(
                "{} of {} blocks have a bad scale (NaN, inf, zero or negative)",
                c.bad, c.blocks
            ));
        }
        if s.overflowed > 0 && !saturate {
            fails.push(format!("{} overflowed", s.overflowed));
        }
        if s.became_nan > 0 {
            fails.push(format!("{} became NaN", s.became_nan));
        }
        let mut warns = Vec::new();
        if s.overflowed > 0 && saturate {
            warns.push(format!("{} saturated", s.overflowed));
        }
        if s.flushed_to_zero as f64 > FLUSH_WARN * s.elements as f64 {
            warns.push(format!(
                "{} flushed to zero",
                percent(s.flushed_to_zero, s.elements)
            ));
        }
        if s.subnormal as f64 > SUBNORMAL_WARN * s.elements as f64 {
            warns.push(format!("{} subnormal", percent(s.subnormal, s.elements)));
        }
        if s.mean_rel_error() > to.unit_roundoff() {
            warns.push(format!(
                "mean rel. error {} > {} (unit roundoff)",
                significant(s.mean_rel_error()),
                significant(to.unit_roundoff())
            ));
        }
        let finite = s.elements - s.nan_inputs - s.infinite_inputs;
        let clean = if s.exact == finite {
            Verdict::Exact
        } else {
            Verdict::Ok
        };
        judged(fails, warns, clean)
    }
}

impl QuantReport {
    /// The verdict of a quantized weight (see the module docs) and its reasons, worded as a
    /// conversion's: `fail` for NaN or infinite inputs; `warn` for `N saturated` (any element
    /// saturated beyond the top binade), `X% flushed to zero` (a share above
    /// [`QuantReport::flush_warn_above`]) or a relative error above the unit roundoff; `ok`
    /// otherwise. A failure lists the reasons for a warning after its own. The flushed and
    /// saturated counts cover the blocks without NaN or infinity; an empty weight is `ok`.
    pub fn verdict(&self) -> (Verdict, String) {
        let s = &self.stats;
        let mut fails = Vec::new();
        if s.nonfinite > 0 {
            fails.push(format!(
                "{} NaN or infinite inputs made their blocks' scales non-finite",
                s.nonfinite
            ));
        }
        let mut warns = Vec::new();
        if s.saturated > 0 {
            warns.push(format!("{} saturated", s.saturated));
        }
        if s.flushed as f64 > self.flush_warn_above() * s.elements as f64 {
            warns.push(format!(
                "{} flushed to zero",
                percent(s.flushed, s.elements)
            ));
        }
        // NaN (non-finite inputs) compares false: the failure says why already.
        let error = s.rel_frobenius();
        if error > self.warn_above() {
            warns.push(format!(
                "rel. error {} > {} (unit roundoff of the elements)",
                significant(error),
                significant(self.warn_above())
            ));
        }
        judged(fails, warns, Verdict::Ok)
    }
}

/// The verdict of the reasons for a failure and for a warning, and its reasons: `fail` with
/// both lists (a warning's reasons after a failure's: both matter), `warn` with its own, or
/// `clean` (`exact` or `ok`) with none.
fn judged(mut fails: Vec<String>, warns: Vec<String>, clean: Verdict) -> (Verdict, String) {
    if !fails.is_empty() {
        fails.extend(warns);
        (Verdict::Fail, fails.join(", "))
    } else if !warns.is_empty() {
        (Verdict::Warn, warns.join(", "))
    } else {
        (clean, String::new())
    }
}

/// The whole report: the tensors and what was asked.
#[derive(Clone, Debug)]
pub struct Report {
    /// One entry per tensor, in the input's order.
    pub tensors: Vec<TensorReport>,
    /// Whether `--saturate` was given.
    pub saturate: bool,
    /// Bytes of the input file.
    pub file_bytes_in: u64,
    /// Bytes of the output file (0 in a dry run, or when nothing was written).
    pub file_bytes_out: u64,
    /// Whether the output was written: false in a dry run, and when a verdict or an unmatched
    /// `--only` pattern met [`crate::Options::strict`].
    pub written: bool,
    /// The entries of a model directory left out (hidden files and folders, temporaries of
    /// lowp runs), with the reason; empty for a file.
    pub skipped: Vec<Skipped>,
    /// What the conversion decided that the tensors do not show: which other models of the
    /// directory were converted on their own, which `__metadata__` entries were dropped to keep
    /// a header within safetensors' limit.
    pub notes: Vec<String>,
}

/// An entry of a model directory that a conversion left out, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// Its path relative to the model directory.
    pub path: std::path::PathBuf,
    /// Why it was left out ("hidden", "a temporary output of a lowp run").
    pub why: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.path.display(), self.why)
    }
}

impl Report {
    /// One record per tensor, in the input's order: every figure of the report (see
    /// [`TensorReport::record`]).
    pub fn records(&self) -> Vec<Map<String, Value>> {
        let scaled = self.tensors.iter().any(|t| t.scale.is_some());
        let quantized = self.tensors.iter().any(|t| t.quant.is_some());
        let checked = self.tensors.iter().any(|t| t.scale_check.is_some());
        self.tensors
            .iter()
            .map(|t| t.record(self.saturate, scaled, quantized, checked))
            .collect()
    }

    /// How many tensors got each verdict, worst first, as `2 fail, 10 ok`.
    pub fn verdict_counts(&self) -> Vec<(Verdict, usize)> {
        let mut counts: Vec<(Verdict, usize)> = Vec::new();
        for t in &self.tensors {
            let v = t.verdict(self.saturate).0;
            match counts.iter_mut().find(|(w, _)| *w == v) {
                Some((_, n)) => *n += 1,
                None => counts.push((v, 1)),
            }
        }
        counts.sort();
        counts
    }

    /// The figures of the block-quantized weights taken together, when some were quantized:
    /// their statistics merged (so the SQNR is that of all their elements as one signal),
    /// how many there are, and the bytes per parameter they take, scales included.
    pub fn quant_summary(&self) -> Option<QuantSummary> {
        let mut summary: Option<QuantSummary> = None;
        for t in &self.tensors {
            let Some(q) = &t.quant else { continue };
            let s = summary.get_or_insert(QuantSummary {
                scheme: q.scheme,
                layout: q.layout,
                weights: 0,
                stats: QuantStats::default(),
                bytes: 0,
            });
            s.weights += 1;
            s.stats.merge(&q.stats);
            s.bytes += t.bytes_out;
        }
        summary
    }

    /// The line under the table; `written` names the output (`None`: a dry run).
    pub fn summary(&self, written: Option<&str>, seconds: f64) -> String {
        let counts: Vec<String> = self
            .verdict_counts()
            .iter()
            .map(|(v, n)| format!("{n} {v}"))
            .collect();
        let tensors = self.tensors.len();
        let plural = if tensors == 1 { "" } else { "s" };
        let what = match written {
            Some(out) if self.written => format!(
                "wrote {out}: {} → {} bytes",
                self.file_bytes_in, self.file_bytes_out
            ),
            Some(out) => format!("{out} not written (--strict)"),
            None => "dry run: nothing written".to_string(),
        };
        let quant = self
            .quant_summary()
            .map_or(String::new(), |q| q.line() + "\n");
        format!(
            "{quant}{tensors} tensor{plural}: {}. {what} in {seconds:.2} s.\n",
            if counts.is_empty() {
                "none".to_string()
            } else {
                counts.join(", ")
            }
        )
    }

    /// The JSON report: `header` (what was asked), the thresholds, the summary (with the
    /// run's `seconds`) and one record per tensor ([`Report::records`]).
    pub fn to_json(&self, header: Value, seconds: f64) -> Value {
        let records: Vec<Value> = self.records().into_iter().map(Value::Object).collect();
        let counts: serde_json::Map<String, Value> = self
            .verdict_counts()
            .iter()
            .map(|(v, n)| (v.to_string(), json!(n)))
            .collect();
        json!({
            "command": header,
            "thresholds": {
                "fail": "a finite value overflowed to ±inf/NaN (without --saturate), or a non-NaN value became NaN",
                "warn": "saturated values; or flushed_to_zero > flush_warn * elements; or subnormal > subnormal_warn * elements; or mean_rel_error > the target's unit roundoff",
                "flush_warn": FLUSH_WARN,
                "subnormal_warn": SUBNORMAL_WARN,
                "exact": "every finite value stored exactly",
                "decoded": "a quantized weight decoded fails when bad_scales > 0: a block scale (or NVFP4's second scale, which multiplies it) that is NaN, ±inf or negative, or zero while its block holds a non-zero element",
                "quantized": {
                    "fail": "NaN or infinite inputs (their blocks' scales became non-finite)",
                    "warn": "saturated > 0 (beyond the elements' top binade); or flushed_to_zero > flush_warn * elements (E4M3 elements) or > flush_warn_e2m1 * elements (E2M1); or rel_frobenius_error > the elements' unit roundoff",
                    "flush_warn_e2m1": 0.25,
                },
            },
            "quantization": self.quant_summary().map(|q| q.to_json()),
            "summary": {
                "tensors": self.tensors.len(),
                "verdicts": counts,
                "file_bytes_in": self.file_bytes_in,
                "file_bytes_out": self.file_bytes_out,
                "written": self.written,
                "seconds": seconds,
            },
            "skipped": self.skipped.iter().map(|s| json!({
                "path": s.path.display().to_string(),
                "why": s.why,
            })).collect::<Vec<_>>(),
            "notes": self.notes,
            "tensors": records,
        })
    }
}

/// The block-quantized weights of a report taken together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuantSummary {
    /// Their scheme.
    pub scheme: Scheme,
    /// Their layout.
    pub layout: Layout,
    /// How many weights were quantized.
    pub weights: usize,
    /// Their statistics, merged.
    pub stats: QuantStats,
    /// Their bytes in the output, scales included.
    pub bytes: u64,
}

impl QuantSummary {
    /// Output bytes per quantized parameter, scales included.
    pub fn bytes_per_param(&self) -> f64 {
        self.bytes as f64 / self.stats.elements.max(1) as f64
    }

    /// One line: `mxfp4 (compressed-tensors): 12 weights, 1.05e6 parameters, SQNR 17.9 dB,
    /// rel. error 0.127, 9.1% of blocks clipped, 0.531 bytes/parameter`.
    pub fn line(&self) -> String {
        let s = &self.stats;
        format!(
            "{} ({}): {} weight{}, {} parameters, SQNR {} dB, rel. error {}, {} of blocks \
             clipped, {} bytes/parameter",
            self.scheme.name(),
            self.layout.name(),
            self.weights,
            if self.weights == 1 { "" } else { "s" },
            s.elements,
            significant(s.sqnr_db()),
            significant(s.rel_frobenius()),
            percent(s.clipped_blocks, s.blocks),
            significant(self.bytes_per_param()),
        )
    }

    /// The figures as JSON (non-finite numbers as `null`).
    pub fn to_json(&self) -> Value {
        let number = |x: f64| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number);
        let s = &self.stats;
        json!({
            "scheme": self.scheme.name(),
            "layout": self.layout.name(),
            "weights": self.weights,
            "parameters": s.elements,
            "sqnr_db": number(s.sqnr_db()),
            "rel_frobenius_error": number(s.rel_frobenius()),
            "blocks": s.blocks,
            "clipped_blocks": s.clipped_blocks,
            "flushed_to_zero": s.flushed,
            "saturated": s.saturated,
            "bytes": self.bytes,
            "bytes_per_param": number(self.bytes_per_param()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_keeps_three_digits() {
        for (x, shown) in [
            (1.23456, "1.23"),
            (12.3456, "12.3"),
            (123.456, "123"),
            (12345.6, "12346"),
            (0.0123456, "0.0123"),
            (9.996, "10.0"),
            (-9.996, "-10.0"),
            (0.0, "0"),
            (3e-7, "3.00e-7"),
        ] {
            assert_eq!(significant(x), shown, "{x}");
        }
    }

    fn report(stats: FitStats, to: FloatType) -> TensorReport {
        TensorReport {
            name: "w".into(),
            shape: vec![stats.elements],
            from: "F32".into(),
            to: "BF16".into(),
            target: Some(to),
            stats: Some(stats),
            scale: None,
            note: String::new(),
            bytes_in: 0,
            bytes_out: 0,
            quant: None,
            scale_check: None,
        }
    }

    #[test]
    fn verdicts_follow_the_thresholds() {
        let base = FitStats {
            elements: 10_000,
            exact: 10_000,
            measured: 10_000,
            ..FitStats::default()
        };
        let bf16 = FloatType::BF16;
        assert_eq!(report(base, bf16).verdict(false).0, Verdict::Exact);
        let rounded = FitStats {
            exact: 10,
            rel_error_sum: 10.0,
            ..base
        };
        assert_eq!(report(rounded, bf16).verdict(false).0, Verdict::Ok);
        let over = FitStats {
            overflowed: 1,
            ..rounded
        };
        let (v, why) = report(over, bf16).verdict(false);
        assert_eq!((v, why.as_str()), (Verdict::Fail, "1 overflowed"));
        assert_eq!(report(over, bf16).verdict(true).0, Verdict::Warn);
        let flushed = FitStats {
            flushed_to_zero: 11,
            ..rounded
        };
        let (v, why) = report(flushed, bf16).verdict(false);
        assert_eq!((v, why.as_str()), (Verdict::Warn, "0.110% flushed to zero"));
        let few = FitStats {
            flushed_to_zero: 10,
            ..rounded
        };
        assert_eq!(report(few, bf16).verdict(false).0, Verdict::Ok);
        let imprecise = FitStats {
            rel_error_sum: 0.01 * 10_000.0,
            ..rounded
        };
        assert_eq!(report(imprecise, bf16).verdict(false).0, Verdict::Warn);
        assert_eq!(
            report(imprecise, FloatType::F8E5M2).verdict(false).0,
            Verdict::Ok
        );
    }

    #[test]
    fn quantized_verdicts_count_flushes_and_saturation() {
        let judge = |scheme: Scheme, stats: QuantStats| {
            QuantReport {
                scheme,
                layout: Layout::CompressedTensors,
                stats,
            }
            .verdict()
        };
        let base = QuantStats {
            elements: 10_000,
            blocks: 100,
            signal: 100.0,
            noise: 0.01,
            amax: 1.0,
            ..QuantStats::default()
        };
        assert_eq!(judge(Scheme::Fp8Block, base), (Verdict::Ok, String::new()));
        // E4M3 elements: the conversion's share.
        let few = QuantStats {
            flushed: 10,
            ..base
        };
        assert_eq!(judge(Scheme::Fp8Block, few).0, Verdict::Ok);
        let flushed = QuantStats {
            flushed: 11,
            ..base
        };
        let (v, why) = judge(Scheme::Mxfp8, flushed);
        assert_eq!((v, why.as_str()), (Verdict::Warn, "0.110% flushed to zero"));
        // E2M1 elements: rounding flushes a few percent; past a quarter they warn.
        let rounding = QuantStats {
            flushed: 2_500,
            ..base
        };
        assert_eq!(judge(Scheme::Nvfp4, rounding).0, Verdict::Ok);
        let most = QuantStats {
            flushed: 9_844,
            ..base
        };
        let (v, why) = judge(Scheme::Nvfp4, most);
        assert_eq!((v, why.as_str()), (Verdict::Warn, "98.4% flushed to zero"));
        // Any saturation past the top binade warns, as a conversion's does.
        let saturated = QuantStats {
            saturated: 1,
            ..base
        };
        let (v, why) = judge(Scheme::Mxfp4, saturated);
        assert_eq!((v, why.as_str()), (Verdict::Warn, "1 saturated"));
        // A failure lists the warnings after its own reason.
        let both = QuantStats {
            nonfinite: 2,
            flushed: 9_844,
            ..base
        };
        let (v, why) = judge(Scheme::Fp8Block, both);
        assert_eq!(v, Verdict::Fail);
        assert!(why.ends_with(", 98.4% flushed to zero"), "{why}");
        assert_eq!(judge(Scheme::Nvfp4, QuantStats::default()).0, Verdict::Ok);
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(significant(0.390625), "0.391");
        assert_eq!(significant(12.5), "12.5");
        assert_eq!(significant(0.0), "0");
        assert_eq!(significant(3e-7), "3.00e-7");
        assert_eq!(percent(1, 3), "33.3%");
    }
}
