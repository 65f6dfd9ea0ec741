//! f64 references of the element-wise ops, and each function's domain.
//!
//! Every op of [`UNARY_OPS`](crate::ops::UNARY_OPS) evaluated in f64 on an (already rounded)
//! input: errors near 2^-53, far below the precision of any output format but f64's, so the
//! tests of the kernels and `lowp error-table` take these values as the exact results. They are
//! written independently of the kernels (other forms, other libraries where it matters), so a
//! mistake in a kernel is not repeated here.

/// The f64 reference of one element-wise op.
#[derive(Clone, Copy, Debug)]
pub struct Reference {
    /// The op's name, as in [`UNARY_OPS`](crate::ops::UNARY_OPS).
    pub name: &'static str,
    /// The function in f64: within a few f64 ulps of the exact value (or ±infinity where the
    /// exact value is beyond f64's range, as `exp(1000)`).
    pub exact: fn(f64) -> f64,
    /// Whether the kernel computes it exactly or correctly rounded in the compute type, so that
    /// its results must be the correctly rounded exact values (sqrt, `+ - * /`, the rounding
    /// functions, ...); the others must be faithful (within one ulp).
    pub correctly_rounded: bool,
    /// Whether a finite `x` is in the function's mathematical domain: where it is defined, real
    /// and finite (poles excluded: `log(0)`, `1/0`, `atanh(±1)`). A finite result too large
    /// for f64 (`exp(1000)`) is in the domain.
    pub domain: fn(f64) -> bool,
}

/// Every real `x`.
fn everywhere(_: f64) -> bool {
    true
}

/// The Taylor series of `x - tanh(x)` to x^45 near 0, where the f64 naive form cancels; the
/// naive form elsewhere.
fn tanh_shrink(x: f64) -> f64 {
    const C: [f64; 22] = [
        0.3333333333333333,
        -0.13333333333333333,
        0.05396825396825397,
        -0.021869488536155203,
        0.008863235529902197,
        -0.003592128036572481,
        0.0014558343870513183,
        -0.000590027440945586,
        0.00023912911424355248,
        -9.691537956929451e-05,
        3.927832388331683e-05,
        -1.5918905069328964e-05,
        6.451689215655431e-06,
        -2.6147711512907546e-06,
        1.0597268320104654e-06,
        -4.294911078273806e-07,
        1.7406618963571648e-07,
        -7.054636946400968e-08,
        2.859136662305254e-08,
        -1.1587644432798853e-08,
        4.6962953982309016e-09,
        -1.903336833931276e-09,
    ];
    if x.abs() < 0.5 {
        let x2 = x * x;
        C.iter().rev().fold(0.0, |acc, &c| acc * x2 + c) * x2 * x
    } else {
        x - x.tanh()
    }
}

/// The logistic function, without overflow or underflow to 0 for large negative `x`.
fn logistic(x: f64) -> f64 {
    if x < 0.0 {
        x.exp() / (1.0 + x.exp())
    } else {
        1.0 / (1.0 + (-x).exp())
    }
}

/// ln(logistic(x)), in a form that neither overflows nor cancels.
fn log_logistic(x: f64) -> f64 {
    if x < -30.0 {
        x - x.exp().ln_1p()
    } else {
        -(-x).exp().ln_1p()
    }
}

/// Builds one [`Reference`].
const fn r(
    name: &'static str,
    exact: fn(f64) -> f64,
    correctly_rounded: bool,
    domain: fn(f64) -> bool,
) -> Reference {
    Reference {
        name,
        exact,
        correctly_rounded,
        domain,
    }
}

/// The reference of every element-wise op, in the order of
/// [`UNARY_OPS`](crate::ops::UNARY_OPS) (a test checks it).
pub const REFERENCES: &[Reference] = &[
    r("sin", f64::sin, false, everywhere),
    r("cos", f64::cos, false, everywhere),
    r("tan", f64::tan, false, everywhere),
    r("asin", f64::asin, false, |x| x.abs() <= 1.0),
    r("acos", f64::acos, false, |x| x.abs() <= 1.0),
    r("atan", f64::atan, false, everywhere),
    r("sinh", f64::sinh, false, everywhere),
    r("cosh", f64::cosh, false, everywhere),
    r("tanh", f64::tanh, false, everywhere),
    r("asinh", libm::asinh, false, everywhere),
    // libm's acosh (from musl) returns numbers for x <= -2; the domain is x >= 1.
    r(
        "acosh",
        |x| if x < 1.0 { f64::NAN } else { libm::acosh(x) },
        false,
        |x| x >= 1.0,
    ),
    r("atanh", libm::atanh, false, |x| x.abs() < 1.0),
    r("exp", f64::exp, false, everywhere),
    r("expm1", f64::exp_m1, false, everywhere),
    r("log", f64::ln, false, |x| x > 0.0),
    r("log2", f64::log2, false, |x| x > 0.0),
    r("log10", f64::log10, false, |x| x > 0.0),
    r("log1p", f64::ln_1p, false, |x| x > -1.0),
    // sqrt(-0) is -0: the domain includes both zeros.
    r("sqrt", f64::sqrt, true, |x| x >= 0.0),
    r("rsqrt", |x| 1.0 / x.sqrt(), false, |x| x > 0.0),
    r("reciprocal", |x| 1.0 / x, true, |x| x != 0.0),
    r("square", |x| x * x, true, everywhere),
    r("abs", f64::abs, true, everywhere),
    r("floor", f64::floor, true, everywhere),
    r("ceil", f64::ceil, true, everywhere),
    r("round", f64::round_ties_even, true, everywhere),
    r(
        "relu",
        |x| if x > 0.0 || x.is_nan() { x } else { 0.0 },
        true,
        everywhere,
    ),
    r("sigmoid", logistic, false, everywhere),
    r("logsigmoid", log_logistic, false, everywhere),
    r("silu", |x| x * logistic(x), false, everywhere),
    r("softsign", |x| x / (1.0 + x.abs()), false, everywhere),
    r("tanh_shrink", tanh_shrink, false, everywhere),
    r(
        "gelu",
        |x| 0.5 * x * libm::erfc(-x / std::f64::consts::SQRT_2),
        false,
        everywhere,
    ),
];

/// The reference of the op named `op`, if it is an element-wise op.
///
/// ```
/// use lowp_tensor::ops::reference;
/// let exp = reference::of("exp").unwrap();
/// assert_eq!((exp.exact)(0.0), 1.0);
/// assert!(!(reference::of("log").unwrap().domain)(0.0)); // a pole
/// assert!(reference::of("matmul").is_none());
/// ```
pub fn of(op: &str) -> Option<&'static Reference> {
    REFERENCES.iter().find(|r| r.name == op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_reference_per_op_in_order() {
        let names: Vec<&str> = REFERENCES.iter().map(|r| r.name).collect();
        assert_eq!(names, crate::ops::UNARY_OPS);
    }

    #[test]
    fn domains_exclude_poles_and_keep_overflow() {
        let domain = |op: &str, x: f64| (of(op).unwrap().domain)(x);
        assert!(!domain("reciprocal", 0.0) && domain("reciprocal", -1e-30));
        assert!(!domain("atanh", 1.0) && domain("atanh", -0.999));
        assert!(!domain("log1p", -1.0) && domain("log1p", -0.5));
        assert!(domain("sqrt", -0.0) && !domain("sqrt", -1e-30));
        assert!(!domain("acosh", 0.99) && domain("acosh", 1.0));
        assert!(domain("exp", 1e30) && (of("exp").unwrap().exact)(1e30).is_infinite());
    }
}
