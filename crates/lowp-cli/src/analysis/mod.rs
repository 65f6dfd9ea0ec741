//! Precision analysis: the seeds' error tables (FP16/BF16 guide, appendix 3.3 and 3.4, and the
//! "truncation ceiling" of section 1.4.2) measured exhaustively for every format, and the
//! pictures that go with them.
//!
//! * [`error_table`]: every element-wise op the tensor layer runs, on every input of a format,
//!   against f64 and against f32 (`lowp error-table`);
//! * [`conversion`]: rounding every f32 in a format's range into it (`lowp conversion-error`);
//! * [`accumulate`]: running sums in the format, in f32, Kahan and pairwise (`lowp accumulate`);
//! * [`plot`]: the PNG pictures (`lowp plot`); [`report`]: all of it on one page (`lowp report`).
//!
//! The work is generic over the number type; [`Kernels`] holds, for each format, the
//! instantiations the commands call by name, as `bench` does.

pub mod accumulate;
pub mod conversion;
pub mod error_table;
pub mod plot;
pub mod report;

use crate::error::CliError;
use crate::interrupt as files;
use crate::registry::{self, FormatOps};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lowp::LowpFloat;
use lowp_tensor::FloatElement;
use std::io::IsTerminal;

/// A lowp number type that is also a tensor element: what every analysis is generic over.
pub trait Number: LowpFloat + FloatElement {}
impl<T: LowpFloat + FloatElement> Number for T {}

