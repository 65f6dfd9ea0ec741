//! `lowp accumulate`: the "truncation ceiling" of a sum kept in a low-precision format, run
//! (docs/precision-analysis.md explains it).
//!
//! N values are drawn from a stated distribution (in f64 by lowp-tensor's seeded generator,
//! the same on every machine) and rounded once into the format; then they are summed
//!
//! * in the format itself: `s = s + x`, each addition rounded once into the format (lowp's
//!   correctly rounded `+`);
//! * with Kahan's compensated summation, every operation in the format;
//! * pairwise in the format (a balanced tree of additions, each rounded into the format);
//! * in an f32 accumulator, rounded once into the format at the end (the `MPType`
//!   accumulation of PaddlePaddle's `add_n`);
//! * by the tensor layer's own `Tensor::sum` (f32, pairwise, rounded once);
//!
//! and compared with the exact sum of the same rounded values (f64 with Neumaier's
//! compensation: exact to about 2^-100 of the sum of magnitudes). The running sum in the format
//! stalls once the sum is so much larger than the addends that each addition is below half an
//! ulp of the sum: the step where an addition was first lost and where the sum stopped moving
//! for good are reported, and the running sums drawn.

use crate::error::Error;
use crate::format_grid::{Number, ulp};
use crate::output::{Cell, Column, Table};
use crate::progress::Control;
use lowp::Format;
use lowp::LowpFloat;
use lowp_tensor::Tensor;
use std::ops::{Add, Sub};

/// The distributions values are drawn from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// Uniform on `[0, 1)`: positive addends, so the sum grows without bound and must stall.
    Uniform,
    /// Normal with mean 0 and standard deviation 1: a random walk, which stalls only late.
    Normal,
}

impl Distribution {
    /// How the distribution is written in the output.
    pub fn describe(self) -> &'static str {
        match self {
            Distribution::Uniform => "uniform on [0, 1)",
            Distribution::Normal => "normal, mean 0, standard deviation 1",
        }
    }
}

/// What to sum.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    /// How many values.
    pub n: usize,
    /// Drawn from.
    pub distribution: Distribution,
    /// The generator's seed.
    pub seed: u64,
}

/// Running sums are kept at this many evenly spaced steps, for the plot.
const POINTS: usize = 2000;

/// One way of summing.
#[derive(Clone, Debug)]
pub struct Method {
    /// What it is.
    pub name: &'static str,
    /// The final sum, as a value of the format (or the accumulator's, rounded once into it).
    pub result: f64,
    /// Additions that left the running sum unchanged although the addend was not zero (`None`
    /// where there is no running sum).
    pub lost: Option<u64>,
    /// `(step, running sum)` at evenly spaced steps (empty where there is no running sum).
    pub running: Vec<(usize, f64)>,
}

/// Where the running sum in the format stopped following the values.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stall {
    /// The first step (1-based) whose nonzero addend left the sum unchanged, and the sum then.
    pub first_lost: Option<(usize, f64)>,
    /// The step after which the sum never changed again, and its value, if the unchanged tail
    /// is long (at least 10 steps and 1% of them).
    pub frozen: Option<(usize, f64)>,
}

/// The result of one run.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The format.
    pub format: &'static str,
    /// What was summed.
    pub setup: Setup,
    /// The exact sum of the (rounded) values.
    pub exact: f64,
    /// The exact sum rounded once into the format: the best any method can give.
    pub best: f64,
    /// Largest addend magnitude.
    pub max_addend: f64,
    /// The methods, in the order of the table.
    pub methods: Vec<Method>,
    /// The running sum in the format.
    pub stall: Stall,
    /// `(step, exact running sum)` at the same steps as the methods' running sums.
    pub exact_running: Vec<(usize, f64)>,
    /// The spacing of the format at the exact sum.
    pub ulp: f64,
}

/// The steps at which running sums are kept: about [`POINTS`] of them, the last step included.
fn keep(step: usize, n: usize) -> bool {
    let every = n.div_ceil(POINTS).max(1);
    step.is_multiple_of(every) || step == n
}

