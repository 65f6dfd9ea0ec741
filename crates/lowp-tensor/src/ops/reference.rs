//! f64 references of the element-wise ops, and each function's domain.
//!
//! Every op of [`UNARY_OPS`](crate::ops::UNARY_OPS) evaluated in f64 on an (already rounded)
//! input: errors near 2^-53, far below the precision of any output format but f64's, so the
//! tests of the kernels and `lowp error-table` take these values as the exact results. They are
//! written independently of the kernels, so a mistake in a kernel is not repeated here: the
//! composite functions (`tanh_shrink`, `sigmoid`, `logsigmoid`, `silu`, `gelu`) are derived
//! here from their mathematical definitions (tanh's Taylor coefficients from its differential
//! equation, the normal distribution function from the integral of the density) and share no
//! code or constants with [`crate::ops::unary`]. The ops that are one library function (`sin`,
//! `exp`, `asinh`, ...) are that function of f64 from `std` or `libm`; the kernels of the
//! narrow formats evaluate them in f32, but the f64 kernels call the same functions, so for
//! f64 outputs those references check the plumbing, not the function.

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

/// `value`, or -0 where `x` is -inf: the limit of `x` times a factor that tends to 0 faster
/// than `x` grows.
fn limit_at_minus_inf(x: f64, value: f64) -> f64 {
    if x == f64::NEG_INFINITY { -0.0 } else { value }
}

/// Every real `x`.
fn everywhere(_: f64) -> bool {
    true
}

/// The number of Taylor coefficients of tanh kept: those of x, x^3, ..., x^123.
const TANH_TERMS: usize = 62;

/// The Taylor coefficients of tanh at 0, `c[i]` of `x^(2i + 1)`, derived here from tanh's
/// differential equation `y' = 1 - y^2`, `y(0) = 0` (not taken from any table): with
/// `y = sum a_k x^k`, `(k + 1) a_(k+1) = [k = 0] - sum_(i+j=k) a_i a_j`. Only odd powers
/// appear, and the products summed for one coefficient all have one sign, so each is within a
/// few ulps.
const fn tanh_taylor() -> [f64; TANH_TERMS] {
    let mut c = [0.0; TANH_TERMS];
    c[0] = 1.0;
    // Coefficient of x^(2n + 1): (2n + 1) c_n = -sum of c_i c_j over odd powers
    // (2i + 1) + (2j + 1) = 2n, that is i + j = n - 1.
    let mut n = 1;
    while n < TANH_TERMS {
        let mut sum = 0.0;
        let mut i = 0;
        while i < n {
            sum += c[i] * c[n - 1 - i];
            i += 1;
        }
        c[n] = -sum / (2 * n + 1) as f64;
        n += 1;
    }
    c
}

/// The coefficients of [`tanh_taylor`], computed when the crate is compiled.
const TANH_TAYLOR: [f64; TANH_TERMS] = tanh_taylor();

/// `x - tanh(x)` from the definition: where the subtraction would cancel (`|x| < 1`), the
/// Taylor series of tanh without its first term `x`, `-(c_1 x^3 + c_2 x^5 + ...)`, which
/// converges for `|x| < pi/2` (the terms shrink by about `(2x/pi)^2`, so 62 terms leave less
/// than 2^-60 at `|x| = 1`); from 1 on, `x - tanh(x)` itself, where the subtraction loses at
/// most a factor `x / (x - tanh x) < 4.2`.
fn tanh_shrink(x: f64) -> f64 {
    if x.abs() < 1.0 {
        let x2 = x * x;
        let tail = TANH_TAYLOR[1..]
            .iter()
            .rev()
            .fold(0.0, |acc, &c| acc * x2 + c);
        -(tail * x2 * x)
    } else {
        x - x.tanh()
    }
}

