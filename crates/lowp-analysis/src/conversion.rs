//! `lowp conversion-error`: the error of rounding float32 into a format, measured on every f32
//! in the format's range (docs/precision-analysis.md compares it with hand-measured FP16
//! figures).
//!
//! Two ranges per format, as in the hand-measured FP16 table: the normal range, `[MIN_POSITIVE,
//! MAX]` in magnitude, and the range including subnormals, `[MIN_POSITIVE_SUBNORMAL, MAX]`. Every
//! f32 bit pattern whose value lies in a range is rounded to nearest even on the bulk conversion
//! path, widened back, and measured; patterns outside it (and NaN, infinities) are not walked at
//! all, since positive f32 bit patterns are ordered like their values and a range is one run of
//! patterns per sign. The range including subnormals is measured as the normal range plus the
//! subnormal part, so nothing is rounded twice.
//!
//! The maxima are exact or correctly rounded: within a range the rounding `y` of `x` is within
//! a factor of two of `x` (Sterbenz), so `x - y` is exact in f32, and the largest relative error
//! is one f64 division of exact values. The means are sums in f64 of the absolute errors
//! (exact) and of the relative errors each correctly rounded to f32 (so within 2^-24 relative).
//!
//! Relative errors are taken against the f32 input, as the hand-measured FP16 table defines them
//! (`|y - x| / |x|`); the error against the rounded result (`|y - x| / |y|`) is given beside them,
//! since that is the one the textbook bound `2^-p` (p the precision in bits, the implicit bit
//! counted) reaches: rounding `1 + 2^-p`, a tie, to 1 errs by exactly `2^-p` of the result, and by
//! `2^-p / (1 + 2^-p)` of the input.
//!
//! [`lowp::fit::FitStats`] measures the same quantities for `lowp convert`, but is not used
//! here: for f32 sources it keeps its maxima and its sums in f32 lanes (about 10^-6 relative),
//! which is plenty for a checkpoint report and not enough to set a measured maximum beside its
//! theoretical bound to the last bit; it has no error relative to the result, and it measures
//! a slice, where this walks ranges of bit patterns without storing them. A test checks that
//! the two agree to 10^-6.

use crate::error::Error;
use crate::format_grid::{Number, pow2};
use crate::output::{Cell, Column, Table};
use crate::progress::Control;
use lowp::Format;
use lowp::prelude::*;
use rayon::prelude::*;

/// f32 values rounded and measured at a time.
const CHUNK: u32 = 1 << 16;

/// A run of f32 bit patterns to measure: the magnitudes `lo..=hi` (as positive f32 bits), with
/// each sign of `signs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// Bits of the smallest magnitude.
    pub lo: u32,
    /// Bits of the largest magnitude (inclusive); below `lo` for an empty span.
    pub hi: u32,
    /// The sign bits to walk: `[0, 0x8000_0000]`, or `[0]` for an unsigned format.
    pub signs: Vec<u32>,
}

impl Span {
    /// The f32 values in the span.
    pub fn len(&self) -> u64 {
        let per_sign = if self.hi < self.lo {
            0
        } else {
            (self.hi - self.lo) as u64 + 1
        };
        per_sign * self.signs.len() as u64
    }

    /// Whether the span holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The span of magnitudes `[lo, hi]`, both f32 values, with both signs unless `unsigned`.
    pub fn between(lo: f32, hi: f32, unsigned: bool) -> Span {
        Span {
            lo: lo.to_bits(),
            hi: hi.to_bits(),
            signs: if unsigned {
                vec![0]
            } else {
                vec![0, 0x8000_0000]
            },
        }
    }
}

/// The two parts of a format's range: its subnormal magnitudes `[MIN_POSITIVE_SUBNORMAL,
/// MIN_POSITIVE)` (empty without subnormals) and its normal ones `[MIN_POSITIVE, MAX]`.
pub fn spans(format: &Format) -> (Span, Span) {
    let value = |bits| format.to_f64(bits) as f32;
    let unsigned = !format.signed;
    let normal = Span::between(
        value(format.min_positive_normal_bits()),
        value(format.max_finite_bits()),
        unsigned,
    );
    let mut subnormal = Span::between(value(format.min_positive_subnormal_bits()), 0.0, unsigned);
    subnormal.hi = normal.lo.wrapping_sub(1);
    if !format.subnormals {
        subnormal.hi = 0;
        subnormal.lo = 1;
    }
    (subnormal, normal)
}