/// The sum in `T`, one rounded addition at a time, with its running values and stall.
fn naive<T: Number + Add<Output = T>>(xs: &[T]) -> (Method, Stall) {
    let mut s = xs[0];
    let mut running = vec![(1, LowpFloat::to_f64(s))];
    let mut lost = 0;
    let mut stall = Stall::default();
    let mut last_change = 1;
    for (i, &x) in xs.iter().enumerate().skip(1) {
        let next = s + x;
        let step = i + 1;
        if next == s && LowpFloat::to_f64(x) != 0.0 {
            lost += 1;
            stall.first_lost.get_or_insert((step, LowpFloat::to_f64(s)));
        }
        if next.to_bits() != s.to_bits() {
            last_change = step;
        }
        s = next;
        if keep(step, xs.len()) {
            running.push((step, LowpFloat::to_f64(s)));
        }
    }
    // A tail of unchanged steps counts as a stall when it is long: a random walk's sum can
    // sit still for a few steps by chance.
    let tail = xs.len() - last_change;
    if tail >= 10 && tail * 100 >= xs.len() {
        stall.frozen = Some((last_change, LowpFloat::to_f64(s)));
    }
    let method = Method {
        name: "in the format",
        result: LowpFloat::to_f64(s),
        lost: Some(lost),
        running,
    };
    (method, stall)
}

/// Kahan's compensated sum, every operation in `T`.
fn kahan<T: Number + Add<Output = T> + Sub<Output = T>>(xs: &[T]) -> Method {
    let mut s = xs[0];
    let mut c = <T as LowpFloat>::from_f64(0.0);
    let mut running = vec![(1, LowpFloat::to_f64(s))];
    let mut lost = 0;
    for (i, &x) in xs.iter().enumerate().skip(1) {
        let y = x - c;
        let t = s + y;
        c = (t - s) - y;
        if t == s && LowpFloat::to_f64(x) != 0.0 {
            lost += 1;
        }
        s = t;
        if keep(i + 1, xs.len()) {
            running.push((i + 1, LowpFloat::to_f64(s)));
        }
    }
    Method {
        name: "Kahan in the format",
        result: LowpFloat::to_f64(s),
        lost: Some(lost),
        running,
    }
}

/// The pairwise (balanced tree) sum, each addition rounded into `T`.
fn pairwise<T: Number + Add<Output = T>>(xs: &[T]) -> T {
    match xs.len() {
        1 => xs[0],
        n => pairwise(&xs[..n / 2]) + pairwise(&xs[n / 2..]),
    }
}

/// The running sum in an f32 accumulator; the result rounded once into `T`.
fn in_f32<T: Number>(xs: &[T]) -> Method {
    let mut s = 0f32;
    let mut running = Vec::new();
    for (i, &x) in xs.iter().enumerate() {
        s += LowpFloat::to_f32(x);
        if keep(i + 1, xs.len()) {
            running.push((i + 1, s as f64));
        }
    }
    Method {
        name: "f32 accumulator, rounded once",
        result: LowpFloat::to_f64(T::from_f32(s)),
        lost: None,
        running,
    }
}

/// The exact sum of the values (Neumaier's compensated f64 sum of exact f64 values), and the
/// exact running sums at the kept steps.
fn exact<T: Number>(xs: &[T]) -> (f64, Vec<(usize, f64)>) {
    let (mut s, mut c) = (0f64, 0f64);
    let mut running = Vec::new();
    for (i, &x) in xs.iter().enumerate() {
        let x = LowpFloat::to_f64(x);
        let t = s + x;
        c += if s.abs() >= x.abs() {
            (s - t) + x
        } else {
            (x - t) + s
        };
        s = t;
        if keep(i + 1, xs.len()) {
            running.push((i + 1, s + c));
        }
    }
    (s + c, running)
}