/// The logistic function `1 / (1 + e^-x)`, as defined. Below -37, `e^-x` would overflow
/// for the most negative inputs, and `e^x < 2^-53` makes `1 + e^x` round to 1, so the value
/// `e^x / (1 + e^x)` is `e^x` to within an ulp.
fn logistic(x: f64) -> f64 {
    if x < -37.0 {
        x.exp()
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

/// The standard normal density `e^(-x^2/2) / sqrt(2 pi)`, with `x^2` split exactly into
/// `hi + lo` so that its rounding does not move the exponential (whose condition number is
/// `x^2 / 2`): `e^(-hi/2) e^(-lo/2)`.
fn normal_density(x: f64) -> f64 {
    let hi = x * x;
    // Beyond |x| = 38.6 the density is below f64's smallest subnormal (and for huge x the
    // split's `lo` could overflow `exp`).
    if hi.is_nan() {
        return hi;
    }
    if hi > 1490.0 {
        return 0.0;
    }
    let lo = x.mul_add(x, -hi);
    (-hi / 2.0).exp() * (-lo / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Mills' ratio `Q(t) / density(t)` for `t >= 1/2` (`Q` the upper tail of the standard
/// normal), by Laplace's continued fraction `1 / (t + 1 / (t + 2 / (t + 3 / (t + ...))))`,
/// evaluated from the back: 4000 levels leave no error visible in f64 from `t = 1/2` on,
/// 1000 from `t = 1` on.
fn mills_ratio(t: f64) -> f64 {
    let levels = if t < 1.0 { 4000 } else { 1000 };
    let mut v = t;
    for k in (1..=levels).rev() {
        v = t + f64::from(k) / v;
    }
    1.0 / v
}

/// The standard normal distribution function `Phi(x)`, from its definition as the integral
/// of the density: near 0, `1/2 + density(x) (x + x^3/3 + x^5/(3 5) + ...)` (the integral
/// of the density's series, all terms of one sign; below -1/2 the sum would cancel); in the
/// lower tail `density(x)` times [`mills_ratio`]`(-x)`, and in the upper `1 - ` that.
fn normal_cdf(x: f64) -> f64 {
    if (-0.5..1.0).contains(&x) {
        let x2 = x * x;
        let (mut term, mut sum) = (x, x);
        let mut n = 0.0;
        while term.abs() > 1e-18 * sum.abs() {
            term = term * x2 / (2.0 * n + 3.0);
            sum += term;
            n += 1.0;
        }
        0.5 + normal_density(x) * sum
    } else if x < 0.0 {
        normal_density(x) * mills_ratio(-x)
    } else {
        1.0 - normal_density(x) * mills_ratio(x)
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
    r("softplus", |x| -log_logistic(-x), false, everywhere),
    // At -inf, x sigmoid(x) and x Φ(x) tend to -0 (x * 0 would be NaN, as PyTorch's silu
    // and gelu give there), and x / (1 + |x|) at ±inf tends to ±1.
    r(
        "silu",
        |x| limit_at_minus_inf(x, x * logistic(x)),
        false,
        everywhere,
    ),
    r(
        "softsign",
        |x| {
            if x.is_infinite() {
                x.signum()
            } else {
                x / (1.0 + x.abs())
            }
        },
        false,
        everywhere,
    ),
    r("tanh_shrink", tanh_shrink, false, everywhere),
    r(
        "gelu",
        |x| limit_at_minus_inf(x, x * normal_cdf(x)),
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
    fn tanhs_coefficients_come_out_of_its_equation() {
        // tanh x = x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835 - ...
        let exact = [1.0, -1.0 / 3.0, 2.0 / 15.0, -17.0 / 315.0, 62.0 / 2835.0];
        for (c, e) in TANH_TAYLOR.iter().zip(exact) {
            assert!((c - e).abs() <= 2.0 * f64::EPSILON * e.abs(), "{c} {e}");
        }
        // The series and the naive form agree where the naive form has bits left.
        for x in [0.9f64, -0.999, 0.6] {
            let naive = x - x.tanh();
            assert!((tanh_shrink(x) / naive - 1.0).abs() < 1e-14, "{x}");
        }
        assert_eq!(tanh_shrink(0.0), 0.0);
        // Near 0, x^3/3 - 2x^5/15 (the next term is 2e-25 of that at 1e-6).
        let x = 1e-6f64;
        let two_terms = x * x * x / 3.0 - 2.0 * x.powi(5) / 15.0;
        assert!((tanh_shrink(x) / two_terms - 1.0).abs() < 1e-15);
    }

    #[test]
    fn the_normal_distribution_function_meets_known_values() {
        // Phi(-1), Phi(-3) and Phi(-10) to 16 digits (Abramowitz and Stegun, table 26.1, and
        // the tail series), and the symmetry Phi(x) + Phi(-x) = 1.
        let close = |a: f64, b: f64| ((a - b) / b).abs() < 8.0 * f64::EPSILON;
        assert!(close(normal_cdf(-1.0), 0.15865525393145707));
        assert!(close(normal_cdf(-3.0), 0.0013498980316300945));
        assert!(close(normal_cdf(-10.0), 7.619853024160526e-24));
        assert_eq!(normal_cdf(0.0), 0.5);
        for x in [0.1, 0.49, 0.5, 0.75, 1.0, 2.5, 6.0] {
            assert!(
                (normal_cdf(x) + normal_cdf(-x) - 1.0).abs() < 4.0 * f64::EPSILON,
                "{x}"
            );
        }
        let gelu = of("gelu").unwrap().exact;
        assert_eq!(gelu(f64::INFINITY), f64::INFINITY);
        assert_eq!(gelu(1.1e30), 1.1e30);
        assert_eq!(gelu(-1.1e30), 0.0);
        assert!(gelu(f64::NAN).is_nan());
        assert_eq!(gelu(0.0), 0.0);
        assert!(gelu(-30.0) < 0.0 && gelu(-30.0) > -1e-190);
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