/// What rounding a span of f32 values into a format cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    /// Values measured.
    pub values: u64,
    /// Values rounded exactly.
    pub exact: u64,
    /// Largest `|y - x|`.
    pub max_abs: f64,
    /// Largest `|y - x| / |x|`.
    pub max_rel: f64,
    /// The first input (smallest magnitude, positive first) with that relative error.
    pub max_rel_at: f32,
    /// Largest `|y - x| / |y|`.
    pub max_rel_of_result: f64,
    /// Sum of `|y - x|`.
    pub sum_abs: f64,
    /// Sum of `|y - x| / |x|`.
    pub sum_rel: f64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            values: 0,
            exact: 0,
            max_abs: 0.0,
            max_rel: 0.0,
            max_rel_at: f32::NAN,
            max_rel_of_result: 0.0,
            sum_abs: 0.0,
            sum_rel: 0.0,
        }
    }
}

impl Stats {
    /// The statistics of both parts.
    pub fn merge(&self, other: &Stats) -> Stats {
        // Of two inputs with the same largest relative error, the smaller magnitude (then the
        // positive one), so the answer does not depend on the order threads finish in.
        let key = |x: f32| (x.abs().to_bits(), x.is_sign_negative());
        let (max_rel, max_rel_at) = if other.max_rel > self.max_rel
            || (other.max_rel == self.max_rel
                && !other.max_rel_at.is_nan()
                && (self.max_rel_at.is_nan() || key(other.max_rel_at) < key(self.max_rel_at)))
        {
            (other.max_rel, other.max_rel_at)
        } else {
            (self.max_rel, self.max_rel_at)
        };
        Stats {
            values: self.values + other.values,
            exact: self.exact + other.exact,
            max_abs: self.max_abs.max(other.max_abs),
            max_rel,
            max_rel_at,
            max_rel_of_result: self.max_rel_of_result.max(other.max_rel_of_result),
            sum_abs: self.sum_abs + other.sum_abs,
            sum_rel: self.sum_rel + other.sum_rel,
        }
    }

    /// Mean absolute error.
    pub fn mean_abs(&self) -> f64 {
        if self.values == 0 {
            0.0
        } else {
            self.sum_abs / self.values as f64
        }
    }

    /// Mean relative error.
    pub fn mean_rel(&self) -> f64 {
        if self.values == 0 {
            0.0
        } else {
            self.sum_rel / self.values as f64
        }
    }
}

/// Independent lanes of the measuring loop, so that no maximum or sum waits on the previous
/// value's and the compiler can keep them in vector registers.
const LANES: usize = 8;

/// The buffers of one thread, and the largest relative errors (rounded to f32) it has seen,
/// which decide when a chunk is searched for its exact maxima.
struct Scratch<T> {
    xs: Vec<f32>,
    stored: Vec<T>,
    ys: Vec<f32>,
    best_rel: f32,
    best_rel_of_result: f32,
}

/// Measures rounding every f32 of `span` into `T`, on all threads. An interrupted run stops
/// after the chunks in flight and answers the interruption.
pub fn measure<T: Number>(span: &Span, ctl: &Control<'_>) -> Result<Stats, Error> {
    if span.is_empty() {
        return Ok(Stats::default());
    }
    let per_sign = (span.hi - span.lo) as u64 + 1;
    let chunks = per_sign.div_ceil(CHUNK as u64);
    let jobs: Vec<(u32, u64)> = span
        .signs
        .iter()
        .flat_map(|&s| (0..chunks).map(move |c| (s, c)))
        .collect();
    let stats = jobs
        .into_par_iter()
        .map_init(
            || Scratch {
                xs: vec![0.0; CHUNK as usize],
                stored: vec![T::default(); CHUNK as usize],
                ys: vec![0.0; CHUNK as usize],
                best_rel: 0.0,
                best_rel_of_result: 0.0,
            },
            |scratch, (sign, c)| {
                if ctl.cancelled() {
                    return Stats::default();
                }
                let start = span.lo as u64 + c * CHUNK as u64;
                let n = (span.hi as u64 + 1 - start).min(CHUNK as u64) as u32;
                let stats = measure_chunk(scratch, sign, start as u32, n);
                ctl.progress.advance(n as u64);
                stats
            },
        )
        .reduce(Stats::default, |a, b| a.merge(&b));
    ctl.check()?;
    Ok(stats)
}