/// Runs every method on `setup.n` values of `T`.
pub fn run_in<T: Number + Add<Output = T> + Sub<Output = T>>(
    setup: &Setup,
    ctl: &Control<'_>,
) -> Result<Outcome, Error> {
    let fmt = T::FORMAT;
    if !fmt.signed || !fmt.has_zero() {
        return Err(Error::invalid(format!(
            "{} has no zero and no sign (a scale type): it cannot hold a sum",
            fmt.name
        )));
    }
    if setup.n == 0 {
        return Err(Error::invalid("--n must be at least 1"));
    }
    let tensor_error = |e: lowp_tensor::Error| Error::failure(e.to_string());
    let shape = [setup.n];
    let drawn = match setup.distribution {
        Distribution::Uniform => Tensor::rand_uniform(&shape, 0.0, 1.0, T::DTYPE, setup.seed),
        Distribution::Normal => Tensor::rand_normal(&shape, 0.0, 1.0, T::DTYPE, setup.seed),
    }
    .map_err(tensor_error)?;
    let xs = drawn.to_vec::<T>().map_err(tensor_error)?;
    ctl.check()?;
    let (exact_sum, exact_running) = exact(&xs);
    let (naive, stall) = naive(&xs);
    ctl.check()?;
    let kahan = kahan(&xs);
    let pairwise = Method {
        name: "pairwise in the format",
        result: LowpFloat::to_f64(pairwise(&xs)),
        lost: None,
        running: Vec::new(),
    };
    let f32 = in_f32(&xs);
    let tensor = Method {
        name: "Tensor::sum (f32, pairwise)",
        result: drawn
            .sum(None)
            .and_then(|t| t.item())
            .map_err(tensor_error)?,
        lost: None,
        running: Vec::new(),
    };
    let max_addend = xs
        .iter()
        .map(|&x| LowpFloat::to_f64(x).abs())
        .fold(0.0, f64::max);
    Ok(Outcome {
        format: fmt.name,
        setup: *setup,
        exact: exact_sum,
        best: LowpFloat::to_f64(<T as LowpFloat>::from_f64(exact_sum)),
        max_addend,
        methods: vec![naive, kahan, pairwise, f32, tensor],
        stall,
        exact_running,
        ulp: ulp(&fmt, exact_sum),
    })
}

/// Sums `setup.n` values drawn from `setup.distribution` in `format` by every method.
pub fn run(format: &Format, setup: &Setup, ctl: &Control<'_>) -> Result<Outcome, Error> {
    lowp::with_format!(format, T => run_in::<T>(setup, ctl), else => Err(Error::no_type(format)))
}

impl Outcome {
    /// The outcome as a JSON object: the setup, the exact sum, the stall and one record per
    /// method (as the table's columns).
    pub fn to_json(&self) -> serde_json::Value {
        let pair = |p: Option<(usize, f64)>| {
            p.map_or(
                serde_json::Value::Null,
                |(step, sum)| serde_json::json!({ "step": step, "sum": sum }),
            )
        };
        serde_json::json!({
            "format": self.format,
            "n": self.setup.n,
            "distribution": self.setup.distribution.describe(),
            "seed": self.setup.seed,
            "exact": self.exact,
            "max_addend": self.max_addend,
            "first_lost": pair(self.stall.first_lost),
            "stalled": pair(self.stall.frozen),
            "methods": self.table().to_json_records(),
        })
    }

    /// The table of methods and their final errors.
    pub fn table(&self) -> Table {
        let columns = vec![
            Column::left("method", "method"),
            Column::right("result", "result"),
            Column::right("abs_error", "abs error"),
            Column::right("rel_error", "rel error"),
            Column::right("ulps", "error in ulps"),
            Column::right("lost", "additions lost"),
        ];
        let row = |name: &str, result: f64, lost: Option<u64>| {
            let err = (result - self.exact).abs();
            vec![
                Cell::Text(name.to_string()),
                Cell::Number(result),
                Cell::Approx(err),
                if self.exact == 0.0 {
                    Cell::Empty
                } else {
                    Cell::Approx(err / self.exact.abs())
                },
                Cell::Approx(err / self.ulp),
                lost.map_or(Cell::Empty, |l| Cell::Int(l as i64)),
            ]
        };
        let mut rows: Vec<Vec<Cell>> = self
            .methods
            .iter()
            .map(|m| row(m.name, m.result, m.lost))
            .collect();
        rows.push(row("exact sum, rounded once", self.best, None));
        Table { columns, rows }
    }

