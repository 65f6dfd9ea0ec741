//! What rounding one value into one format did: the result, its neighbours, the error, and
//! whether it overflowed, underflowed or went subnormal.

use lowp::Format;
use std::num::FpCategory;

/// What an overflow turned into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverflowTo {
    /// ±infinity.
    Inf,
    /// NaN (formats without infinities).
    Nan,
    /// ±MAX (formats without NaN).
    Max,
}

/// How the result relates to the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The input is a value of the format (infinities included).
    Exact,
    /// Rounded to a nearby normal value.
    Rounded,
    /// The result is subnormal; `exact` when no rounding was needed.
    Subnormal {
        /// Whether the input was already that subnormal.
        exact: bool,
    },
    /// A nonzero input rounded to zero.
    Underflow,
    /// A positive input below the smallest value of a format without zero (E8M0), raised to it.
    Clamped,
    /// The input (infinite, or finite but beyond the rounding threshold above MAX) overflowed.
    Overflow {
        /// What the overflow gave.
        to: OverflowTo,
        /// Whether the input was ±infinity.
        from_infinity: bool,
    },
    /// A finite input the format has no value for (E8M0: zero and negative numbers) gave NaN.
    NotRepresentable,
    /// NaN stayed NaN.
    Nan,
    /// NaN became a number (formats without NaN give a zero of the opposite sign).
    NanReplaced,
}

impl Outcome {
    /// A stable snake_case name for JSON.
    pub fn id(self) -> &'static str {
        match self {
            Outcome::Exact => "exact",
            Outcome::Rounded => "rounded",
            Outcome::Subnormal { .. } => "subnormal",
            Outcome::Underflow => "underflow",
            Outcome::Clamped => "clamped",
            Outcome::Overflow { .. } => "overflow",
            Outcome::NotRepresentable => "not_representable",
            Outcome::Nan => "nan",
            Outcome::NanReplaced => "nan_replaced",
        }
    }
}

/// The result of rounding `input` into one format.
#[derive(Clone, Copy, Debug)]
pub struct Rounded {
    /// The format.
    pub ops: &'static Format,
    /// The value that was rounded.
    pub input: f64,
    /// The result's bits.
    pub bits: u32,
    /// The result's exact value.
    pub value: f64,
    /// The result's category.
    pub category: FpCategory,
    /// What happened.
    pub outcome: Outcome,
}

/// `|result - input|`, and whether that f64 is the exact difference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Error {
    /// The absolute error (infinite when one side is infinite and the other not).
    pub abs: f64,
    /// The relative error `abs / |input|`, when the input is nonzero.
    pub rel: Option<f64>,
    /// Whether `abs` is exact.
    pub abs_exact: bool,
    /// Whether `rel` is exact.
    pub rel_exact: bool,
}

impl Rounded {
    /// Rounds `input` into the format with `from_f64` (nearest, ties to even).
    #[cfg(test)]
    pub fn new(ops: &'static Format, input: f64) -> Self {
        Self::with_bits(ops, input, ops.from_f64(input))
    }

    /// Describes `bits` as the rounding of `input` (for a bit pattern given directly, pass its
    /// own value as `input`).
    pub fn with_bits(ops: &'static Format, input: f64, bits: u32) -> Self {
        let value = ops.to_f64(bits);
        let category = ops.classify(bits);
        Rounded {
            ops,
            input,
            bits,
            value,
            category,
            outcome: outcome(ops, input, value, category),
        }
    }

    /// The next value below the result, if there is one.
    pub fn next_down(&self) -> Option<u32> {
        self.neighbour(self.ops.next_down(self.bits))
    }

    /// The next value above the result, if there is one.
    pub fn next_up(&self) -> Option<u32> {
        self.neighbour(self.ops.next_up(self.bits))
    }

    /// `next` as a neighbour: none when the result is NaN or stepping gave NaN or went nowhere.
    fn neighbour(&self, next: u32) -> Option<u32> {
        let stuck = next == self.bits || self.ops.to_f64(next) == self.value;
        let nan = self.ops.classify(next) == FpCategory::Nan;
        (self.category != FpCategory::Nan && !stuck && !nan).then_some(next)
    }

    /// The rounding error, or `None` when either side is NaN.
    pub fn error(&self) -> Option<Error> {
        let (x, v) = (self.input, self.value);
        if x.is_nan() || v.is_nan() {
            return None;
        }
        if x.is_infinite() || v.is_infinite() {
            let abs = if x == v { 0.0 } else { f64::INFINITY };
            // An infinite input has no relative error unless it is met exactly.
            let rel = if x == v {
                Some(0.0)
            } else if x.is_infinite() {
                None
            } else {
                Some(f64::INFINITY)
            };
            return Some(Error {
                abs,
                rel,
                abs_exact: true,
                rel_exact: true,
            });
        }
        // Knuth's two-sum: diff + tail is exactly v - x.
        let diff = v - x;
        let back = diff - v;
        let tail = (v - (diff - back)) + (-x - back);
        let abs = diff.abs();
        let abs_exact = tail == 0.0 && abs.is_finite();
        let rel = (x != 0.0).then(|| abs / x.abs());
        let rel_exact = abs_exact && rel.is_some_and(|r| r.mul_add(x.abs(), -abs) == 0.0);
        Some(Error {
            abs,
            rel,
            abs_exact,
            rel_exact,
        })
    }
}