/// Measures the `n` f32 values with bits `sign | start..start + n`.
///
/// The loop divides in f32 (four lanes to an SSE register where f64 has two): each relative
/// error is correctly rounded to f32, which is plenty for the sums behind the means (2^-24
/// relative). The maxima are then made exact: rounding is monotonic, so the input with the
/// largest exact relative error has the largest f32 one, and only the inputs that tie the
/// chunk's f32 maximum are divided again in f64. That is done only where the chunk may hold
/// the thread's largest error so far: a chunk whose f32 maximum is below the thread's has an
/// exact maximum below the thread's exact one, and reports its f32 maximum, which is too.
fn measure_chunk<T: Number>(scratch: &mut Scratch<T>, sign: u32, start: u32, n: u32) -> Stats {
    let n = n as usize;
    let (xs, stored, ys) = (
        &mut scratch.xs[..n],
        &mut scratch.stored[..n],
        &mut scratch.ys[..n],
    );
    for (i, x) in xs.iter_mut().enumerate() {
        *x = f32::from_bits(sign | (start + i as u32));
    }
    stored.convert_from_f32_slice(xs);
    stored.convert_to_f32_slice(ys);
    let mut lanes = Lanes::default();
    let (x_blocks, x_rest) = xs.as_chunks::<LANES>();
    let (y_blocks, y_rest) = ys.as_chunks::<LANES>();
    for (x, y) in x_blocks.iter().zip(y_blocks) {
        for l in 0..LANES {
            lanes.add(l, x[l], y[l]);
        }
    }
    for (&x, &y) in x_rest.iter().zip(y_rest) {
        lanes.add(0, x, y);
    }
    let mut stats = lanes.total(n as u64);
    let (rel32, rel_of_result32) = lanes.maxima();
    if rel32 > 0.0 && rel32 >= scratch.best_rel {
        scratch.best_rel = rel32;
        let (max, at) = exact_max(
            xs,
            ys,
            rel32,
            |x, y| relative(x, y).0,
            |x, y| relative_f64(x, y).0,
        );
        stats.max_rel = max;
        stats.max_rel_at = at;
    }
    if rel_of_result32 > 0.0 && rel_of_result32 >= scratch.best_rel_of_result {
        scratch.best_rel_of_result = rel_of_result32;
        let (max, _) = exact_max(
            xs,
            ys,
            rel_of_result32,
            |x, y| relative(x, y).1,
            |x, y| relative_f64(x, y).1,
        );
        stats.max_rel_of_result = max;
    }
    stats
}

/// The exact (f64) maximum of `exact` over the inputs whose f32 error `rounded` is `max32`,
/// and the first input that has it.
fn exact_max(
    xs: &[f32],
    ys: &[f32],
    max32: f32,
    rounded: impl Fn(f32, f32) -> f32,
    exact: impl Fn(f32, f32) -> f64,
) -> (f64, f32) {
    let mut best = (0.0, f32::NAN);
    for (&x, &y) in xs.iter().zip(ys) {
        if rounded(x, y) == max32 {
            let e = exact(x, y);
            if e > best.0 {
                best = (e, x);
            }
        }
    }
    best
}

/// `(|y - x| / |x|, |y - x| / |y|, |y - x|)` in f32: the difference is exact (y is within a
/// factor of two of x, Sterbenz), each quotient correctly rounded to f32.
#[inline(always)]
fn relative(x: f32, y: f32) -> (f32, f32, f32) {
    let d = (x - y).abs();
    (d / x.abs(), d / y.abs(), d)
}

/// [`relative`]'s quotients correctly rounded to f64.
fn relative_f64(x: f32, y: f32) -> (f64, f64) {
    let d = (x - y).abs() as f64;
    (d / x.abs() as f64, d / y.abs() as f64)
}

