//! The math functions against the standards' special values and domains, in every format.
//!
//! `math_correct_rounding.rs` proves that every function returns the correctly rounded value
//! of what libm computes; this file checks the other half, that what is computed is the
//! function the standards define at the points where they pin the result down. Nothing here
//! is taken from lowp's own output or from the other test: the expected values are written
//! from the standards and from mathematics, and mapped into each format by rules derived
//! from the format's description.
//!
//! # What is checked
//!
//! 1. **Domains, on every input of every format** ([`domain_on_every_input`]). For every
//!    one-argument function and every bit pattern, the result is NaN exactly when the input is
//!    NaN, the input is outside the function's domain (the predicates in [`in_domain`],
//!    written from the definitions over the extended reals), or the format's rules below turn
//!    the exact result into NaN (a result too large for a format without infinities, a zero or
//!    negative result in the unsigned, zero-less `f8e8m0fnu`). That last case needs the size
//!    and sign of the exact result, which std's f64 functions (the platform's libm, not the
//!    `libm` crate lowp uses; std has no erfc, so `gelu` alone borrows the crate's) supply;
//!    each domain predicate is also checked against them, so a wrong predicate fails the test
//!    rather than silently agreeing with lowp. In FP6 and FP4,
//!    which have no NaN, an out-of-domain result must be the zero that stands for NaN there.
//! 2. **Special values** ([`special_values`]): a table of rows `(function, arguments, exact
//!    result)` from IEEE 754-2019 clause 9.2.1 and C11 Annex F (F.10), with the clause cited
//!    per group: signed zeros where the standard fixes them (odd functions keep -0), poles,
//!    limits at ±infinity, NaN cases, and results that are exact reals (`exp(0) = 1`,
//!    `log2(2^k) = k`, `sqrt(4^k) = 2^k`, `atan(±inf) = ±π/2` rounded, ...). A row is checked
//!    in a format when the format holds all of its arguments exactly (-0 is skipped in the
//!    `fnuz` formats, ±infinity in the formats without it, and so on); the test prints how
//!    many rows each format checked and fails if any format checked too few to mean anything.
//!    `recip`, `fract`, `to_degrees`, `to_radians`, `square`, `relu`, the two-argument `log`
//!    and the activation functions (`sigmoid`, `log_sigmoid`, `softplus`, `silu`, `softsign`,
//!    `tanh_shrink`, `gelu`) are not functions of either standard; their rows follow from
//!    their definitions (`1/x`, `x - trunc(x)`, `max(x, 0)`, `x·σ(x)`, ...), taking limits at
//!    ±infinity and IEEE 754 arithmetic (clauses 6.1, 6.3, 7 and 9.6) for the signs, which is
//!    cited instead.
//! 3. **Coverage** ([`every_one_argument_function_is_covered`]): every function of
//!    `lowp::math::Function::ALL` (the one list the methods are made from) is checked here,
//!    so a new function cannot go unchecked.
//!
//! # Exact results and irrational ones
//!
//! A row's result is either an exact real ([`Ideal::Exact`]: `1`, `3`, `2^-k`, ±0, ±inf, NaN)
//! or an irrational one given by an f64 constant ([`Ideal::Near`]: π/2, ln 2, ...). An exact
//! result that the format holds is expected bit for bit (found by value among all the format's
//! patterns, not by converting); one it does not hold is rounded by the rules below. An
//! irrational result is expected to be `T::from_f64` of its f64 constant. That is the
//! correctly rounded value of the real: the constant is within a few f64 ulps (2^-50
//! relative) of the real, and the test *checks*, row by row, that the reals 2^-40 (relative)
//! below and above the constant round to the same value, so no rounding boundary of the
//! format lies between the constant and the real. That it holds is no accident for formats of
//! at most 16 bits: a boundary there has at most 12 significant bits, and an irrational
//! number that close to such a short one would be a remarkable coincidence; but the check,
//! not the argument, is what the test relies on.
//!
//! # How an exact result maps into a format
//!
//! From the format's properties in `T::FORMAT` (`format.rs`) and the rules `from_f64` and the
//! math functions document (`types.rs`, the rounding note of every function in the `math`
//! module, `round.rs`), all for rounding to nearest:
//!
//! * **NaN** is NaN where the format has one (any sign and payload: IEEE 754-2019 §6.3 leaves
//!   the sign of a NaN result unspecified). FP6 and FP4 have none and give a zero in its
//!   place: a conversion gives the zero of the NaN's opposite sign, as ml_dtypes does, so
//!   there either zero is accepted; a math function converts every NaN result from one
//!   negative NaN (`Function::apply`), so its NaN results must be +0.
//! * **±infinity**, and a finite result beyond the overflow threshold (IEEE 754 §7.4: the
//!   result rounded with an unbounded exponent exceeds the largest finite value, i.e. it is
//!   above `MAX + ulp(MAX)/2`, or equal to it and the tie goes up: to even in general, up in
//!   `f8e8m0fnu`, which documents ties up), is ±infinity where the format has infinities,
//!   else NaN where it has a NaN (`f8e4m3fn`, the `fnuz` formats, `f8e8m0fnu`), else ±MAX
//!   (FP6 and FP4 saturate).
//! * **±0** is the zero of that sign where the format has -0, +0 in the `fnuz` formats (which
//!   have no -0), and NaN in `f8e8m0fnu` (which has no zero). A nonzero result at most half
//!   the smallest positive value underflows to that zero (the tie goes to the even zero);
//!   in `f8e8m0fnu` a positive result below its smallest value 2^-127 is 2^-127 ("a positive
//!   result below 2^-127 is 2^-127").
//! * **A negative result** (-inf included) is NaN in the unsigned `f8e8m0fnu`.
//! * **Any other result** is the format's value equal to it, or, where there is none, its
//!   rounding to nearest by `T::from_f64` (correctly rounded, `tests/rounding.rs`).
//!
//! [`rules_agree_with_from_f64`] checks these rules against `from_f64` on the special inputs,
//! so a misreading of the documentation shows up there, apart from the math functions.

use lowp::format::Format;
use std::collections::HashMap;
use std::f64::consts::{
    E, FRAC_1_SQRT_2, FRAC_PI_2, FRAC_PI_3, FRAC_PI_4, FRAC_PI_6, LN_2, LOG10_2, PI, SQRT_2,
};

const INF: f64 = f64::INFINITY;
const NAN: f64 = f64::NAN;

type Un = fn(u32) -> u32;
type Bin = fn(u32, u32) -> u32;
type Tern = fn(u32, u32, u32) -> u32;