    /// The lines above the table: what was summed, and where the running sum stalled.
    pub fn summary(&self) -> String {
        let s = &self.setup;
        let f = self.format;
        let mut out = format!(
            "{} values drawn from the {} distribution (seed {}), rounded into {f}; largest \
             addend {}; exact sum of the rounded values {}.\n",
            s.n,
            s.distribution.describe(),
            s.seed,
            crate::number::readable(self.max_addend),
            crate::number::approximate(self.exact),
        );
        match self.stall.first_lost {
            Some((step, sum)) => out.push_str(&format!(
                "In {f} the running sum first lost an addition at step {step} (sum {}): an \
                 addend below half an ulp of the sum rounds away.\n",
                crate::number::readable(sum)
            )),
            None => out.push_str(&format!("In {f} the running sum lost no addition.\n")),
        }
        if let Some((step, sum)) = self.stall.frozen {
            let ratio = sum.abs() / self.max_addend;
            out.push_str(&format!(
                "It stopped changing after step {step}, at {} (the last {} additions were all \
                 lost; sum / largest addend = {}, near 2^{p}, where {f}'s {p} bits of precision \
                 stop a sum), while the exact sum went on to {}.\n",
                crate::number::readable(sum),
                s.n - step,
                crate::number::approximate(ratio),
                crate::number::approximate(self.exact),
                p = self.precision(),
            ));
        }
        out
    }

    /// The format's precision in bits.
    fn precision(&self) -> u32 {
        lowp::format::format_by_name(self.format).map_or(0, |f| f.precision())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lowp::{bf16, f16};

    fn setup(n: usize) -> Setup {
        Setup {
            n,
            distribution: Distribution::Uniform,
            seed: 0,
        }
    }

    #[test]
    fn f16_sum_of_uniforms_stalls_at_2048() {
        let out = run_in::<f16>(&setup(100_000), &Control::none()).unwrap();
        // Past 2048 the f16 spacing is 2: every addend below 1 rounds away.
        let naive = &out.methods[0];
        assert_eq!(naive.result, 2048.0);
        let (step, sum) = out.stall.frozen.unwrap();
        assert_eq!(sum, 2048.0);
        assert!(step < 10_000, "{step}");
        assert!((out.exact / 100_000.0 - 0.5).abs() < 0.01);
        // The f32 accumulator and the tensor layer end within an ulp of the exact sum.
        for m in &out.methods[3..] {
            assert!(
                (m.result - out.exact).abs() <= out.ulp,
                "{}: {}",
                m.name,
                m.result
            );
        }
        // Kahan in f16 holds the sum within an ulp or two; pairwise within a few.
        assert!((out.methods[1].result - out.exact).abs() <= 2.0 * out.ulp);
        assert!((out.methods[2].result - out.exact).abs() <= 8.0 * out.ulp);
        assert_eq!(out.best, f16::from_f64(out.exact).to_f64());
        assert_eq!(out.exact_running.last().unwrap().1, out.exact);
        assert!(naive.running.len() <= POINTS + 2);
        assert!(out.summary().contains("after step"), "{}", out.summary());
    }

    #[test]
    fn exact_sum_is_exact_and_small_runs_work() {
        let xs: Vec<bf16> = [1.0, 1e-3, -1.0, 3e-5]
            .iter()
            .map(|&x| bf16::from_f64(x))
            .collect();
        let want: f64 = xs.iter().map(|x| x.to_f64()).sum::<f64>();
        // Summed in another order, where nothing cancels in floating point.
        let (got, _) = exact(&xs);
        assert_eq!(got, xs[1].to_f64() + xs[3].to_f64());
        assert!((got - want).abs() < 1e-18);
        let one = run_in::<bf16>(&setup(1), &Control::none()).unwrap();
        assert!(one.methods.iter().all(|m| m.result == one.exact));
        assert!(one.stall.frozen.is_none());
        let err = run_in::<bf16>(&setup(0), &Control::none()).unwrap_err();
        assert!(matches!(err, Error::Invalid(_)));
        let err = run_in::<lowp::f8e8m0fnu>(&setup(10), &Control::none()).unwrap_err();
        assert!(
            err.to_string().contains("scale type"),
            "{}",
            err.to_string()
        );
    }
}