/// The running maxima and sums, one per lane.
#[derive(Default)]
struct Lanes {
    exact: [u32; LANES],
    max_abs: [f32; LANES],
    max_rel: [f32; LANES],
    max_rel_of_result: [f32; LANES],
    sum_abs: [f64; LANES],
    sum_rel: [f64; LANES],
}

impl Lanes {
    /// Adds `x` rounded to `y` in lane `l`.
    #[inline(always)]
    fn add(&mut self, l: usize, x: f32, y: f32) {
        let max = |a: f32, b: f32| if b > a { b } else { a };
        let (rel, rel_of_result, d) = relative(x, y);
        self.exact[l] += (d == 0.0) as u32;
        self.max_abs[l] = max(self.max_abs[l], d);
        self.max_rel[l] = max(self.max_rel[l], rel);
        self.max_rel_of_result[l] = max(self.max_rel_of_result[l], rel_of_result);
        self.sum_abs[l] += d as f64;
        self.sum_rel[l] += rel as f64;
    }

    /// The largest relative errors of the lanes, as rounded to f32.
    fn maxima(&self) -> (f32, f32) {
        let max = |a: &[f32; LANES]| a.iter().copied().fold(0.0, f32::max);
        (max(&self.max_rel), max(&self.max_rel_of_result))
    }

    /// The lanes' totals over `values` values; the relative maxima as rounded to f32.
    fn total(&self, values: u64) -> Stats {
        let (rel, rel_of_result) = self.maxima();
        Stats {
            values,
            exact: self.exact.iter().map(|&e| e as u64).sum(),
            max_abs: self.max_abs.iter().copied().fold(0.0, f32::max) as f64,
            max_rel: rel as f64,
            max_rel_at: f32::NAN,
            max_rel_of_result: rel_of_result as f64,
            sum_abs: self.sum_abs.iter().sum(),
            sum_rel: self.sum_rel.iter().sum(),
        }
    }
}

/// One format's two rows: its normal range, and its range including subnormals.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The format.
    pub format: &'static Format,
    /// Over the normal range.
    pub normal: Stats,
    /// Over the range including subnormals.
    pub with_subnormals: Stats,
}