/// The analyses of one format, instantiated for its type.
pub struct Kernels {
    /// The format's name.
    pub name: &'static str,
    /// [`error_table::measure`] for this type.
    pub error_rows: fn(&[&'static str], &Progress) -> Result<Vec<error_table::Row>, CliError>,
    /// [`conversion::measure`] for this type.
    pub conversion: fn(&conversion::Span, &Progress) -> Result<conversion::Stats, CliError>,
    /// [`accumulate::run_in`] for this type.
    pub accumulate: fn(&accumulate::Setup) -> Result<accumulate::Outcome, CliError>,
    /// [`plot::midpoint_errors`] for this type.
    pub midpoint_errors: fn() -> Vec<(f64, f64)>,
}

/// Builds the [`Kernels`] of one lowp type.
macro_rules! kernels {
    ($t:ident) => {
        Kernels {
            name: <lowp::$t as LowpFloat>::FORMAT.name,
            error_rows: error_table::measure::<lowp::$t>,
            conversion: conversion::measure::<lowp::$t>,
            accumulate: accumulate::run_in::<lowp::$t>,
            midpoint_errors: plot::midpoint_errors::<lowp::$t>,
        }
    };
}

/// The kernels of every format, in [`registry::ALL`]'s order.
static KERNELS: [Kernels; 12] = [
    kernels!(f16),
    kernels!(bf16),
    kernels!(f8e4m3fn),
    kernels!(f8e5m2),
    kernels!(f8e4m3fnuz),
    kernels!(f8e5m2fnuz),
    kernels!(f8e4m3),
    kernels!(f8e3m4),
    kernels!(f8e8m0fnu),
    kernels!(f6e2m3fn),
    kernels!(f6e3m2fn),
    kernels!(f4e2m1fn),
];

/// The kernels of the format named `name` (a name the registry gave).
pub fn kernels(name: &str) -> &'static Kernels {
    KERNELS
        .iter()
        .find(|k| k.name == name)
        .expect("every registry format has analysis kernels")
}

/// The formats asked for, or every format when none was named.
pub fn formats_or_all(asked: &[&'static FormatOps]) -> Vec<&'static FormatOps> {
    if asked.is_empty() {
        registry::ALL.iter().collect()
    } else {
        let mut seen = Vec::new();
        for &f in asked {
            if !seen.iter().any(|s: &&FormatOps| s.name() == f.name()) {
                seen.push(f);
            }
        }
        seen
    }
}

/// `2^e` as an f64, for `-1074 <= e <= 1023`.
pub fn pow2(e: i32) -> f64 {
    2f64.powi(e)
}

/// The spacing of a format's values at magnitude `y`: `2^(e - m)` where `e` is `y`'s binary
/// exponent, raised to the smallest normal exponent (the subnormal spacing below it).
pub fn ulp(format: &lowp::format::Format, y: f64) -> f64 {
    let e = if y == 0.0 || !y.is_finite() {
        format.min_exponent()
    } else {
        (y.abs().log2().floor() as i32).max(format.min_exponent())
    };
    // log2 may round up just below a power of two; the spacing must not exceed the gap.
    let e = if y != 0.0 && y.is_finite() && pow2(e) > y.abs() {
        (e - 1).max(format.min_exponent())
    } else {
        e
    };
    pow2(e - format.mantissa_bits as i32)
}

/// Whether rounding the finite `x` to nearest even in `T` goes beyond `T`'s largest finite
/// value (with an unbounded exponent): the result is then ±infinity, NaN or, in FP6/FP4, the
/// saturated ±MAX. Matches the rule of `lowp::fit`.
pub fn overflows<T: LowpFloat>(x: f64) -> bool {
    let fmt = T::FORMAT;
    let max_bits = fmt.max_finite_bits();
    let max = T::from_bits_u32(max_bits).to_f64();
    let threshold = max + pow2(fmt.max_exponent() - fmt.mantissa_bits as i32) / 2.0;
    let m = x.abs();
    if m != threshold {
        return m > threshold;
    }
    // A tie goes away from an odd MAX; where the format can show it, its engine says.
    if fmt.has_nan() {
        !T::from_f64(threshold).to_f64().is_finite()
    } else {
        max_bits & 1 == 1
    }
}

/// A progress bar on stderr, drawn only when stderr is a terminal; a hidden one otherwise.
pub struct Progress(ProgressBar);

impl Progress {
    /// A bar counting `total` items (`unit` names them), shown if stderr is a terminal.
    pub fn new(total: u64, unit: &str) -> Progress {
        Progress::shown(total, unit, std::io::stderr().is_terminal())
    }

    /// A bar that draws nothing.
    pub fn hidden() -> Progress {
        Progress(ProgressBar::hidden())
    }

    /// A bar for `total` items, drawn if `shown`.
    fn shown(total: u64, unit: &str, shown: bool) -> Progress {
        if !shown {
            return Progress::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        let template = format!(
            "{{bar:40}} {{human_pos}}/{{human_len}} {unit} {{per_sec}} eta {{eta}} {{msg}}"
        );
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style);
        }
        Progress(bar)
    }

    /// Adds `n` items done.
    pub fn add(&self, n: u64) {
        self.0.inc(n);
    }

    /// Says what is being worked on.
    pub fn message(&self, text: &str) {
        self.0.set_message(text.to_string());
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// Makes Ctrl-C and SIGTERM stop the run at the next block, as `lowp convert` does.
pub fn watch_interrupts() {
    files::watch_interrupts();
}

/// An error (exit code 130) once the run was interrupted.
pub fn check_interrupted() -> Result<(), CliError> {
    files::check_interrupted()
}

/// Whether the run was interrupted (for loops that cannot return an error at once).
pub fn interrupted() -> bool {
    check_interrupted().is_err()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_cover_the_registry_in_order() {
        let ours: Vec<&str> = KERNELS.iter().map(|k| k.name).collect();
        let reg: Vec<&str> = registry::ALL.iter().map(FormatOps::name).collect();
        assert_eq!(ours, reg);
    }

    #[test]
    fn ulp_is_the_spacing() {
        let f16 = lowp::f16::FORMAT;
        assert_eq!(ulp(&f16, 1.0), pow2(-10));
        assert_eq!(ulp(&f16, 1.999), pow2(-10));
        assert_eq!(ulp(&f16, 0.99999), pow2(-11));
        assert_eq!(ulp(&f16, 65504.0), 32.0);
        assert_eq!(ulp(&f16, 1e-7), pow2(-24));
        assert_eq!(ulp(&f16, 0.0), pow2(-24));
        let e8m0 = lowp::f8e8m0fnu::FORMAT;
        assert_eq!(ulp(&e8m0, 3.0), 2.0);
        assert_eq!(ulp(&e8m0, pow2(-127)), pow2(-127));
        // Just below a power of two, where log2 rounds up to the integer.
        let below = f64::from_bits(2f64.to_bits() - 1);
        assert_eq!(ulp(&f16, below), pow2(-10));
    }

    #[test]
    fn overflow_thresholds() {
        use lowp::{f4e2m1fn, f8e4m3fn, f16};
        assert!(!overflows::<f16>(65519.99) && overflows::<f16>(65520.0));
        assert!(overflows::<f16>(-1e300) && !overflows::<f16>(-65504.0));
        // E4M3FN: MAX 448 (mantissa 110, even): the tie at 464 rounds down to 448.
        assert!(!overflows::<f8e4m3fn>(464.0) && overflows::<f8e4m3fn>(464.01));
        // FP4: MAX 6 (mantissa 1, odd): the tie at 7 goes beyond, saturating to 6.
        assert!(!overflows::<f4e2m1fn>(6.99) && overflows::<f4e2m1fn>(7.0));
    }
}