/// One format's type, seen through its bits.
struct Ty {
    name: &'static str,
    fmt: Format,
    to_f64: fn(u32) -> f64,
    from_f64: fn(f64) -> u32,
    unary: Vec<(&'static str, Un)>,
    binary: Vec<(&'static str, Bin)>,
    mul_add: Tern,
    /// Every non-NaN value of the format (by its f64 bits, so ±0 differ) and its pattern.
    values: HashMap<u64, u32>,
}

macro_rules! one_arg {
    ($t:ident: $($m:ident),*) => {
        vec![$((
            stringify!($m),
            (|b: u32| lowp::$t::from_bits(b as _).$m().to_bits() as u32) as Un,
        )),*]
    };
}

macro_rules! two_arg {
    ($t:ident: $($m:ident),*) => {
        vec![$((
            stringify!($m),
            (|a: u32, b: u32| {
                lowp::$t::from_bits(a as _).$m(lowp::$t::from_bits(b as _)).to_bits() as u32
            }) as Bin,
        )),*]
    };
}

macro_rules! ty {
    ($t:ident) => {
        Ty::new(
            stringify!($t),
            lowp::$t::FORMAT,
            |b| lowp::$t::from_bits(b as _).to_f64(),
            |x| lowp::$t::from_f64(x).to_bits() as u32,
            one_arg!($t: sqrt, rsqrt, recip, exp, exp2, exp_m1, ln, log2, log10, ln_1p, sin, cos,
                tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, cbrt, to_degrees,
                to_radians, floor, ceil, round, round_ties_even, trunc, fract, abs, square, relu,
                sigmoid, log_sigmoid, softplus, silu, softsign, tanh_shrink, gelu),
            two_arg!($t: powf, atan2, hypot, log),
            |a, b, c| {
                let t = |x: u32| lowp::$t::from_bits(x as _);
                t(a).mul_add(t(b), t(c)).to_bits() as u32
            },
        )
    };
}

/// Every type, from the crate's own list of formats, so a new format is checked too.
macro_rules! all_types {
    ($(($t:ident, $($rest:tt)*))*) => {
        vec![$(ty!($t)),*]
    };
}

fn all_types() -> Vec<Ty> {
    let types: Vec<Ty> = lowp::for_each_format!(all_types, list);
    assert_eq!(types.len(), lowp::Format::ALL.len());
    types
}

impl Ty {
    fn new(
        name: &'static str,
        fmt: Format,
        to_f64: fn(u32) -> f64,
        from_f64: fn(f64) -> u32,
        unary: Vec<(&'static str, Un)>,
        binary: Vec<(&'static str, Bin)>,
        mul_add: Tern,
    ) -> Ty {
        let values = (0..1u32 << fmt.total_bits())
            .filter(|&b| !fmt.is_nan_bits(b))
            .map(|b| (to_f64(b).to_bits(), b))
            .collect();
        Ty {
            name,
            fmt,
            to_f64,
            from_f64,
            unary,
            binary,
            mul_add,
            values,
        }
    }

    fn count(&self) -> u32 {
        1 << self.fmt.total_bits()
    }

    /// The pattern holding exactly `x` (NaN: the canonical NaN), if the format has one.
    fn bits_of(&self, x: f64) -> Option<u32> {
        if x.is_nan() {
            self.fmt.nan_bits()
        } else {
            self.values.get(&x.to_bits()).copied()
        }
    }

    fn show(&self, b: u32) -> String {
        format!("{:e} ({:#x})", (self.to_f64)(b), b)
    }

    fn unary(&self, f: &str) -> Un {
        match self.unary.iter().find(|(n, _)| *n == f) {
            Some(&(_, g)) => g,
            None => panic!("{f} is not a one-argument function"),
        }
    }

    fn call(&self, f: &str, args: &[u32]) -> u32 {
        match *args {
            [x] => self.unary(f)(x),
            [x, y] => match self.binary.iter().find(|(n, _)| *n == f) {
                Some(&(_, g)) => g(x, y),
                None => panic!("{f} is not a two-argument function"),
            },
            [x, y, z] if f == "mul_add" => (self.mul_add)(x, y, z),
            _ => panic!("no function {f} of {} arguments", args.len()),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The format's rules: an exact (or irrational) result, as the format must give it.

/// A row's result: an exact real, or an irrational real given by an f64 within 2^-50 of it.
#[derive(Clone, Copy, Debug)]
enum Ideal {
    Exact(f64),
    Near(f64),
}

/// What a result must be in one format.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Want {
    /// A NaN of any sign and payload (IEEE 754-2019 §6.3 leaves a NaN result's sign
    /// unspecified); in FP6 and FP4, which have no NaN, a zero of either sign, the NaN's
    /// stand-in there (its sign follows the NaN's, so it is unspecified too).
    Nan,
    Bits(u32),
}

/// An infinite (or overflowing) result of sign `neg`.
fn infinity(fmt: &Format, neg: bool) -> Want {
    let sign = if neg { fmt.sign_mask() } else { 0 };
    match fmt.infinity_bits() {
        Some(inf) => Want::Bits(sign | inf),
        None if fmt.has_nan() => Want::Nan,
        // FP6 and FP4 saturate.
        None => Want::Bits(sign | fmt.max_finite_bits()),
    }
}

/// Whether the finite magnitude `mag` rounds (to nearest, unbounded exponent) above `MAX`.
fn overflows(ty: &Ty, mag: f64) -> bool {
    let fmt = &ty.fmt;
    let max = (ty.to_f64)(fmt.max_finite_bits());
    let half_ulp = 2f64.powi(fmt.max_exponent() - fmt.mantissa_bits as i32 - 1);
    let threshold = max + half_ulp; // exact: both are small powers of two times short integers
    // At the threshold the tie goes to the even neighbour: above MAX when MAX's last mantissa
    // bit is odd. With no mantissa bits (E8M0) the format documents ties up.
    mag > threshold
        || (mag == threshold && (fmt.mantissa_bits == 0 || fmt.max_finite_bits() & 1 == 1))
}

/// The result `want` must have in `ty`'s format (see the module docs for the rules).
fn expect(ty: &Ty, want: Ideal) -> Want {
    let fmt = &ty.fmt;
    let (v, near) = match want {
        Ideal::Exact(v) => (v, false),
        Ideal::Near(v) => (v, true),
    };
    if v.is_nan() {
        return Want::Nan;
    }
    let neg = v.is_sign_negative();
    if neg && !fmt.signed {
        // E8M0 is unsigned: negative results, -0 and -inf have no pattern.
        return Want::Nan;
    }
    let sign = if neg { fmt.sign_mask() } else { 0 };
    let zero = || {
        if !fmt.has_zero() {
            Want::Nan
        } else if fmt.has_negative_zero() {
            Want::Bits(sign)
        } else {
            Want::Bits(0) // fnuz: -0 is +0
        }
    };
    if v == 0.0 {
        return zero();
    }
    let mag = v.abs();
    if mag.is_infinite() || overflows(ty, mag) {
        return infinity(fmt, neg);
    }
    if let (false, Some(b)) = (near, ty.bits_of(v)) {
        return Want::Bits(b);
    }
    let min = (ty.to_f64)(fmt.min_positive_subnormal_bits());
    if fmt.has_zero() && mag <= min / 2.0 {
        return zero();
    }
    if !fmt.has_zero() && mag < min {
        return Want::Bits(fmt.min_positive_subnormal_bits());
    }
    if near {
        // The real lies within 2^-50 of v; if no boundary lies within 2^-40, rounding v is
        // rounding the real.
        let lo = (ty.from_f64)(v - mag * 2f64.powi(-40));
        let hi = (ty.from_f64)(v + mag * 2f64.powi(-40));
        assert_eq!(
            lo, hi,
            "{}: the irrational result {v:e} is too close to a rounding boundary to be settled \
             from an f64 constant",
            ty.name
        );
    }
    Want::Bits((ty.from_f64)(v))
}

/// Whether `got` is what `want` allows. A math function's NaN result in FP6 or FP4 must be
/// +0 (the functions convert every NaN result from one negative NaN, which these formats turn
/// into +0); a conversion's may be either zero, after the NaN's sign.
fn matches_want(ty: &Ty, got: u32, want: Want, function_result: bool) -> bool {
    let fmt = &ty.fmt;
    match want {
        Want::Nan if fmt.has_nan() => fmt.is_nan_bits(got),
        Want::Nan if function_result => got == 0,
        Want::Nan => got & fmt.magnitude_mask() == 0,
        Want::Bits(b) => got == b,
    }
}

#[test]
fn rules_agree_with_from_f64() {
    // The mapping above is read from the documentation; converting the same values with
    // from_f64 must agree, or the reading (or the conversion) is wrong.
    let mut failures = Vec::new();
    for ty in all_types() {
        let fmt = &ty.fmt;
        let max = (ty.to_f64)(fmt.max_finite_bits());
        let min = (ty.to_f64)(fmt.min_positive_subnormal_bits());
        let threshold = max + 2f64.powi(fmt.max_exponent() - fmt.mantissa_bits as i32 - 1);
        let mut inputs = vec![0.0, INF, NAN, 1e300, 1e-300, min / 2.0, min * 0.25, max];
        for t in [
            threshold,
            threshold * (1.0 + 1e-9),
            threshold * (1.0 - 1e-9),
        ] {
            inputs.push(t);
        }
        for x in inputs.clone() {
            inputs.push(-x);
        }
        for x in inputs {
            let want = expect(&ty, Ideal::Exact(x));
            let got = (ty.from_f64)(x);
            if !matches_want(&ty, got, want, false) {
                failures.push(format!(
                    "{}: from_f64({x:e}) = {}, the rules say {want:?}",
                    ty.name,
                    ty.show(got)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Domains.

/// Whether the non-NaN `x` is in the domain of `f` over the extended reals, where IEEE 754
/// and C11 Annex F give a number (a zero and an infinity count as numbers).
fn in_domain(f: &str, x: f64) -> bool {
    match f {
        // Defined for x >= 0; IEEE 754 §5.4.1 and §9.2.1 give sqrt(-0) = -0,
        // rSqrt(±0) = ±inf and log(±0) = -inf, so -0 is inside (and -0 >= 0 holds).
        "sqrt" | "rsqrt" | "ln" | "log2" | "log10" => x >= 0.0,
        // ln(1 + x) needs 1 + x >= 0; ln_1p(-1) = -inf is the pole.
        "ln_1p" => x >= -1.0,
        // The inverse sine and cosine are defined on [-1, 1]; atanh too, with poles at ±1.
        "asin" | "acos" | "atanh" => x.abs() <= 1.0,
        // acosh is the inverse of cosh on [0, inf), whose range is [1, inf].
        "acosh" => x >= 1.0,
        // Periodic functions have no limit at infinity; x - trunc(x) is inf - inf there.
        "sin" | "cos" | "tan" | "fract" => x.is_finite(),
        // Defined everywhere (1/±0 = ±inf, exp(-inf) = 0, -inf·σ(-inf) -> -0, ...).
        "recip" | "exp" | "exp2" | "exp_m1" | "atan" | "sinh" | "cosh" | "tanh" | "asinh"
        | "cbrt" | "to_degrees" | "to_radians" | "floor" | "ceil" | "round" | "round_ties_even"
        | "trunc" | "abs" | "square" | "relu" | "sigmoid" | "log_sigmoid" | "softplus" | "silu"
        | "softsign" | "tanh_shrink" | "gelu" => true,
        _ => panic!("no domain written for {f}: add it to in_domain"),
    }
}

/// std's f64 version of `f` (the platform's libm, not the `libm` crate lowp uses): the size
/// and sign of the exact result, for the format rules that turn it into NaN.
fn reference(f: &str) -> fn(f64) -> f64 {
    match f {
        "sqrt" => f64::sqrt,
        "rsqrt" => |x| 1.0 / x.sqrt(),
        "recip" => f64::recip,
        "exp" => f64::exp,
        "exp2" => f64::exp2,
        "exp_m1" => f64::exp_m1,
        "ln" => f64::ln,
        "log2" => f64::log2,
        "log10" => f64::log10,
        "ln_1p" => f64::ln_1p,
        "sin" => f64::sin,
        "cos" => f64::cos,
        "tan" => f64::tan,
        "asin" => f64::asin,
        "acos" => f64::acos,
        "atan" => f64::atan,
        "sinh" => f64::sinh,
        "cosh" => f64::cosh,
        "tanh" => f64::tanh,
        "asinh" => f64::asinh,
        "acosh" => f64::acosh,
        "atanh" => f64::atanh,
        "cbrt" => f64::cbrt,
        "to_degrees" => f64::to_degrees,
        "to_radians" => f64::to_radians,
        "floor" => f64::floor,
        "ceil" => f64::ceil,
        "round" => f64::round,
        "round_ties_even" => f64::round_ties_even,
        "trunc" => f64::trunc,
        "fract" => f64::fract,
        "abs" => f64::abs,
        "square" => |x| x * x,
        "relu" => |x| if x > 0.0 { x } else { 0.0 },
        // The activations in forms that reach the right limits at ±inf, never inf/inf or
        // inf·0 (only the sign, zero-ness and size of the result are used, so an exp that
        // overflows to give 1/inf = +0 for a tiny positive result is harmless: both are
        // numbers, not NaN, in every format that has inputs there).
        "sigmoid" => |x| 1.0 / (1.0 + (-x).exp()),
        "log_sigmoid" => |x| x.min(0.0) - (-x.abs()).exp().ln_1p(),
        "softplus" => |x| x.max(0.0) + (-x.abs()).exp().ln_1p(),
        "silu" => |x| {
            if x == -INF {
                -0.0
            } else {
                x / (1.0 + (-x).exp())
            }
        },
        "softsign" => |x| {
            if x.is_infinite() {
                x.signum()
            } else {
                x / (1.0 + x.abs())
            }
        },
        // Near 0, x - tanh(x) cancels to 0 in f64; the series' first term x³/3 keeps its sign.
        "tanh_shrink" => |x| {
            if x.abs() < 1e-4 {
                x * x * x / 3.0
            } else {
                x - x.tanh()
            }
        },
        // std has no erfc; libm's (the library lowp uses) only decides sign and size here.
        "gelu" => |x| {
            if x == -INF {
                -0.0
            } else {
                x / 2.0 * libm::erfc(-x / SQRT_2)
            }
        },
        _ => panic!("no reference for {f}"),
    }
}

#[test]
fn domain_on_every_input() {
    let mut failures = Vec::new();
    let mut checked = 0u64;
    for ty in all_types() {
        for &(f, g) in &ty.unary {
            let reference = reference(f);
            for b in 0..ty.count() {
                let x = (ty.to_f64)(b);
                let got = g(b);
                let want_nan = if x.is_nan() {
                    true
                } else {
                    let inside = in_domain(f, x);
                    let y = reference(x);
                    if inside == y.is_nan() {
                        failures.push(format!(
                            "{}: {f}({}): the domain predicate says {inside}, std's {f} gives \
                             {y:e}",
                            ty.name,
                            ty.show(b)
                        ));
                    }
                    // Inside the domain the result is NaN only where the format's rules make
                    // it so (overflow without infinities, nonpositive results in E8M0).
                    !inside || expect(&ty, Ideal::Exact(y)) == Want::Nan
                };
                checked += 1;
                let ok = if ty.fmt.has_nan() {
                    ty.fmt.is_nan_bits(got) == want_nan
                } else {
                    // No NaN: an undefined result is +0 standing for NaN, and a defined one
                    // may be any number, so only the first can be checked.
                    !want_nan || got == 0
                };
                if !ok {
                    failures.push(format!(
                        "{}: {f}({}) = {}, expected {}NaN",
                        ty.name,
                        ty.show(b),
                        ty.show(got),
                        if want_nan { "" } else { "not " }
                    ));
                }
            }
        }
    }
    println!("domain: {checked} results checked");
    let shown: Vec<&str> = failures.iter().take(60).map(String::as_str).collect();
    assert!(
        failures.is_empty(),
        "{} domain failures:\n{}",
        failures.len(),
        shown.join("\n")
    );
}

#[test]
fn every_one_argument_function_is_covered() {
    let ty = &all_types()[0];
    let here: Vec<&str> = ty.unary.iter().map(|&(f, _)| f).collect();
    let missing: Vec<&str> = lowp::math::Function::ALL
        .iter()
        .map(|f| f.name())
        .filter(|f| !here.contains(f))
        .collect();
    assert!(
        missing.is_empty(),
        "functions of lowp::math::Function with no domain predicate or special-value rows in \
         this test: {missing:?}"
    );
    for f in here {
        in_domain(f, 1.0); // panics for a function without a predicate
        reference(f);
    }
}

// ---------------------------------------------------------------------------------------------
// The special values.

/// One row: a function, its arguments, and the exact result.
struct Row {
    f: &'static str,
    args: Vec<f64>,
    want: Ideal,
}

fn ex(v: f64) -> Ideal {
    Ideal::Exact(v)
}

fn near(v: f64) -> Ideal {
    Ideal::Near(v)
}

/// Rows from the standards, for the format `fmt` (which only picks the ε of one `mul_add`
/// row; every row is checked in every format that holds its arguments).
fn rows(fmt: &Format) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut r = |f: &'static str, args: &[f64], want: Ideal| {
        rows.push(Row {
            f,
            args: args.to_vec(),
            want,
        })
    };
    let p2 = |k: i32| 2f64.powi(k);

    // sqrt: IEEE 754-2019 §5.4.1 (squareRoot: sqrt(-0) = -0, negative operands invalid),
    // C11 F.10.4.5 (sqrt(±0) = ±0, sqrt(+inf) = +inf, x < 0 NaN). Exact on perfect squares.
    for (x, y) in [
        (0.0, 0.0),
        (-0.0, -0.0),
        (INF, INF),
        (-INF, NAN),
        (-1.0, NAN),
        (-0.5, NAN),
    ] {
        r("sqrt", &[x], ex(y));
    }
    for k in -80..=80 {
        r("sqrt", &[p2(2 * k)], ex(p2(k)));
    }
    r("sqrt", &[9.0], ex(3.0));
    r("sqrt", &[2.0], near(SQRT_2));
    // rSqrt: IEEE 754-2019 §9.2.1: rSqrt(±0) = ±inf (divideByZero), rSqrt(+inf) = +0,
    // x < 0 invalid.
    for (x, y) in [
        (0.0, INF),
        (-0.0, -INF),
        (INF, 0.0),
        (-INF, NAN),
        (-1.0, NAN),
        (-4.0, NAN),
    ] {
        r("rsqrt", &[x], ex(y));
    }
    for k in -80..=80 {
        r("rsqrt", &[p2(2 * k)], ex(p2(-k)));
    }
    r("rsqrt", &[2.0], near(FRAC_1_SQRT_2));
    // recip is 1/x: IEEE 754-2019 §7.3 (1/±0 = ±inf, divideByZero) and §6.1 (1/±inf = ±0),
    // the sign of a quotient being the exclusive or of the signs (§6.3).
    for (x, y) in [(0.0, INF), (-0.0, -INF), (INF, 0.0), (-INF, -0.0)] {
        r("recip", &[x], ex(y));
    }
    for k in -160..=160 {
        r("recip", &[p2(k)], ex(p2(-k)));
        r("recip", &[-p2(k)], ex(-p2(-k)));
    }
    r("recip", &[3.0], near(1.0 / 3.0));

    // exp, exp2, expm1: IEEE 754-2019 §9.2.1 and C11 F.10.3.1-3: exp(±0) = 1, exp(-inf) = +0,
    // exp(+inf) = +inf; expm1(±0) = ±0, expm1(-inf) = -1. exp2 of an integer is exact.
    for f in ["exp", "exp2"] {
        for (x, y) in [(0.0, 1.0), (-0.0, 1.0), (-INF, 0.0), (INF, INF)] {
            r(f, &[x], ex(y));
        }
    }
    for k in -160..=160 {
        r("exp2", &[k as f64], ex(p2(k)));
    }
    r("exp2", &[0.5], near(SQRT_2));
    r("exp", &[1.0], near(E));
    for (x, y) in [(0.0, 0.0), (-0.0, -0.0), (-INF, -1.0), (INF, INF)] {
        r("exp_m1", &[x], ex(y));
    }

    // log, log2, log10: IEEE 754-2019 §9.2.1 and C11 F.10.3.7, .8, .10: log(±0) = -inf
    // (divideByZero), log(1) = +0, log(x < 0) NaN, log(+inf) = +inf. log2 of 2^k and log10
    // of 10^k are exact.
    for f in ["ln", "log2", "log10"] {
        for (x, y) in [
            (0.0, -INF),
            (-0.0, -INF),
            (1.0, 0.0),
            (INF, INF),
            (-1.0, NAN),
            (-0.5, NAN),
            (-INF, NAN),
        ] {
            r(f, &[x], ex(y));
        }
    }
    for k in -160..=160 {
        r("log2", &[p2(k)], ex(k as f64));
    }
    for (k, x) in [(1, 10.0), (2, 100.0), (3, 1000.0), (4, 10000.0)] {
        r("log10", &[x], ex(k as f64));
    }
    r("ln", &[2.0], near(LN_2));
    r("log10", &[2.0], near(LOG10_2));
    // log1p: IEEE 754-2019 §9.2.1 (logp1) and C11 F.10.3.9: log1p(±0) = ±0, log1p(-1) = -inf,
    // log1p(x < -1) NaN, log1p(+inf) = +inf.
    for (x, y) in [
        (0.0, 0.0),
        (-0.0, -0.0),
        (-1.0, -INF),
        (-2.0, NAN),
        (-INF, NAN),
        (INF, INF),
    ] {
        r("ln_1p", &[x], ex(y));
    }
    r("ln_1p", &[1.0], near(LN_2));

    // sin, cos, tan: IEEE 754-2019 §9.2.1 and C11 F.10.1.5-7: sin(±0) = ±0, tan(±0) = ±0,
    // cos(±0) = 1; all three are NaN (invalid) at ±inf.
    for f in ["sin", "tan"] {
        for (x, y) in [(0.0, 0.0), (-0.0, -0.0), (INF, NAN), (-INF, NAN)] {
            r(f, &[x], ex(y));
        }
    }
    for (x, y) in [(0.0, 1.0), (-0.0, 1.0), (INF, NAN), (-INF, NAN)] {
        r("cos", &[x], ex(y));
    }
    // asin, acos, atan: C11 F.10.1.1-3 and IEEE 754-2019 §9.2.1: asin(±0) = ±0, acos(1) = +0,
    // both NaN for |x| > 1; atan(±0) = ±0, atan(±inf) = ±π/2. The other exact angles
    // (asin(±1) = ±π/2, acos(-1) = π, acos(0) = π/2, atan(±1) = ±π/4, ...) are the
    // definitions' values, rounded.
    for (x, y) in [
        (0.0, ex(0.0)),
        (-0.0, ex(-0.0)),
        (1.0, near(FRAC_PI_2)),
        (-1.0, near(-FRAC_PI_2)),
        (0.5, near(FRAC_PI_6)),
        (-0.5, near(-FRAC_PI_6)),
        (1.5, ex(NAN)),
        (-1.5, ex(NAN)),
        (2.0, ex(NAN)),
        (INF, ex(NAN)),
        (-INF, ex(NAN)),
    ] {
        r("asin", &[x], y);
    }
    for (x, y) in [
        (1.0, ex(0.0)),
        (-1.0, near(PI)),
        (0.0, near(FRAC_PI_2)),
        (-0.0, near(FRAC_PI_2)),
        (0.5, near(FRAC_PI_3)),
        (1.5, ex(NAN)),
        (-2.0, ex(NAN)),
        (INF, ex(NAN)),
        (-INF, ex(NAN)),
    ] {
        r("acos", &[x], y);
    }
    for (x, y) in [
        (0.0, ex(0.0)),
        (-0.0, ex(-0.0)),
        (INF, near(FRAC_PI_2)),
        (-INF, near(-FRAC_PI_2)),
        (1.0, near(FRAC_PI_4)),
        (-1.0, near(-FRAC_PI_4)),
    ] {
        r("atan", &[x], y);
    }

    // Hyperbolic functions: C11 F.10.2.1-6 and IEEE 754-2019 §9.2.1: sinh, tanh, asinh and
    // atanh are odd and keep ±0; sinh(±inf) = ±inf, cosh(±0) = 1, cosh(±inf) = +inf,
    // tanh(±inf) = ±1, asinh(±inf) = ±inf; acosh(1) = +0, acosh(+inf) = +inf, acosh(x < 1)
    // NaN; atanh(±1) = ±inf (divideByZero), atanh(|x| > 1) NaN.
    for f in ["sinh", "asinh"] {
        for (x, y) in [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, -INF)] {
            r(f, &[x], ex(y));
        }
    }
    for (x, y) in [(0.0, 1.0), (-0.0, 1.0), (INF, INF), (-INF, INF)] {
        r("cosh", &[x], ex(y));
    }
    for (x, y) in [(0.0, 0.0), (-0.0, -0.0), (INF, 1.0), (-INF, -1.0)] {
        r("tanh", &[x], ex(y));
    }
    for (x, y) in [
        (1.0, 0.0),
        (INF, INF),
        (0.5, NAN),
        (0.0, NAN),
        (-0.0, NAN),
        (-1.0, NAN),
        (-2.0, NAN),
        (-INF, NAN),
    ] {
        r("acosh", &[x], ex(y));
    }
    for (x, y) in [
        (0.0, 0.0),
        (-0.0, -0.0),
        (1.0, INF),
        (-1.0, -INF),
        (1.5, NAN),
        (-2.0, NAN),
        (INF, NAN),
        (-INF, NAN),
    ] {
        r("atanh", &[x], ex(y));
    }

    // cbrt: C11 F.10.4.1: cbrt(±0) = ±0, cbrt(±inf) = ±inf; odd, and exact on perfect cubes.
    for (x, y) in [
        (0.0, 0.0),
        (-0.0, -0.0),
        (INF, INF),
        (-INF, -INF),
        (27.0, 3.0),
    ] {
        r("cbrt", &[x], ex(y));
    }
    for k in -50..=50 {
        r("cbrt", &[p2(3 * k)], ex(p2(k)));
        r("cbrt", &[-p2(3 * k)], ex(-p2(k)));
    }
    r("cbrt", &[-27.0], ex(-3.0));

    // to_degrees and to_radians multiply by a positive constant: IEEE 754-2019 §6.1 and §6.3
    // (±0 and ±inf keep their sign). to_radians(180) is π, to_degrees(1) is 180/π.
    for f in ["to_degrees", "to_radians"] {
        for (x, y) in [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, -INF)] {
            r(f, &[x], ex(y));
        }
    }
    r("to_radians", &[180.0], near(PI));
    r("to_radians", &[-180.0], near(-PI));
    r("to_radians", &[90.0], near(FRAC_PI_2));
    r("to_degrees", &[1.0], near(180.0 / PI));

    // The rounding functions: C11 F.10.6.1, .2, .6, .8 and roundeven (C23 F.10.6.9): ±0 and
    // ±inf are returned unchanged; IEEE 754-2019 §6.3: the result of roundToIntegral has the
    // sign of the operand, so a zero result from a negative operand is -0. The integer
    // beyond MAX (f8e3m4: ceil(15.5) = 16) overflows by the format's rules.
    for f in ["floor", "ceil", "round", "round_ties_even", "trunc"] {
        for (x, y) in [
            (0.0, 0.0),
            (-0.0, -0.0),
            (INF, INF),
            (-INF, -INF),
            (3.0, 3.0),
        ] {
            r(f, &[x], ex(y));
        }
    }
    for (x, y) in [
        (0.5, 0.0),
        (-0.5, -1.0),
        (1.5, 1.0),
        (-1.5, -2.0),
        (-7.5, -8.0),
    ] {
        r("floor", &[x], ex(y));
    }
    for (x, y) in [
        (0.5, 1.0),
        (-0.5, -0.0),
        (0.25, 1.0),
        (-0.25, -0.0),
        (1.5, 2.0),
        (-1.5, -1.0),
        (7.5, 8.0),
        (15.5, 16.0),
    ] {
        r("ceil", &[x], ex(y));
    }
    // round: halfway cases away from zero (C11 7.12.9.6).
    for (x, y) in [
        (0.5, 1.0),
        (-0.5, -1.0),
        (0.25, 0.0),
        (-0.25, -0.0),
        (1.5, 2.0),
        (2.5, 3.0),
        (-2.5, -3.0),
        (15.5, 16.0),
    ] {
        r("round", &[x], ex(y));
    }
    // roundeven / roundToIntegralTiesToEven (IEEE 754-2019 §5.9): halfway cases to even.
    for (x, y) in [
        (0.5, 0.0),
        (-0.5, -0.0),
        (1.5, 2.0),
        (2.5, 2.0),
        (-2.5, -2.0),
        (3.5, 4.0),
        (-0.25, -0.0),
    ] {
        r("round_ties_even", &[x], ex(y));
    }
    for (x, y) in [(0.5, 0.0), (-0.5, -0.0), (1.75, 1.0), (-1.5, -1.0)] {
        r("trunc", &[x], ex(y));
    }
    // fract is std's x - trunc(x) (not C's modf, which keeps the sign of a zero and gives
    // ±0 at ±inf): an exactly zero difference is +0 (IEEE 754-2019 §6.3), inf - inf is NaN
    // (§7.2).
    for (x, y) in [
        (0.0, 0.0),
        (-0.0, 0.0),
        (2.0, 0.0),
        (-2.0, 0.0),
        (1.25, 0.25),
        (-1.25, -0.25),
        (INF, NAN),
        (-INF, NAN),
    ] {
        r("fract", &[x], ex(y));
    }

    // abs: IEEE 754-2019 §5.5.1 (the sign bit cleared: abs(-0) = +0, abs(-inf) = +inf).
    for (x, y) in [
        (0.0, 0.0),
        (-0.0, 0.0),
        (INF, INF),
        (-INF, INF),
        (-2.0, 2.0),
        (2.0, 2.0),
    ] {
        r("abs", &[x], ex(y));
    }
    // square is x·x: the product of two like signs is positive (§6.3), so square(-0) = +0.
    for (x, y) in [
        (0.0, 0.0),
        (-0.0, 0.0),
        (INF, INF),
        (-INF, INF),
        (3.0, 9.0),
        (-3.0, 9.0),
    ] {
        r("square", &[x], ex(y));
    }
    for k in -80..=80 {
        r("square", &[-p2(k)], ex(p2(2 * k)));
    }
    // relu is maximum(x, +0): IEEE 754-2019 §9.6 orders -0 below +0, so relu(-0) = +0.
    for (x, y) in [
        (0.0, 0.0),
        (-0.0, 0.0),
        (-1.0, 0.0),
        (-INF, 0.0),
        (INF, INF),
        (2.0, 2.0),
        (0.5, 0.5),
    ] {
        r("relu", &[x], ex(y));
    }
    // The activations, from their definitions and their limits at ±inf: σ(x) = 1/(1 + e^-x)
    // tends to 1 and to 0 from above, σ(0) = 1/2; ln σ(x) tends to 0 from below at +inf
    // (-0) and to -inf at -inf, ln σ(0) = -ln 2; x·σ(x) tends to 0 from below at -inf (-0)
    // and keeps the sign of a zero (a product, §6.3); x/(1 + |x|) tends to ±1 and keeps ±0;
    // x - tanh(x) ~ x³/3 near 0 and ~ x at ±inf; x·Φ(x) like x·σ(x).
    for (x, y) in [(INF, 1.0), (-INF, 0.0), (0.0, 0.5), (-0.0, 0.5)] {
        r("sigmoid", &[x], ex(y));
    }
    for (x, y) in [
        (INF, ex(-0.0)),
        (-INF, ex(-INF)),
        (0.0, near(-LN_2)),
        (-0.0, near(-LN_2)),
    ] {
        r("log_sigmoid", &[x], y);
    }
    // ln(1 + e^x) tends to +inf at +inf and to 0 from above at -inf; ln(1 + e^0) = ln 2.
    for (x, y) in [
        (INF, ex(INF)),
        (-INF, ex(0.0)),
        (0.0, near(LN_2)),
        (-0.0, near(LN_2)),
    ] {
        r("softplus", &[x], y);
    }
    for f in ["silu", "gelu"] {
        for (x, y) in [(INF, INF), (-INF, -0.0), (0.0, 0.0), (-0.0, -0.0)] {
            r(f, &[x], ex(y));
        }
    }
    for (x, y) in [
        (INF, 1.0),
        (-INF, -1.0),
        (0.0, 0.0),
        (-0.0, -0.0),
        (1.0, 0.5),
        (-1.0, -0.5),
        (3.0, 0.75),
        (-3.0, -0.75),
    ] {
        r("softsign", &[x], ex(y));
    }
    for (x, y) in [(0.0, 0.0), (-0.0, -0.0), (INF, INF), (-INF, -INF)] {
        r("tanh_shrink", &[x], ex(y));
    }

    // pow: IEEE 754-2019 §9.2.1 and C11 F.10.4.4.
    for (x, y, z) in [
        // pow(±0, y) is ±inf for an odd integer y < 0, +inf for other y < 0 (-inf included),
        (0.0, -3.0, INF),
        (-0.0, -3.0, -INF),
        (0.0, -1.0, INF),
        (-0.0, -1.0, -INF),
        (0.0, -2.0, INF),
        (-0.0, -2.0, INF),
        (-0.0, -0.5, INF),
        (-0.0, -INF, INF),
        (0.0, -INF, INF),
        // ±0 for an odd integer y > 0, +0 for other y > 0 (+inf included);
        (0.0, 3.0, 0.0),
        (-0.0, 3.0, -0.0),
        (-0.0, 1.0, -0.0),
        (-0.0, 2.0, 0.0),
        (-0.0, 0.5, 0.0),
        (-0.0, INF, 0.0),
        // pow(-1, ±inf) = 1, pow(+1, y) = 1 for every y, even NaN;
        (-1.0, INF, 1.0),
        (-1.0, -INF, 1.0),
        (1.0, NAN, 1.0),
        (1.0, INF, 1.0),
        (1.0, -3.0, 1.0),
        (1.0, 0.5, 1.0),
        // pow(x, ±0) = 1 for every x, even NaN;
        (NAN, 0.0, 1.0),
        (NAN, -0.0, 1.0),
        (0.0, 0.0, 1.0),
        (-0.0, -0.0, 1.0),
        (INF, 0.0, 1.0),
        (-INF, -0.0, 1.0),
        (-2.0, 0.0, 1.0),
        // a finite x < 0 to a finite non-integer power is NaN (invalid);
        (-2.0, 0.5, NAN),
        (-1.0, 1.5, NAN),
        // |x| < 1 to -inf is +inf and to +inf is +0; |x| > 1 the reverse;
        (0.5, -INF, INF),
        (-0.5, -INF, INF),
        (0.5, INF, 0.0),
        (-0.5, INF, 0.0),
        (2.0, -INF, 0.0),
        (-2.0, -INF, 0.0),
        (2.0, INF, INF),
        (-2.0, INF, INF),
        // pow(-inf, y): -0 for an odd integer y < 0, +0 for other y < 0, -inf for an odd
        // integer y > 0, +inf for other y > 0; pow(+inf, y) is +0 for y < 0, +inf for y > 0;
        (-INF, -3.0, -0.0),
        (-INF, -2.0, 0.0),
        (-INF, -0.5, 0.0),
        (-INF, 3.0, -INF),
        (-INF, 2.0, INF),
        (-INF, 0.5, INF),
        (INF, -1.0, 0.0),
        (INF, 0.5, INF),
        // otherwise a NaN argument gives NaN;
        (NAN, 1.0, NAN),
        (2.0, NAN, NAN),
        // and exact powers are exact.
        (3.0, 2.0, 9.0),
        (2.0, -1.0, 0.5),
        (4.0, 0.5, 2.0),
        (-2.0, 3.0, -8.0),
        (-2.0, -1.0, -0.5),
        (2.0, 10.0, 1024.0),
    ] {
        r("powf", &[x, y], ex(z));
    }

    // atan2: C11 F.10.1.4 (IEEE 754-2019 §9.2.1 the same).
    let pi3_4 = 3.0 * FRAC_PI_4;
    for (y, x, z) in [
        // atan2(±0, -0) = ±π, atan2(±0, +0) = ±0, atan2(±0, x < 0) = ±π, atan2(±0, x > 0) = ±0;
        (0.0, -0.0, near(PI)),
        (-0.0, -0.0, near(-PI)),
        (0.0, 0.0, ex(0.0)),
        (-0.0, 0.0, ex(-0.0)),
        (0.0, -1.0, near(PI)),
        (-0.0, -1.0, near(-PI)),
        (0.0, -INF, near(PI)),
        (-0.0, -INF, near(-PI)),
        (0.0, 1.0, ex(0.0)),
        (-0.0, 1.0, ex(-0.0)),
        (0.0, INF, ex(0.0)),
        (-0.0, INF, ex(-0.0)),
        // atan2(y, ±0) = -π/2 for y < 0, π/2 for y > 0;
        (-1.0, 0.0, near(-FRAC_PI_2)),
        (-1.0, -0.0, near(-FRAC_PI_2)),
        (1.0, 0.0, near(FRAC_PI_2)),
        (2.0, -0.0, near(FRAC_PI_2)),
        // atan2(±y, -inf) = ±π and atan2(±y, +inf) = ±0 for finite y > 0;
        (1.0, -INF, near(PI)),
        (-1.0, -INF, near(-PI)),
        (1.0, INF, ex(0.0)),
        (-2.0, INF, ex(-0.0)),
        // atan2(±inf, x) = ±π/2 for finite x;
        (INF, 1.0, near(FRAC_PI_2)),
        (-INF, -2.0, near(-FRAC_PI_2)),
        (INF, 0.0, near(FRAC_PI_2)),
        (-INF, -0.0, near(-FRAC_PI_2)),
        // atan2(±inf, -inf) = ±3π/4, atan2(±inf, +inf) = ±π/4;
        (INF, -INF, near(pi3_4)),
        (-INF, -INF, near(-pi3_4)),
        (INF, INF, near(FRAC_PI_4)),
        (-INF, INF, near(-FRAC_PI_4)),
        // the diagonals, and NaN.
        (1.0, 1.0, near(FRAC_PI_4)),
        (-1.0, -1.0, near(-pi3_4)),
        (NAN, 1.0, ex(NAN)),
        (1.0, NAN, ex(NAN)),
    ] {
        r("atan2", &[y, x], z);
    }

    // hypot: C11 F.10.4.3 and IEEE 754-2019 §9.2.1: hypot(±inf, y) = +inf even for a NaN y,
    // hypot(x, ±0) = |x|, symmetric and even in each argument; otherwise NaN gives NaN.
    for (x, y, z) in [
        (INF, NAN, ex(INF)),
        (-INF, NAN, ex(INF)),
        (NAN, INF, ex(INF)),
        (NAN, -INF, ex(INF)),
        (-INF, 2.0, ex(INF)),
        (3.0, 0.0, ex(3.0)),
        (-3.0, -0.0, ex(3.0)),
        (-0.0, 0.5, ex(0.5)),
        (0.0, -0.0, ex(0.0)),
        (-0.0, -0.0, ex(0.0)),
        (3.0, 4.0, ex(5.0)),
        (-3.0, -4.0, ex(5.0)),
        (1.0, 1.0, near(SQRT_2)),
        (NAN, 1.0, ex(NAN)),
        (1.0, NAN, ex(NAN)),
    ] {
        r("hypot", &[x, y], z);
    }

    // log(x, b) = log2(x) / log2(b) (no standard defines it): exact quotients of powers, and
    // the special values that IEEE 754 division (§6.1, §7.2, §7.3) gives from §9.2.1's log2:
    // a pole at x = ±0, NaN for negative arguments, ±inf for b = 1 and NaN for 0/0.
    for (x, b, z) in [
        (8.0, 2.0, 3.0),
        (0.25, 2.0, -2.0),
        (8.0, 4.0, 1.5),
        (100.0, 10.0, 2.0),
        (1.0, 2.0, 0.0),
        (0.0, 2.0, -INF),
        (-0.0, 10.0, -INF),
        (INF, 2.0, INF),
        (-1.0, 2.0, NAN),
        (2.0, -2.0, NAN),
        (2.0, 1.0, INF),
        (0.5, 1.0, -INF),
        (1.0, 1.0, NAN),
        (NAN, 2.0, NAN),
        (2.0, NAN, NAN),
    ] {
        r("log", &[x, b], ex(z));
    }

    // fusedMultiplyAdd: IEEE 754-2019 §5.4.1 (one rounding), §6.3 (an exactly zero sum of
    // opposite signs is +0 when rounding to nearest, a sum of two -0 is -0), §7.2 (0 * inf
    // and inf - inf are invalid); C11 F.10.10.1.
    for (a, b, c, z) in [
        (2.0, 3.0, 1.0, 7.0),
        (0.5, 4.0, -2.0, 0.0),
        (-0.5, 4.0, 2.0, 0.0),
        (1.0, 1.0, -1.0, 0.0),
        (0.0, 5.0, -0.0, 0.0),
        (-0.0, 5.0, -0.0, -0.0),
        (-0.0, -5.0, -0.0, 0.0),
        (-0.0, 2.0, 0.0, 0.0),
        (0.0, INF, 1.0, NAN),
        (INF, -0.0, 1.0, NAN),
        (0.0, INF, NAN, NAN),
        (INF, 1.0, -INF, NAN),
        (-INF, 2.0, INF, NAN),
        (INF, 2.0, 3.0, INF),
        (INF, -2.0, 3.0, -INF),
        (2.0, 3.0, -INF, -INF),
        (2.0, 3.0, NAN, NAN),
        (NAN, 0.0, 1.0, NAN),
        (2.0, 4.0, 8.0, 16.0),
    ] {
        r("mul_add", &[a, b, c], ex(z));
    }
    // One rounding, not two: (1 + ε)(1 - ε) - 1 = -ε² exactly, where the unfused product
    // would round to 1 and give 0.
    let eps = p2(-(fmt.mantissa_bits as i32));
    r("mul_add", &[1.0 + eps, 1.0 - eps, -1.0], ex(-eps * eps));

    rows
}

/// The fewest rows, and functions, a format may check: a format that holds few of the rows'
/// arguments (E8M0 holds only positive powers of two, FP4 only 15 values) still checks these
/// many (FP4 checks about 250 rows, E8M0 30 functions).
const MIN_ROWS: usize = 200;
const MIN_FUNCTIONS: usize = 25;

#[test]
fn special_values() {
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for ty in all_types() {
        let rows = rows(&ty.fmt);
        let mut checked = 0;
        let mut functions_checked: Vec<&str> = Vec::new();
        for row in &rows {
            let Some(args) = row
                .args
                .iter()
                .map(|&a| ty.bits_of(a))
                .collect::<Option<Vec<u32>>>()
            else {
                continue;
            };
            checked += 1;
            if !functions_checked.contains(&row.f) {
                functions_checked.push(row.f);
            }
            let got = ty.call(row.f, &args);
            let want = expect(&ty, row.want);
            if !matches_want(&ty, got, want, true) {
                let shown: Vec<String> = args.iter().map(|&b| ty.show(b)).collect();
                let want = match want {
                    Want::Nan => "NaN".to_string(),
                    Want::Bits(b) => ty.show(b),
                };
                failures.push(format!(
                    "{}: {}({}) = {}, expected {want} (exact result {:?})",
                    ty.name,
                    row.f,
                    shown.join(", "),
                    ty.show(got),
                    row.want
                ));
            }
        }
        counts.push((ty.name, checked, functions_checked.len()));
        // f16 holds every argument of the table except the largest powers of two, so every
        // function of the table is checked there.
        if ty.name == "f16" {
            for &(f, _) in &ty.unary {
                assert!(functions_checked.contains(&f), "no f16 row checks {f}");
            }
            for f in ["powf", "atan2", "hypot", "log", "mul_add"] {
                assert!(functions_checked.contains(&f), "no f16 row checks {f}");
            }
        }
    }
    println!("special-value rows checked per format (rows, functions):");
    for (name, n, f) in &counts {
        println!("  {name:>12}: {n:4} rows, {f:2} functions");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for (name, n, f) in counts {
        assert!(
            n >= MIN_ROWS && f >= MIN_FUNCTIONS,
            "{name} checked only {n} special-value rows of {f} functions"
        );
    }
}