/// Classifies what happened when `input` became `value` (of category `category`).
fn outcome(ops: &Format, input: f64, value: f64, category: FpCategory) -> Outcome {
    let nan = category == FpCategory::Nan;
    if input.is_nan() {
        return if nan {
            Outcome::Nan
        } else {
            Outcome::NanReplaced
        };
    }
    if nan && !ops.signed && input.is_sign_negative() {
        return Outcome::NotRepresentable;
    }
    if input.is_infinite() || overflows(ops, input) {
        let to = match category {
            FpCategory::Infinite => OverflowTo::Inf,
            FpCategory::Nan => OverflowTo::Nan,
            _ => OverflowTo::Max,
        };
        if input.is_infinite() && to == OverflowTo::Inf {
            return Outcome::Exact;
        }
        return Outcome::Overflow {
            to,
            from_infinity: input.is_infinite(),
        };
    }
    if nan {
        return Outcome::NotRepresentable;
    }
    if input != 0.0 && category == FpCategory::Zero {
        return Outcome::Underflow;
    }
    let smallest = ops.min_positive_subnormal_value();
    if !ops.has_zero() && input.abs() < smallest {
        return Outcome::Clamped;
    }
    let exact = value == input;
    match (category, exact) {
        (FpCategory::Subnormal, exact) => Outcome::Subnormal { exact },
        (_, true) => Outcome::Exact,
        (_, false) => Outcome::Rounded,
    }
}

/// Whether a finite `x` rounds (to nearest, ties to even, with an unbounded exponent) beyond the
/// largest finite value: `|x|` above `MAX + ulp(MAX)/2`, or equal to it when MAX's last
/// significand bit is odd (always so without mantissa bits, as for E8M0).
pub fn overflows(ops: &Format, x: f64) -> bool {
    let f = ops;
    let max = ops.max_value();
    let half_ulp = 2f64.powi(f.max_exponent() - f.mantissa_bits as i32 - 1);
    let threshold = max + half_ulp;
    let odd = f.mantissa_bits == 0 || ops.max_finite_bits() & 1 == 1;
    x.abs() > threshold || (x.abs() == threshold && odd)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::lookup;

    fn round(format: &str, x: f64) -> Rounded {
        Rounded::new(lookup(format).unwrap(), x)
    }

    #[test]
    fn outcomes() {
        assert_eq!(round("f16", 0.1).outcome, Outcome::Rounded);
        assert_eq!(round("f16", 1.0).outcome, Outcome::Exact);
        let overflow = |to| Outcome::Overflow {
            to,
            from_infinity: false,
        };
        assert_eq!(round("f16", 70000.0).outcome, overflow(OverflowTo::Inf));
        assert_eq!(round("f16", 65519.0).outcome, Outcome::Rounded);
        assert_eq!(round("f16", 65520.0).outcome, overflow(OverflowTo::Inf));
        assert_eq!(round("f8e4m3fn", 500.0).outcome, overflow(OverflowTo::Nan));
        assert_eq!(round("f8e4m3fn", 464.0).outcome, Outcome::Rounded);
        assert_eq!(round("f4e2m1fn", 100.0).outcome, overflow(OverflowTo::Max));
        assert_eq!(round("f8e8m0fnu", 0.0).outcome, Outcome::NotRepresentable);
        assert_eq!(
            round("f8e8m0fnu", -1e300).outcome,
            Outcome::NotRepresentable
        );
        assert_eq!(round("f8e8m0fnu", 1e-300).outcome, Outcome::Clamped);
        assert_eq!(
            round("f8e8m0fnu", 3.0 * 2f64.powi(126)).outcome,
            overflow(OverflowTo::Nan)
        );
        assert_eq!(round("f16", 1e-10).outcome, Outcome::Underflow);
        assert_eq!(
            round("f16", 1e-5).outcome,
            Outcome::Subnormal { exact: false }
        );
        assert_eq!(round("f16", f64::NAN).outcome, Outcome::Nan);
        assert_eq!(round("f6e2m3fn", f64::NAN).outcome, Outcome::NanReplaced);
        assert_eq!(round("f16", f64::INFINITY).outcome, Outcome::Exact);
        assert_eq!(
            round("f8e4m3fn", f64::NEG_INFINITY).outcome,
            Outcome::Overflow {
                to: OverflowTo::Nan,
                from_infinity: true
            }
        );
    }

    #[test]
    fn overflow_agrees_with_the_library() {
        // Wherever the format has infinities or NaN, overflow is visible in the result.
        for ops in crate::registry::all().filter(|o| o.has_nan()) {
            let max = ops.max_value();
            for i in 0..2000 {
                let x = max * (1.0 + i as f64 / 4000.0);
                let special = ops.classify(ops.from_f64(x));
                let special = matches!(special, FpCategory::Nan | FpCategory::Infinite);
                assert_eq!(overflows(ops, x), special, "{} {x}", ops.name);
            }
        }
    }

    #[test]
    fn neighbours_and_error() {
        let r = round("f16", 0.1);
        assert_eq!(r.bits, 0x2e66);
        assert_eq!(r.next_down(), Some(0x2e65));
        assert_eq!(r.next_up(), Some(0x2e67));
        let e = r.error().unwrap();
        // 0.1 and its f16 rounding are close enough that their f64 difference is exact.
        assert!(e.abs_exact && !e.rel_exact);
        assert!((e.abs - 2.44140625e-5).abs() < 1e-15);
        assert!(round("f16", 70000.0).next_up().is_none());
        assert!(round("f8e4m3fn", 500.0).next_down().is_none());
        let max = round("f4e2m1fn", 6.0);
        assert!(max.next_up().is_none());
        assert_eq!(max.next_down(), Some(0x6));
        let e = round("f4e2m1fn", 5.0).error().unwrap();
        assert_eq!((e.abs, e.abs_exact, e.rel_exact), (1.0, true, false));
    }
}