/// The f32 values [`run`] walks for `formats`, for the progress bar.
pub fn work(formats: &[&'static Format]) -> u64 {
    formats
        .iter()
        .map(|f| {
            let (sub, normal) = spans(f);
            sub.len() + normal.len()
        })
        .sum()
}

/// Measures every format of `formats` (default: all) over both ranges, reporting the f32
/// values walked to `ctl`'s progress.
pub fn run(formats: &[&'static Format], ctl: &Control<'_>) -> Result<Vec<Measured>, Error> {
    let formats = crate::registry::formats_or_all(formats);
    ctl.progress.start(work(&formats), "f32 values");
    let measured = formats
        .iter()
        .map(|&format| {
            ctl.progress.message(format.name);
            let (sub, normal) = spans(format);
            let (normal_stats, sub_stats) = lowp::with_format!(format, T => (
                measure::<T>(&normal, ctl)?,
                measure::<T>(&sub, ctl)?,
            ), else => return Err(Error::no_type(format)));
            Ok(Measured {
                format,
                normal: normal_stats,
                with_subnormals: normal_stats.merge(&sub_stats),
            })
        })
        .collect();
    ctl.progress.finish();
    measured
}

/// The theoretical bounds for one range: the largest absolute error (half the spacing at MAX)
/// and the largest relative error against the result (`2^-p` over normals; 1/2 with
/// subnormals, where the smallest subnormal `s` is the result of inputs up to `1.5 s`).
pub fn bounds(format: &Format, subnormals: bool) -> (f64, f64) {
    let f = format;
    let abs = pow2(f.max_exponent() - f.mantissa_bits as i32 - 1);
    let rel = if subnormals && f.subnormals {
        0.5
    } else {
        pow2(-(f.precision() as i32))
    };
    (abs, rel)
}

/// The table: two rows per format.
pub fn table(measured: &[Measured]) -> Table {
    let columns = vec![
        Column::left("format", "format"),
        Column::left("range", "range"),
        Column::right("from", "from"),
        Column::right("to", "to"),
        Column::right("values", "f32 values"),
        Column::right("max_abs", "max abs"),
        Column::right("max_rel", "max rel"),
        Column::right("mean_abs", "mean abs"),
        Column::right("mean_rel", "mean rel"),
        Column::right("max_rel_of_result", "max rel of result"),
        Column::right("bound_abs", "bound abs"),
        Column::right("bound_rel", "bound rel"),
        Column::right("max_rel_at", "max rel at"),
        Column::right("exact", "exact").machine_only(),
    ];
    let mut rows = Vec::new();
    for m in measured {
        let f = m.format;
        let (sub, _) = spans(f);
        for (label, stats, subnormals) in [
            ("normal", &m.normal, false),
            ("with subnormals", &m.with_subnormals, true),
        ] {
            let from = if subnormals && !sub.is_empty() {
                f.min_positive_subnormal_bits()
            } else {
                f.min_positive_normal_bits()
            };
            let (bound_abs, bound_rel) = bounds(f, subnormals);
            let label = if subnormals && !f.subnormals {
                "with subnormals (none)"
            } else {
                label
            };
            rows.push(vec![
                Cell::Text(f.name.to_string()),
                Cell::Text(label.to_string()),
                Cell::Number(f.to_f64(from)),
                Cell::Number(f.max_value()),
                Cell::Int(stats.values as i64),
                Cell::Number(stats.max_abs),
                crate::error_table::error_cell(stats.max_rel, stats.values),
                Cell::Approx(stats.mean_abs()),
                Cell::Approx(stats.mean_rel()),
                crate::error_table::error_cell(stats.max_rel_of_result, stats.values),
                Cell::Number(bound_abs),
                Cell::Number(bound_rel),
                Cell::Number(stats.max_rel_at as f64),
                Cell::Int(stats.exact as i64),
            ]);
        }
    }
    Table { columns, rows }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::lookup;
    use lowp::{bf16, f4e2m1fn, f8e8m0fnu, f16};

    /// f32 values of one f16 binade and its neighbours' edges, `[2^e, 2^(e+1)]`.
    fn binade(e: i32) -> Span {
        Span::between(pow2(e) as f32, pow2(e + 1) as f32, false)
    }

    #[test]
    fn f16_normals_reach_the_bound_to_the_last_bit() {
        // One binade holds every case: the relative errors repeat from binade to binade.
        let stats = measure::<f16>(&binade(0), &Control::none()).unwrap();
        let u = pow2(-11);
        assert_eq!(stats.max_rel_of_result, u); // 1 + 2^-11 rounds to 1: exactly 2^-11
        assert_eq!(stats.max_rel, u / (1.0 + u)); // ... which is 2^-11 / (1 + 2^-11) of x
        assert_eq!(stats.max_rel_at, 1.0 + u as f32);
        assert_eq!(stats.max_abs, pow2(-11)); // half an ulp of [1, 2)
        assert_eq!(stats.values, 2 * ((1 << 23) + 1));
        // Each f16 interval of [1, 2) holds 2^13 f32 steps; the errors are 0, 1, ..., 2^12
        // steps and back: mean abs error 2^-12 * 2^12 / 2^13 ulp... computed independently:
        let steps = 1u64 << 13;
        let sum_in_steps: u64 = (0..steps).map(|k| k.min(steps - k)).sum();
        let mean_abs = sum_in_steps as f64 / steps as f64 * pow2(-23);
        assert!(
            (stats.mean_abs() / mean_abs - 1.0).abs() < 1e-4,
            "{}",
            stats.mean_abs()
        );
    }

    #[test]
    fn f16_smallest_subnormals_err_by_a_third() {
        let f16 = lookup("f16").unwrap();
        let (sub, _) = spans(f16);
        assert_eq!(sub.lo, (pow2(-24) as f32).to_bits());
        assert_eq!(sub.hi, (pow2(-14) as f32).to_bits() - 1);
        let s = pow2(-24) as f32;
        let first = Span::between(s, 2.0 * s, false);
        let stats = measure::<f16>(&first, &Control::none()).unwrap();
        // 1.5 s is a tie: it rounds to 2 s (even), off by s/2, a third of itself.
        assert_eq!(stats.max_rel, 1.0 / 3.0);
        assert_eq!(stats.max_rel_at, 1.5 * s);
        // The f32 just below 1.5 s, s (1.5 - 2^-23), rounds to s: nearly half of the result.
        assert_eq!(stats.max_rel_of_result, 0.5 - pow2(-23));
    }

    #[test]
    fn whole_small_formats_and_symmetry() {
        let fp4 = lookup("f4e2m1fn").unwrap();
        let measured = run(&[fp4], &Control::none()).unwrap();
        let m = &measured[0];
        // [0.5, 6] and [1, 6] in f32, both signs.
        let count = |lo: f32, hi: f32| 2 * (hi.to_bits() - lo.to_bits() + 1) as u64;
        assert_eq!(m.with_subnormals.values, count(0.5, 6.0));
        assert_eq!(m.normal.values, count(1.0, 6.0));
        assert_eq!(m.normal.max_abs, 1.0); // the tie 5, between 4 and 6, rounds to 4
        assert_eq!(m.normal.max_rel_of_result, 0.25); // 2^-p, p = 2
        assert_eq!(m.with_subnormals.max_rel, 1.0 / 3.0);
        // The negative half alone gives the positive half's figures.
        let pos = measure::<f4e2m1fn>(&Span::between(0.5, 6.0, true), &Control::none()).unwrap();
        let mut neg_span = Span::between(0.5, 6.0, true);
        neg_span.signs = vec![0x8000_0000];
        let neg = measure::<f4e2m1fn>(&neg_span, &Control::none()).unwrap();
        assert_eq!(pos.sum_abs, neg.sum_abs);
        assert_eq!(pos.max_rel, neg.max_rel);
        assert_eq!(neg.max_rel_at, -pos.max_rel_at);
        assert_eq!(m.with_subnormals.max_rel_at, pos.max_rel_at);
    }

    #[test]
    fn e8m0_has_one_range_of_positive_values() {
        let e8m0 = lookup("f8e8m0fnu").unwrap();
        let (sub, normal) = spans(e8m0);
        assert!(sub.is_empty());
        assert_eq!(normal.signs, [0]);
        assert_eq!(normal.lo, (pow2(-127) as f32).to_bits());
        let stats = measure::<f8e8m0fnu>(&Span::between(1.0, 2.0, true), &Control::none()).unwrap();
        // Powers of two: 1.5 is the tie (rounded up), off by a third of itself.
        assert_eq!(stats.max_rel, 1.0 / 3.0);
        assert_eq!(bounds(e8m0, true), (pow2(126), 0.5));
    }

    #[test]
    fn agrees_with_fit_stats() {
        // Every f32 of [0.9, 1.1] and its negative, measured both ways.
        let span = Span::between(0.9, 1.1, false);
        let ours = measure::<bf16>(&span, &Control::none()).unwrap();
        let xs: Vec<f32> = span
            .signs
            .iter()
            .flat_map(|&s| (span.lo..=span.hi).map(move |b| f32::from_bits(s | b)))
            .collect();
        let fit = lowp::fit::FitStats::of::<f32, bf16>(&xs, false);
        assert_eq!(ours.values, fit.measured);
        assert_eq!(ours.exact, fit.exact);
        assert_eq!(ours.max_abs, fit.max_abs_error);
        assert!((ours.max_rel / fit.max_rel_error - 1.0).abs() < 1e-6);
        assert!((ours.mean_abs() / fit.mean_abs_error() - 1.0).abs() < 1e-6);
        assert!((ours.mean_rel() / fit.mean_rel_error() - 1.0).abs() < 1e-6);
    }

    #[test]
    fn table_rows_and_bounds() {
        let fp4 = lookup("f4e2m1fn").unwrap();
        let measured = run(&[fp4], &Control::none()).unwrap();
        let json = table(&measured).to_json_records();
        assert_eq!(json.len(), 2);
        assert_eq!(json[0]["range"], "normal");
        assert_eq!(json[0]["bound_rel"], 0.25);
        assert_eq!(json[0]["bound_abs"], 1.0); // half the spacing (2) at MAX = 6
        assert_eq!(json[1]["bound_rel"], 0.5);
        assert_eq!(json[1]["from"], 0.5);
        let f16 = lookup("f16").unwrap();
        assert_eq!(bounds(f16, false), (16.0, pow2(-11)));
    }
}
