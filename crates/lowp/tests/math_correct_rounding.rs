//! Proof that the math functions of every format are correctly rounded.
//!
//! # What is proved, and how
//!
//! Every one-argument function `f` computes `y = f(x)` in f64 with libm and returns
//! `RN(y)`, the f64 rounded once into the format. The first check is that the function really
//! returns `RN(y)`, bit for bit, for every input. The rest of the proof shows that `RN(y)`
//! equals `RN(Y)`, the correct rounding of the exact result `Y = f(x)`:
//!
//! 1. **Margin.** We assume that libm's result is within `B = 2^10` f64 ulps of the exact
//!    value, `|y - Y| <= 2^10 ulp(y)`, that a zero `y` has the sign of `Y` (or `Y` is that very
//!    zero), and that `y` is infinite only when `Y` is infinite or `|Y| > 2^1023` (ordinary
//!    overflow). The libm crate is a port of musl and FreeBSD msun, whose documented errors for
//!    the functions used are below 1 ulp (`exp`, `log`, `log1p`, `expm1`, `pow`, trigonometric
//!    functions), below 2 ulp (`tanh`, `asinh`, `acosh`, `atanh`), or correctly rounded (`sqrt`,
//!    `cbrt`, `exp2` to 0.503 ulp); the compositions the crate adds (`1/sqrt`, `x * (180/π)`,
//!    `log2(x)/log2(b)`) add at most two roundings. `2^10` is therefore more than 250 times
//!    the largest documented error, and [`libm_error_sample`] measures the actual error
//!    against a 256-bit evaluation on a sample of inputs of every function and checks it stays
//!    below 4 ulps; [`oracle_every_16_bit_input`] (ignored by default: minutes) does so for
//!    every f16 and bf16 input of every function, and found at most 1.98 ulp for libm's own
//!    functions (f16 `tanh` at 0.2203). Under the assumption `Y` lies in `I = [y - B ulp(y), y + B ulp(y)]`
//!    (computed with outward rounding). If both ends of `I` round to `RN(y)`, so does all of
//!    `I`, because rounding to nearest is monotone, and hence `RN(Y) = RN(y)`. This settles
//!    almost every input.
//! 2. **The rest, one by one.** Every input whose interval `I` holds a rounding boundary is
//!    listed (run with `--nocapture`) and settled without trusting libm: either the exact value
//!    is known in closed form (`exp2(-25) = 2^-25`, `log2(512) = 9`, `ln(1) = 0`, `sqrt` of a
//!    perfect square checked by an exact fused multiply-add) and libm returned exactly it, so
//!    `y = Y`; or astro-float evaluates `Y` to 256 bits and the test checks that `Y` lies
//!    strictly inside the set of reals that round to `RN(y)` (with `2^-190` relative slack).
//!
//! Domain errors are checked separately: `y` is NaN exactly when an independent predicate
//! (`sqrt` of a negative number, `asin` beyond ±1, ...) says the result is undefined.
//!
//! The rounding functions (`floor`, `ceil`, `round`, `round_ties_even`, `trunc`, `fract`) are
//! exact operations; they are checked against std's f64 methods (a different implementation from
//! libm's) and rounded once, which is exact except where the integer is out of range.
//!
//! `mul_add` and `hypot` are checked against exact comparisons: the exact `a*b + c` or
//! `a*a + b*b` is compared with every boundary around the result using exact f64 expansion
//! arithmetic (Shewchuk's grow-expansion), itself cross-checked against astro-float.
//! `powf`, `powi`, `atan2` and `log` go through the same margin-and-settle proof for every pair
//! of the 8-bit and narrower formats and for many random f16 and bf16 pairs.

// Tests run on the development toolchain; the minimum Rust (`rust-version`) is the
// library's.
#![allow(clippy::incompatible_msrv)]

use astro_float::{BigFloat, Consts, RoundingMode};
use lowp::format::{Format, NanEncoding};
use lowp::math::Function;
use lowp::{
    bf16, f4e2m1fn, f6e2m3fn, f6e3m2fn, f8e3m4, f8e4m3, f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz,
    f8e8m0fnu, f16,
};
use std::cmp::Ordering::{self, Equal, Greater, Less};

/// The assumed bound on libm's error, in f64 ulps of its result.
const B_ULPS: f64 = 1024.0;

/// The assumed error bound of `name(x)` in f64 ulps: [`B_ULPS`], except on gelu's far tail,
/// where erfc magnifies the rounding of its argument (the crate's `activation.rs` and
/// [`measured_limit`] bound the error by `2x² + 8` ulps, below 2^13 wherever erfc does not
/// underflow).
fn margin_ulps(name: &str, x: f64) -> f64 {
    if name == "gelu" && x.abs() > 16.0 {
        8192.0
    } else {
        B_ULPS
    }
}
/// astro-float's working precision, in bits.
const P: usize = 256;
const RM: RoundingMode = RoundingMode::ToEven;

type Un = fn(u32) -> u32;
type Bin = fn(u32, u32) -> u32;

/// One type of the crate, seen through its bits.
struct Ty {
    name: &'static str,
    fmt: Format,
    from_f64: fn(f64) -> u32,
    to_f64: fn(u32) -> f64,
    unary: Vec<(&'static str, Un)>,
    sin_cos: fn(u32) -> (u32, u32),
    binary: Vec<(&'static str, Bin)>,
    powi: fn(u32, i32) -> u32,
    mul_add: fn(u32, u32, u32) -> u32,
    consts: Vec<(&'static str, u32)>,
}

macro_rules! un {
    ($t:ident; $($m:ident),*) => {
        vec![$((stringify!($m), (|x: u32| $t::from_bits(x as _).$m().to_bits() as u32) as Un)),*]
    };
}
macro_rules! bin {
    ($t:ident; $($m:ident),*) => {
        vec![$((stringify!($m),
            (|x: u32, y: u32| $t::from_bits(x as _).$m($t::from_bits(y as _)).to_bits() as u32)
            as Bin)),*]
    };
}
macro_rules! consts {
    ($t:ident; $($c:ident),*) => {
        vec![$((stringify!($c), $t::$c.to_bits() as u32)),*]
    };
}
macro_rules! ty {
    ($t:ident) => {
        Ty {
            name: stringify!($t),
            fmt: $t::FORMAT,
            from_f64: |x| $t::from_f64(x).to_bits() as u32,
            to_f64: |b| $t::from_bits(b as _).to_f64(),
            unary: un!($t; sqrt, rsqrt, recip, exp, exp2, exp_m1, ln, log2, log10, ln_1p, sin,
                cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, cbrt,
                to_degrees, to_radians, floor, ceil, round, round_ties_even, trunc, fract,
                square, relu, sigmoid, log_sigmoid, softplus, silu, softsign, tanh_shrink, gelu),
            sin_cos: |b| {
                let (s, c) = $t::from_bits(b as _).sin_cos();
                (s.to_bits() as u32, c.to_bits() as u32)
            },
            binary: bin!($t; powf, atan2, log, hypot),
            powi: |b, n| $t::from_bits(b as _).powi(n).to_bits() as u32,
            mul_add: |a, b, c| {
                $t::from_bits(a as _)
                    .mul_add($t::from_bits(b as _), $t::from_bits(c as _))
                    .to_bits() as u32
            },
            consts: consts!($t; PI, TAU, E, SQRT_2, FRAC_1_SQRT_2, LN_2, LN_10, LOG2_E, LOG10_E,
                LOG2_10, LOG10_2, FRAC_PI_2, FRAC_PI_3, FRAC_PI_4, FRAC_PI_6, FRAC_PI_8,
                FRAC_1_PI, FRAC_2_PI, FRAC_2_SQRT_PI),
        }
    };
}

fn all_types() -> Vec<Ty> {
    vec![
        ty!(f16),
        ty!(bf16),
        ty!(f8e4m3fn),
        ty!(f8e5m2),
        ty!(f8e4m3fnuz),
        ty!(f8e5m2fnuz),
        ty!(f8e4m3),
        ty!(f8e3m4),
        ty!(f8e8m0fnu),
        ty!(f6e2m3fn),
        ty!(f6e3m2fn),
        ty!(f4e2m1fn),
    ]
}

impl Ty {
    fn count(&self) -> u32 {
        1 << self.fmt.total_bits()
    }
    fn is_nan(&self, b: u32) -> bool {
        self.fmt.is_nan_bits(b)
    }
    fn x(&self, b: u32) -> f64 {
        (self.to_f64)(b)
    }
    fn round(&self, x: f64) -> u32 {
        (self.from_f64)(x)
    }
    /// A function's result `y` rounded as the crate rounds it: every NaN, whatever its sign
    /// and payload, as the negative quiet NaN (so FP6 and FP4 give +0 for every NaN result).
    fn round_result(&self, y: f64) -> u32 {
        self.round(if y.is_nan() { -f64::NAN } else { y })
    }
    fn show(&self, b: u32) -> String {
        format!("{:e} ({:#x})", self.x(b), b)
    }
}

// ---------------------------------------------------------------------------------------------
// The f64 evaluations, exactly as the crate does them.

fn reference(name: &str) -> fn(f64) -> f64 {
    match name {
        "sqrt" => libm::sqrt,
        "rsqrt" => |x| 1.0 / libm::sqrt(x),
        "recip" => |x| 1.0 / x,
        "exp" => libm::exp,
        "exp2" => libm::exp2,
        "exp_m1" => libm::expm1,
        "ln" => libm::log,
        "log2" => libm::log2,
        "log10" => libm::log10,
        "ln_1p" => libm::log1p,
        "sin" => libm::sin,
        "cos" => libm::cos,
        "tan" => libm::tan,
        "asin" => libm::asin,
        "acos" => libm::acos,
        "atan" => libm::atan,
        "sinh" => libm::sinh,
        "cosh" => libm::cosh,
        "tanh" => libm::tanh,
        "asinh" => libm::asinh,
        "acosh" => |x| if x >= 1.0 { libm::acosh(x) } else { f64::NAN },
        "atanh" => libm::atanh,
        "cbrt" => libm::cbrt,
        "to_degrees" => |x| x * (180.0 / std::f64::consts::PI),
        "to_radians" => |x| x * (std::f64::consts::PI / 180.0),
        // The rounding functions are exact; std's versions are an independent implementation.
        "floor" => f64::floor,
        "ceil" => f64::ceil,
        "round" => f64::round,
        "round_ties_even" => f64::round_ties_even,
        "trunc" => f64::trunc,
        "fract" => f64::fract,
        // Exact in f64 for every format's values.
        "square" => |x| x * x,
        "relu" => |x| if x > 0.0 || x.is_nan() { x } else { 0.0 },
        // The compositions are the crate's own f64 forms: what is proved below is that
        // rounding them once is correct, from their error bounds (the crate's `activation.rs`)
        // and, where the margin does not suffice, from astro-float.
        "sigmoid" => |x| Function::Sigmoid.eval(x),
        "log_sigmoid" => |x| Function::LogSigmoid.eval(x),
        "softplus" => |x| Function::Softplus.eval(x),
        "silu" => |x| Function::Silu.eval(x),
        "softsign" => |x| Function::Softsign.eval(x),
        "tanh_shrink" => |x| Function::TanhShrink.eval(x),
        "gelu" => |x| Function::Gelu.eval(x),
        _ => panic!("no reference for {name}"),
    }
}

/// Whether the function is an exact operation in f64 (the rounding functions, `square`,
/// `relu`), whose f64 result rounded once is the correct rounding.
fn is_rounding_function(name: &str) -> bool {
    matches!(
        name,
        "floor" | "ceil" | "round" | "round_ties_even" | "trunc" | "fract" | "square" | "relu"
    )
}

fn pow_f64(x: f64, y: f64) -> f64 {
    let r = libm::pow(x, y);
    if r == 0.0 && x != 0.0 && x.is_finite() && y.is_finite() {
        libm::copysign(f64::from_bits(1), r)
    } else {
        r
    }
}

fn log_f64(x: f64, b: f64) -> f64 {
    if b == 2.0 {
        libm::log2(x)
    } else if b == 10.0 {
        libm::log10(x)
    } else {
        libm::log2(x) / libm::log2(b)
    }
}

fn reference2(name: &str) -> fn(f64, f64) -> f64 {
    match name {
        "powf" => pow_f64,
        "atan2" => libm::atan2,
        "log" => log_f64,
        "hypot" => |a, b| {
            if a.is_infinite() || b.is_infinite() {
                f64::INFINITY
            } else {
                libm::sqrt(a * a + b * b)
            }
        },
        _ => panic!("no reference for {name}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Independent knowledge of the functions: where they are undefined, and where their value is
// known exactly.

/// Whether `f(x)` is undefined (NaN), by the mathematical definition and IEEE 754's conventions.
fn nan_domain(name: &str, x: f64) -> bool {
    if x.is_nan() {
        return true;
    }
    match name {
        "sqrt" | "rsqrt" | "ln" | "log2" | "log10" => x < 0.0,
        "ln_1p" => x < -1.0,
        "asin" | "acos" | "atanh" => x.abs() > 1.0,
        "acosh" => x < 1.0,
        "sin" | "cos" | "tan" | "fract" => x.is_infinite(),
        _ => false,
    }
}

/// `2^k` for an integer `k` within f64's range.
fn pow2(k: i64) -> f64 {
    if k >= -1022 {
        f64::from_bits(((k + 1023) as u64) << 52)
    } else {
        f64::from_bits(1 << (k + 1074))
    }
}

/// `log2(x)` for a power of two `x` (normal f64), else `None`.
fn log2_exact(x: f64) -> Option<i64> {
    let bits = x.to_bits();
    (x > 0.0 && x.is_finite() && bits & ((1 << 52) - 1) == 0 && bits >> 52 != 0)
        .then(|| (bits >> 52) as i64 - 1023)
}

/// The exact value of `f(x)` where it is known in closed form (and is an f64), checked with
/// exact arithmetic where it is not a convention.
fn exact(name: &str, x: f64) -> Option<f64> {
    if x.is_nan() {
        return None;
    }
    let zero = x == 0.0;
    let pos_inf = x == f64::INFINITY;
    let neg_inf = x == f64::NEG_INFINITY;
    if is_rounding_function(name) {
        return Some(reference(name)(x));
    }
    match name {
        "sqrt" => {
            if zero || pos_inf {
                Some(x)
            } else if x > 0.0 {
                let r = x.sqrt();
                (r.mul_add(r, -x) == 0.0).then_some(r)
            } else {
                None
            }
        }
        "rsqrt" => {
            if zero {
                Some(1.0 / x)
            } else if pos_inf {
                Some(0.0)
            } else if x > 0.0 {
                let s = x.sqrt();
                let r = 1.0 / s;
                (s.mul_add(s, -x) == 0.0 && r.mul_add(s, -1.0) == 0.0).then_some(r)
            } else {
                None
            }
        }
        "recip" => {
            if zero || x.is_infinite() {
                Some(1.0 / x)
            } else {
                let r = 1.0 / x;
                (r.mul_add(x, -1.0) == 0.0).then_some(r)
            }
        }
        "cbrt" => {
            if zero || x.is_infinite() {
                Some(x)
            } else {
                let r = x.cbrt();
                let r2 = r * r;
                (r.mul_add(r, -r2) == 0.0 && r2.mul_add(r, -x) == 0.0).then_some(r)
            }
        }
        "exp" | "exp2" => {
            if zero {
                Some(1.0)
            } else if neg_inf {
                Some(0.0)
            } else if pos_inf {
                Some(x)
            } else if name == "exp2" && x == x.trunc() && (-1074.0..=1023.0).contains(&x) {
                Some(pow2(x as i64))
            } else {
                None
            }
        }
        "exp_m1" => {
            if zero || pos_inf {
                Some(x)
            } else if neg_inf {
                Some(-1.0)
            } else {
                None
            }
        }
        "ln" | "log2" | "log10" => {
            if zero {
                Some(f64::NEG_INFINITY)
            } else if pos_inf {
                Some(x)
            } else if x == 1.0 {
                Some(0.0)
            } else if name == "log2" {
                log2_exact(x).map(|k| k as f64)
            } else if name == "log10" {
                (1..=22).find(|&k| 10f64.powi(k) == x).map(|k| k as f64)
            } else {
                None
            }
        }
        "ln_1p" => {
            if zero || pos_inf {
                Some(x)
            } else if x == -1.0 {
                Some(f64::NEG_INFINITY)
            } else {
                None
            }
        }
        "sin" | "tan" | "asin" | "atan" | "sinh" | "tanh" | "asinh" | "atanh" | "to_degrees"
        | "to_radians" => {
            if zero {
                Some(x)
            } else if x.is_infinite() {
                match name {
                    "sinh" | "asinh" | "to_degrees" | "to_radians" => Some(x),
                    "tanh" => Some(x.signum()),
                    _ => None,
                }
            } else if name == "atanh" && x.abs() == 1.0 {
                Some(x / 0.0)
            } else {
                None
            }
        }
        "cos" | "cosh" => {
            if zero {
                Some(1.0)
            } else if name == "cosh" && x.is_infinite() {
                Some(f64::INFINITY)
            } else {
                None
            }
        }
        "sigmoid" | "log_sigmoid" | "softplus" | "silu" | "tanh_shrink" | "gelu" => {
            // The values at ±0 and the limits at ±inf (log_sigmoid(±0) = -ln 2 and
            // softplus(±0) = ln 2 are irrational).
            match name {
                "softplus" if pos_inf => Some(x),
                "softplus" if neg_inf => Some(0.0),
                "softplus" => None,
                "sigmoid" if zero => Some(0.5),
                "sigmoid" if x.is_infinite() => Some(if pos_inf { 1.0 } else { 0.0 }),
                "log_sigmoid" if pos_inf => Some(-0.0),
                "log_sigmoid" if neg_inf => Some(x),
                "log_sigmoid" => None,
                _ if zero => Some(x),
                "tanh_shrink" if x.is_infinite() => Some(x),
                _ if pos_inf => Some(x),
                // silu and gelu: x e^x and x Φ(x) tend to 0 from below.
                _ if neg_inf => Some(-0.0),
                _ => None,
            }
        }
        "softsign" => {
            if x.is_infinite() {
                Some(x.signum())
            } else {
                // x / (1 + |x|) is exact when the divisor is exact and the division leaves no
                // remainder (softsign(1) = 1/2, softsign(3) = 3/4, a tie in f4e2m1fn).
                let d = 1.0 + x.abs();
                let q = x / d;
                (d - 1.0 == x.abs() && q.mul_add(d, -x) == 0.0).then_some(q)
            }
        }
        "acos" | "acosh" => {
            if x == 1.0 {
                Some(0.0)
            } else if name == "acosh" && pos_inf {
                Some(x)
            } else {
                None
            }
        }
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Rounding intervals: the set of reals that round to a given result, from the sorted values.

/// An interval of reals, each end open or closed.
#[derive(Clone, Copy, Debug)]
struct Iv {
    lo: f64,
    lo_in: bool,
    hi: f64,
    hi_in: bool,
}

/// What a format's rounding looks like: its finite values in order, and the overflow threshold.
struct Info {
    /// Every finite value, ascending, zero once.
    vals: Vec<f64>,
    /// `MAX + ulp(MAX)/2`, or `None` where overflow saturates (FP6, FP4).
    threshold: Option<f64>,
    /// Whether a tie at the threshold overflows (the virtual value above MAX is the even one).
    threshold_overflows: bool,
    /// The intervals of each result, by its bits (see [`intervals_of`]).
    ivs: Vec<Vec<Iv>>,
}

fn info(ty: &Ty) -> Info {
    let f = &ty.fmt;
    let mut vals: Vec<f64> = (0..ty.count())
        .filter(|&b| !f.is_nan_bits(b) && !f.is_infinite_bits(b))
        .map(|b| ty.x(b))
        .collect();
    vals.sort_by(|a, b| a.partial_cmp(b).unwrap());
    vals.dedup();
    let max_bits = f.max_finite_bits();
    let max = ty.x(max_bits);
    // The quantum of MAX's binade (for E8M0, whose binades hold one value each, the gap to the
    // next power of two).
    let ulp_max = 2f64.powi(f.max_exponent() - f.mantissa_bits as i32);
    let threshold = (f.nan != NanEncoding::None).then(|| max + ulp_max / 2.0);
    let mut inf = Info {
        vals,
        threshold,
        threshold_overflows: !even(f, max_bits),
        ivs: Vec::new(),
    };
    inf.ivs = (0..ty.count()).map(|r| intervals_of(ty, &inf, r)).collect();
    inf
}

/// The reals that round to the result `r` (from the table).
fn intervals<'a>(_ty: &Ty, inf: &'a Info, r: u32) -> &'a [Iv] {
    &inf.ivs[r as usize]
}

/// Whether the value with these bits is "even" for ties-to-even: its integer significand is
/// even. E8M0's significand is the implicit 1 alone, so every value is odd and ties go up.
fn even(f: &Format, bits: u32) -> bool {
    f.mantissa_bits > 0 && bits & 1 == 0
}

/// The reals that round to the result `r` (apart from exact zeros, whose sign is a convention,
/// and domain errors, which give NaN).
fn intervals_of(ty: &Ty, inf: &Info, r: u32) -> Vec<Iv> {
    let f = &ty.fmt;
    let over = |neg: bool| {
        let t = inf.threshold.expect("overflow threshold");
        if neg {
            Iv {
                lo: f64::NEG_INFINITY,
                lo_in: true,
                hi: -t,
                hi_in: inf.threshold_overflows,
            }
        } else {
            Iv {
                lo: t,
                lo_in: inf.threshold_overflows,
                hi: f64::INFINITY,
                hi_in: true,
            }
        }
    };
    if f.is_nan_bits(r) {
        let mut v = Vec::new();
        if !f.has_infinity() {
            v.push(over(false));
            if f.signed {
                v.push(over(true));
            }
        }
        if !f.signed {
            v.push(Iv {
                lo: f64::NEG_INFINITY,
                lo_in: true,
                hi: 0.0,
                hi_in: true,
            });
        }
        return v;
    }
    if f.is_infinite_bits(r) {
        return vec![over(f.is_sign_negative_bits(r))];
    }
    let x = ty.x(r);
    let i = inf
        .vals
        .binary_search_by(|v| v.partial_cmp(&x).unwrap())
        .expect("a value");
    if x == 0.0 {
        let h = inf.vals[i + 1] / 2.0;
        return vec![if !f.has_negative_zero() {
            Iv {
                lo: -h,
                lo_in: true,
                hi: h,
                hi_in: true,
            }
        } else if f.is_sign_negative_bits(r) {
            Iv {
                lo: -h,
                lo_in: true,
                hi: 0.0,
                hi_in: false,
            }
        } else {
            Iv {
                lo: 0.0,
                lo_in: false,
                hi: h,
                hi_in: true,
            }
        }];
    }
    let ev = even(f, r);
    // Ties go to the even neighbour; in E8M0 (no mantissa) up, away from zero.
    let (lo_in, hi_in) = if f.mantissa_bits == 0 {
        (true, false)
    } else {
        (ev, ev)
    };
    let (lo, lo_in) = if i == 0 {
        if f.signed {
            match inf.threshold {
                Some(t) => (-t, !inf.threshold_overflows),
                None => (f64::NEG_INFINITY, true),
            }
        } else {
            (0.0, false) // E8M0: every positive value below the smallest rounds to it
        }
    } else {
        ((inf.vals[i - 1] + x) / 2.0, lo_in)
    };
    let (hi, hi_in) = if i + 1 == inf.vals.len() {
        match inf.threshold {
            Some(t) => (t, !inf.threshold_overflows),
            None => (f64::INFINITY, true),
        }
    } else {
        ((x + inf.vals[i + 1]) / 2.0, hi_in)
    };
    vec![Iv {
        lo,
        lo_in,
        hi,
        hi_in,
    }]
}

/// Whether the exact value `V`, known through `cmp(q) = V <=> q` (`None`: undecidable), lies in
/// one of the intervals.
fn contained(ivs: &[Iv], cmp: &mut dyn FnMut(f64) -> Option<Ordering>) -> Option<bool> {
    for iv in ivs {
        let lo_ok = if iv.lo == f64::NEG_INFINITY {
            true
        } else {
            match cmp(iv.lo)? {
                Greater => true,
                Equal => iv.lo_in,
                Less => false,
            }
        };
        let hi_ok = if iv.hi == f64::INFINITY {
            true
        } else {
            match cmp(iv.hi)? {
                Less => true,
                Equal => iv.hi_in,
                Greater => false,
            }
        };
        if lo_ok && hi_ok {
            return Some(true);
        }
    }
    Some(false)
}

// ---------------------------------------------------------------------------------------------
// Exact arithmetic on f64s (expansions).

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bv = s - a;
    let av = s - bv;
    (s, (a - av) + (b - bv))
}

/// The exact sign of `x + y + z` (no overflow): Shewchuk's grow-expansion turns the sum into a
/// nonoverlapping expansion, whose sign is that of its largest nonzero component.
fn sign3(x: f64, y: f64, z: f64) -> Ordering {
    let (s, e) = two_sum(x, y);
    let (q1, h1) = two_sum(z, e);
    let (q2, h2) = two_sum(q1, s);
    for c in [q2, h2, h1] {
        if c != 0.0 {
            return if c > 0.0 { Greater } else { Less };
        }
    }
    Equal
}

// ---------------------------------------------------------------------------------------------
// astro-float: independent high-precision values.

fn big(x: f64) -> BigFloat {
    if x != 0.0 && x.abs() < f64::MIN_POSITIVE {
        // astro-float does not take f64 subnormals: scale into the normal range and back.
        let mut v = BigFloat::from_f64(x * 2f64.powi(600), 64);
        v.set_exponent(v.exponent().unwrap() - 600);
        return v;
    }
    BigFloat::from_f64(x, 64)
}

/// A high-precision value: a 256-bit number, or "nonzero but below astro-float's range".
enum Hi {
    Val(BigFloat),
    Tiny { neg: bool },
}

/// `v <=> q`, or `None` when `v`, computed to `p` bits (relative error far below 2^-(p-56)),
/// is within 2^-(p-66) of `q`.
fn side(v: &Hi, q: f64) -> Option<Ordering> {
    match v {
        Hi::Tiny { neg } => Some(if q > 0.0 || (q == 0.0 && *neg) {
            Less
        } else {
            Greater
        }),
        Hi::Val(v) => {
            if v.is_nan() {
                return None;
            }
            if v.is_inf() {
                return Some(if v.is_inf_pos() { Greater } else { Less });
            }
            if q.is_infinite() {
                return Some(if q > 0.0 { Less } else { Greater });
            }
            if v.is_zero() {
                return None;
            }
            let d = v.sub(&big(q), 2048, RM);
            let p = v.mantissa_max_bit_len()? as i32;
            // An exact value needs no slack.
            if d.is_zero() || (v.inexact() && d.exponent()? < v.exponent()? - (p - 66)) {
                return None;
            }
            Some(if d.is_negative() { Less } else { Greater })
        }
    }
}

/// `f(x)` to `p` bits (relative error far below 2^-(p-56)).
fn astro_unary(name: &str, x: f64, p: usize, cc: &mut Consts) -> Hi {
    let bx = big(x);
    let one = big(1.0);
    let wide = p + 256;
    let v = match name {
        "sqrt" => bx.sqrt(p, RM),
        "rsqrt" => bx.sqrt(wide, RM).reciprocal(p, RM),
        "recip" => bx.reciprocal(p, RM),
        "exp" => bx.exp(p, RM, cc),
        "exp2" => bx.mul(&cc.ln_2(wide, RM), wide, RM).exp(p, RM, cc),
        "exp_m1" => bx.exp(wide, RM, cc).sub(&one, p, RM),
        "ln" => bx.ln(p, RM, cc),
        "log2" => bx.log2(p, RM, cc),
        "log10" => bx.log10(p, RM, cc),
        "ln_1p" => bx.add(&one, wide, RM).ln(p, RM, cc),
        "sin" => bx.sin(p, RM, cc),
        "cos" => bx.cos(p, RM, cc),
        "tan" => bx.tan(p, RM, cc),
        "asin" => bx.asin(p, RM, cc),
        "acos" => bx.acos(p, RM, cc),
        "atan" => bx.atan(p, RM, cc),
        "sinh" => bx.sinh(p, RM, cc),
        "cosh" => bx.cosh(p, RM, cc),
        "tanh" => bx.tanh(p, RM, cc),
        "asinh" => bx.asinh(p, RM, cc),
        "acosh" => bx.acosh(p, RM, cc),
        "atanh" => bx.atanh(p, RM, cc),
        "cbrt" => bx.cbrt(p, RM),
        "to_degrees" => bx.mul(&big(180.0), wide, RM).div(&cc.pi(wide, RM), p, RM),
        "to_radians" => bx.mul(&cc.pi(wide, RM), wide, RM).div(&big(180.0), p, RM),
        "sigmoid" | "log_sigmoid" | "softplus" | "silu" | "softsign" | "tanh_shrink" | "gelu" => {
            return astro_activation(name, x, p, cc);
        }
        _ => panic!("no astro-float evaluation of {name}"),
    };
    if v.is_zero() && matches!(name, "exp" | "exp2") {
        // Below astro-float's exponent range: e^x > 0.
        return Hi::Tiny { neg: false };
    }
    Hi::Val(v)
}

/// The activation functions to `p` bits, from their definitions, for a finite nonzero `x`
/// (the zeros and infinities are in [`exact`]).
fn astro_activation(name: &str, x: f64, p: usize, cc: &mut Consts) -> Hi {
    let bx = big(x);
    let one = big(1.0);
    // Guard bits for the steps before the last rounding to `p`.
    let g = p + 64;
    // e^-|x|, or None below astro-float's range (then every result below is determined by
    // which side of a value it lies on, or is beyond every format's range).
    let t = big(-x.abs()).exp(g, RM, cc);
    let t = (!t.is_zero()).then_some(t);
    // ln(1 + t) for 0 < t <= 1, without losing t's bits in 1 + t.
    let ln_1p = |t: &BigFloat, cc: &mut Consts| {
        let e = -t.exponent().unwrap();
        if e > g as i32 {
            // ln(1 + t) = t (1 - t/2 + ...), relative error below t²/3.
            t.mul(&one.sub(&t.div(&big(2.0), g, RM), g, RM), g, RM)
        } else {
            t.add(&one, g + e.max(0) as usize, RM).ln(g, RM, cc)
        }
    };
    let neg = x < 0.0;
    let v = match name {
        // 1/(1 + e^-x) for x > 0, e^x/(1 + e^x) below.
        "sigmoid" | "silu" => {
            let s = match (&t, neg) {
                (None, false) => one.clone(),
                (None, true) => {
                    return Hi::Tiny {
                        neg: name == "silu",
                    };
                }
                (Some(t), false) => t.add(&one, g, RM).reciprocal(g, RM),
                (Some(t), true) => t.div(&t.add(&one, g, RM), g, RM),
            };
            if name == "silu" {
                bx.mul(&s, p, RM)
            } else {
                s.add(&big(0.0), p, RM)
            }
        }
        // min(x, 0) - ln(1 + e^-|x|).
        "log_sigmoid" => match &t {
            None if !neg => return Hi::Tiny { neg: true },
            None => bx.clone(),
            Some(t) => {
                let l = ln_1p(t, cc);
                if neg {
                    bx.sub(&l, p, RM)
                } else {
                    l.neg().add(&big(0.0), p, RM)
                }
            }
        },
        // max(x, 0) + ln(1 + e^-|x|).
        "softplus" => match &t {
            None if neg => return Hi::Tiny { neg: false },
            None => bx.clone(),
            Some(t) => {
                let l = ln_1p(t, cc);
                if neg {
                    l.add(&big(0.0), p, RM)
                } else {
                    bx.add(&l, p, RM)
                }
            }
        },
        "softsign" => bx.div(&big(x.abs()).add(&one, g + 1100, RM), p, RM),
        "tanh_shrink" if x.abs() >= 20.0 => {
            // x - tanh(x) = (x ∓ 1) ± δ with δ = 2e^-2|x| / (1 + e^-2|x|) < 2^-56: a number
            // just past x ∓ 1, which may itself be a tie of the format. When δ is within
            // reach of 4096 bits it is added exactly enough to show; beyond, a stand-in
            // 2^-(g+64) relative to x ∓ 1 takes its place: both lie strictly between x ∓ 1
            // and the nearest other f64 with 12 or fewer significant bits (a boundary is one),
            // which is at least 2^-12 (relative) away, so they round alike.
            let sign = big(x.signum());
            let near = bx.sub(&sign, g + 64, RM);
            let top = near.exponent().unwrap();
            let t = big(-2.0 * x.abs()).exp(g, RM, cc);
            let delta = match t.exponent() {
                Some(e) if !t.is_zero() && top - e < 4096 => {
                    t.mul(&big(2.0), g, RM).div(&t.add(&one, g, RM), g, RM)
                }
                _ => {
                    let mut d = big(1.0);
                    d.set_exponent(top - g as i32 - 64);
                    d
                }
            };
            // Kept to all its bits: rounded to `p`, the sum would be x ∓ 1 again.
            let w = (top - delta.exponent().unwrap()) as usize + g;
            near.add(&delta.mul(&sign, g, RM), w, RM)
        }
        // x - tanh(x) cancels about 2 log2(1/|x|) bits near 0 (it is about x³/3).
        "tanh_shrink" => {
            let w = g + 2 * (-bx.exponent().unwrap()).max(0) as usize;
            bx.sub(&bx.tanh(w, RM, cc), p, RM)
        }
        "gelu" => {
            // Beyond |x| = 40 the result is x (1 - ε) or -ε with ε < e^-800: x lies strictly
            // inside its own rounding interval, and -ε below every format's range.
            if x.abs() > 40.0 {
                return if neg {
                    Hi::Tiny { neg: true }
                } else {
                    Hi::Val(bx)
                };
            }
            bx.mul(&astro_phi(x, g, cc), p, RM)
        }
        _ => unreachable!(),
    };
    Hi::Val(v)
}

/// Φ(x), the standard normal distribution function, to `p` bits for `|x| <= 40`:
/// `(1 + erf(x/√2)) / 2` with erf's Taylor series `2/√π Σ (-1)^n z^(2n+1) / (n! (2n+1))`.
/// The series' terms grow to about `e^(z²)` before they fall, and `Φ(x)` of a negative `x` is
/// about `e^(-z²)`: working with `3 z² log2(e)` more bits than `p` covers both losses.
fn astro_phi(x: f64, p: usize, cc: &mut Consts) -> BigFloat {
    let z2 = x * x / 2.0;
    let w = p + 64 + (3.0 * z2 * std::f64::consts::LOG2_E) as usize;
    let z = big(x).div(&big(2.0).sqrt(w, RM), w, RM);
    let zz = z.mul(&z, w, RM);
    let mut term = z.clone(); // (-1)^n z^(2n+1) / n!
    let mut sum = z.clone();
    let mut n = 0u64;
    loop {
        n += 1;
        term = term
            .mul(&zz, w, RM)
            .div(&BigFloat::from_word(n, 64), w, RM)
            .neg();
        let add = term.div(&BigFloat::from_word(2 * n + 1, 64), w, RM);
        sum = sum.add(&add, w, RM);
        // Past the peak, once a term is below 2^-w of 1, the rest are smaller still.
        if n as f64 > z2 && add.exponent().is_some_and(|e| e < -(w as i32)) {
            break;
        }
    }
    let two_over_sqrt_pi = big(2.0).div(&cc.pi(w, RM).sqrt(w, RM), w, RM);
    let erf = sum.mul(&two_over_sqrt_pi, w, RM);
    erf.add(&big(1.0), w, RM).div(&big(2.0), p, RM)
}

/// `x^y` to `p` bits for finite nonzero `x` and finite `y` (`x < 0` only with integer `y`).
///
/// astro-float's `pow` refines its result until it can round it, which never ends when the
/// result is exactly a `p`-bit number; so exact results are computed exactly instead: integer
/// powers by repeated multiplication, powers of powers of two by their exponent, and the
/// other exact results by checking libm's candidate `r` with [`pow_is_exact`]. What is left is
/// irrational or needs far more than `p` bits, where `pow` terminates.
fn astro_pow(x: f64, y: f64, r: f64, p: usize, cc: &mut Consts) -> Hi {
    let neg = x < 0.0 && is_odd_integer(y);
    let signed = |v: BigFloat| if neg { v.neg() } else { v };
    let ax = x.abs();
    if y.fract() == 0.0 {
        if let Some(k) = log2_exact(ax) {
            let e = k as f64 * y; // exact while below 2^53
            if e < -1e9 {
                return Hi::Tiny { neg };
            }
            if e > 1e9 {
                return Hi::Val(signed(BigFloat::from_f64(f64::INFINITY, 64)));
            }
            let mut v = big(1.0);
            v.set_exponent(e as i32 + 1);
            return Hi::Val(signed(v));
        }
        if y.abs() <= 4096.0 {
            let sig_bits = 53 - (ax.to_bits() | 1 << 52).trailing_zeros() as usize;
            let exact = big(ax).powi(y.abs() as usize, sig_bits * y.abs() as usize + 64, RM);
            assert!(!exact.inexact());
            let v = if y > 0.0 {
                exact
            } else {
                big(1.0).div(&exact, p, RM)
            };
            return Hi::Val(signed(v));
        }
    } else if pow_is_exact(x, y, r) {
        return Hi::Val(big(r));
    }
    let v = big(ax).pow(&big(y), p, RM, cc);
    if v.is_zero() {
        return Hi::Tiny { neg };
    }
    Hi::Val(signed(v))
}

/// `atan2(y, x)` to `p` bits for finite `x`, `y`, not both zero, `x != 0`.
fn astro_atan2(y: f64, x: f64, p: usize, cc: &mut Consts) -> Hi {
    let wide = p + 64;
    let t = big(y).div(&big(x), wide, RM).atan(wide, RM, cc);
    let v = if x > 0.0 {
        t
    } else {
        let pi = cc.pi(wide, RM);
        if y >= 0.0 {
            t.add(&pi, p, RM)
        } else {
            t.sub(&pi, p, RM)
        }
    };
    Hi::Val(v)
}

/// `log_b(x)` to `p` bits for positive finite `x`, `b`, `b != 1`.
fn astro_log(x: f64, b: f64, p: usize, cc: &mut Consts) -> Hi {
    let wide = p + 64;
    Hi::Val(
        big(x)
            .log2(wide, RM, cc)
            .div(&big(b).log2(wide, RM, cc), p, RM),
    )
}

/// Whether the high-precision value lies strictly inside the set of reals rounding to `r`.
fn astro_confirms(ty: &Ty, inf: &Info, r: u32, v: &Hi) -> bool {
    contained(intervals(ty, inf, r), &mut |q| side(v, q)) == Some(true)
}

/// Whether `eval(p)` confirms `r` at 256 bits, or at 1024 bits when 256 are too few to tell.
fn astro_settles(ty: &Ty, inf: &Info, r: u32, mut eval: impl FnMut(usize) -> Hi) -> bool {
    [P, 4 * P]
        .into_iter()
        .any(|p| astro_confirms(ty, inf, r, &eval(p)))
}

// ---------------------------------------------------------------------------------------------
// The margin check.

/// The f64 ulp of a finite nonzero `y`.
fn ulp(y: f64) -> f64 {
    let e = (y.to_bits() >> 52) & 0x7ff;
    if e == 0 {
        f64::from_bits(1)
    } else if e > 52 {
        f64::from_bits((e - 52) << 52)
    } else {
        f64::from_bits(1 << (e - 1))
    }
}

/// An interval holding every value libm's result `y` may stand for (see the module docs),
/// rounded outward.
fn margin_interval(y: f64, bound: f64) -> (f64, f64) {
    if y == 0.0 {
        let t = f64::from_bits(bound as u64);
        return if y.is_sign_negative() {
            (-t, -0.0)
        } else {
            (0.0, t)
        };
    }
    if y.is_infinite() {
        let big = pow2(1023);
        return if y > 0.0 { (big, y) } else { (y, -big) };
    }
    let d = bound * ulp(y);
    let mut lo = (y - d).next_down();
    let mut hi = (y + d).next_up();
    if y > 0.0 && lo < 0.0 {
        lo = 0.0;
    }
    if y < 0.0 && hi > 0.0 {
        hi = -0.0;
    }
    (lo, hi)
}

/// Whether every value within `bound` f64 ulps of `y` (the margin interval) rounds to `want`.
fn margin_ok(ty: &Ty, y: f64, want: u32, bound: f64) -> bool {
    let (lo, hi) = margin_interval(y, bound);
    lo.is_sign_negative() == hi.is_sign_negative() && ty.round(lo) == want && ty.round(hi) == want
}

/// Tallies of one proof run.
#[derive(Default)]
struct Tally {
    /// Inputs settled by the margin.
    margin: u64,
    /// Inputs with a NaN result, checked against the domain predicate.
    domain: u64,
    /// Inputs of the exact rounding functions (floor, ...), whose f64 result is exact.
    exact_op: u64,
    /// Inputs checked by exact comparisons instead (`atan2` with a tiny quotient).
    exact_cmp: u64,
    /// Inputs settled separately, with how.
    settled: Vec<String>,
}

impl Tally {
    fn report(&self, what: &str) {
        println!(
            "{what}: {} by margin, {} NaN (domain), {} exact operations, {} by exact comparison, \
             {} settled separately",
            self.margin,
            self.domain,
            self.exact_op,
            self.exact_cmp,
            self.settled.len()
        );
        // Every settled input is listed with LOWP_LIST_ALL=1; otherwise the first 20 of each
        // group, and the count of each way of settling.
        let all = std::env::var_os("LOWP_LIST_ALL").is_some();
        let mut ways: Vec<(&str, usize)> = Vec::new();
        for s in &self.settled {
            let way = s.rsplit('[').next().unwrap_or("");
            match ways.iter_mut().find(|w| w.0 == way) {
                Some(w) => w.1 += 1,
                None => ways.push((way, 1)),
            }
        }
        for (i, s) in self.settled.iter().enumerate() {
            if all || i < 20 {
                println!("    {s}");
            }
        }
        if self.settled.len() > 20 && !all {
            println!("    ... (LOWP_LIST_ALL=1 lists all)");
        }
        for (way, n) in ways {
            println!("    settled [{way}: {n}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// One-argument functions.

#[test]
fn unary_functions_are_correctly_rounded_for_every_input() {
    let mut cc = Consts::new().unwrap();
    let mut total = Tally::default();
    for ty in all_types() {
        let inf = info(&ty);
        let mut tally = Tally::default();
        for &(name, f) in &ty.unary {
            let reference = reference(name);
            for b in 0..ty.count() {
                let x = ty.x(b);
                let got = f(b);
                let y = reference(x);
                let want = ty.round_result(y);
                assert_eq!(
                    got,
                    want,
                    "{}::{name}({}): not the f64 result {y:e} rounded once",
                    ty.name,
                    ty.show(b)
                );
                // The domain is checked on every input, not only where the result is NaN: a
                // function that returns a number outside its domain must fail here.
                if ty.is_nan(b) || y.is_nan() || nan_domain(name, x) {
                    assert_eq!(
                        y.is_nan(),
                        nan_domain(name, x),
                        "{}::{name}({}): NaN does not match the domain",
                        ty.name,
                        ty.show(b)
                    );
                    tally.domain += 1;
                    continue;
                }
                if is_rounding_function(name) {
                    // y is std's exact result: rounding it once is the correct rounding.
                    tally.exact_op += 1;
                    continue;
                }
                // Known exact values must come out exactly, whether or not they are hard.
                let known = exact(name, x);
                if let Some(v) = known {
                    assert_eq!(
                        v.to_bits(),
                        y.to_bits(),
                        "{}::{name}({}): libm gives {y:e}, the exact value is {v:e}",
                        ty.name,
                        ty.show(b)
                    );
                }
                if margin_ok(&ty, y, want, margin_ulps(name, x)) {
                    tally.margin += 1;
                    continue;
                }
                let how = if known.is_some() {
                    "exact"
                } else {
                    assert!(
                        astro_settles(&ty, &inf, want, |p| astro_unary(name, x, p, &mut cc)),
                        "{}::{name}({}) = {}: not confirmed by astro-float",
                        ty.name,
                        ty.show(b),
                        ty.show(want)
                    );
                    "astro-float"
                };
                tally.settled.push(format!(
                    "{}::{name}({}) = {} [{how}]",
                    ty.name,
                    ty.show(b),
                    ty.show(want)
                ));
            }
        }
        // sin_cos is the pair of the two correctly rounded functions.
        let sin = ty.unary.iter().find(|u| u.0 == "sin").unwrap().1;
        let cos = ty.unary.iter().find(|u| u.0 == "cos").unwrap().1;
        for b in 0..ty.count() {
            assert_eq!((ty.sin_cos)(b), (sin(b), cos(b)), "{}::sin_cos", ty.name);
        }
        tally.report(&format!(
            "{} (all {} inputs, {} functions)",
            ty.name,
            ty.count(),
            ty.unary.len()
        ));
        total.margin += tally.margin;
        total.domain += tally.domain;
        total.exact_op += tally.exact_op;
        total.settled.extend(tally.settled);
    }
    println!(
        "TOTAL: {} by margin, {} NaN (domain), {} exact operations, {} settled separately",
        total.margin,
        total.domain,
        total.exact_op,
        total.settled.len()
    );
}

/// libm's error on `name(x)` in f64 ulps of its result, measured against astro-float; `None`
/// where it is not measured (exact or special results). Also checks that the 256-bit value
/// alone confirms the rounded result.
fn libm_error(ty: &Ty, inf: &Info, name: &str, b: u32, cc: &mut Consts) -> Option<f64> {
    let x = ty.x(b);
    let y = reference(name)(x);
    if !y.is_finite() || y == 0.0 || exact(name, x).is_some() {
        return None;
    }
    let Hi::Val(v) = astro_unary(name, x, P, cc) else {
        return None;
    };
    if v.is_inf() || v.is_nan() || v.is_zero() {
        return None;
    }
    let want = ty.round_result(y);
    assert!(
        astro_confirms(ty, inf, want, &Hi::Val(v.clone())),
        "{}::{name}({x:e}): astro-float disagrees",
        ty.name
    );
    let d = big(y).sub(&v, P, RM).abs();
    if d.is_zero() {
        return Some(0.0);
    }
    // |d| / ulp(y) from the leading word and the exponents (ulp(y) is a power of two).
    let top = *d.mantissa_digits()?.last()? as f64 / 2f64.powi(64);
    let field = ((y.to_bits() >> 52) & 0x7ff) as i32;
    let ulp_exp = if field == 0 { -1074 } else { field - 1075 };
    Some(top * 2f64.powi(d.exponent()? - ulp_exp))
}

/// The largest error allowed in the measurements of `name(x)`, in ulps: 4 for libm's functions,
/// 256 times below the bound `B` the margin argument assumes (the documented errors are 2 ulps
/// at most); for the compositions, the bounds `activation.rs` derives (in ulps, half its
/// half-ulp figures): 17 for tanh_shrink, `2x² + 8` for gelu, whose argument's rounding erfc
/// magnifies, and `|x| + 4` for silu below -708, where `e^x` is an f64 subnormal whose quantum
/// the product with `x` carries (the results there are below 2^-1000, `-0` in every format).
fn measured_limit(name: &str, x: f64) -> f64 {
    match name {
        "tanh_shrink" => 17.0,
        "silu" if x < -708.0 => x.abs() + 4.0,
        "gelu" => 2.0 * x * x + 8.0,
        _ => 4.0,
    }
}

/// Measures libm against astro-float on a sample of f16 and bf16 inputs, to back the error
/// bound `B` the margin argument assumes (see [`oracle_every_16_bit_input`] for all inputs).
#[test]
fn libm_error_sample() {
    let mut cc = Consts::new().unwrap();
    let types = all_types();
    for ty in &types[..2] {
        let inf = info(ty);
        for &(name, _) in ty.unary.iter().filter(|u| !is_rounding_function(u.0)) {
            let mut worst = (0.0f64, 0.0);
            // A stride coprime to the exponent field covers every binade and sign.
            for b in (0..ty.count()).step_by(97) {
                if let Some(e) = libm_error(ty, &inf, name, b, &mut cc) {
                    let x = ty.x(b);
                    assert!(
                        e < measured_limit(name, x),
                        "{} {name}({x:e}): {e} ulp",
                        ty.name
                    );
                    if e > worst.0 {
                        worst = (e, x);
                    }
                }
            }
            println!(
                "{} {name}: largest libm error in the sample {:.3} ulp (at {:e})",
                ty.name, worst.0, worst.1
            );
        }
    }
}

/// What the oracle found for one function of one format.
struct OracleResult {
    ty: &'static str,
    name: &'static str,
    /// Results confirmed by astro-float: the 256-bit (or 1024-bit) value lies strictly inside
    /// the set of reals that round to lowp's result.
    confirmed: u32,
    /// NaN results, each where the independent domain predicate says the function is undefined.
    domain: u32,
    /// Results equal to the rounding of a value known exactly ([`exact`], or the exact
    /// operations rounded once).
    exact: u32,
    /// The largest error of the f64 evaluation, in f64 ulps, and where.
    worst: (f64, f64),
}

/// The independent oracle, on demand: every one-argument function on every f16 and bf16
/// input, lowp's result bits checked against astro-float (a multiple-precision library that
/// shares nothing with lowp or libm): about 5 million results, 3.4 million of them evaluated to
/// 256 bits or more, so ignored by default (about 8 minutes on 2 cores):
///
/// `cargo test -p lowp --test math_correct_rounding -- --ignored oracle --nocapture`
///
/// Unlike the proof above it does not start from lowp's f64 value `y`: it takes the method's
/// result bits and asks astro-float whether the exact value rounds to them. It also measures
/// the error of the f64 evaluation against the limits the margin argument rests on. (The
/// tensor kernels of `lowp-tensor` return these functions' bits for every input, which that
/// crate's `tests/elementwise.rs` checks on every value, so this covers them too.)
#[test]
#[ignore]
fn oracle_every_16_bit_input() {
    let types = all_types();
    let jobs: Vec<(usize, &str)> = (0..2)
        .flat_map(|t| types[t].unary.iter().map(move |u| (t, u.0)))
        .collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let results = std::sync::Mutex::new(Vec::new());
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut cc = Consts::new().unwrap();
                let infos: Vec<Info> = types[..2].iter().map(info).collect();
                loop {
                    let j = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(t, name)) = jobs.get(j) else { break };
                    let (ty, inf) = (&types[t], &infos[t]);
                    let f = ty.unary.iter().find(|u| u.0 == name).unwrap().1;
                    let mut r = OracleResult {
                        ty: ty.name,
                        name,
                        confirmed: 0,
                        domain: 0,
                        exact: 0,
                        worst: (0.0, 0.0),
                    };
                    let fail = |what: String| failures.lock().unwrap().push(what);
                    for b in 0..ty.count() {
                        let (x, got) = (ty.x(b), f(b));
                        if x.is_nan() || nan_domain(name, x) {
                            r.domain += 1;
                            if !ty.is_nan(got) {
                                fail(format!("{}::{name}({}): not NaN", ty.name, ty.show(b)));
                            }
                            continue;
                        }
                        let known = if is_rounding_function(name) {
                            Some(reference(name)(x))
                        } else {
                            exact(name, x)
                        };
                        if let Some(v) = known {
                            r.exact += 1;
                            if got != ty.round(v) {
                                fail(format!("{}::{name}({}): not {v:e}", ty.name, ty.show(b)));
                            }
                            continue;
                        }
                        if astro_settles(ty, inf, got, |p| astro_unary(name, x, p, &mut cc)) {
                            r.confirmed += 1;
                        } else {
                            fail(format!(
                                "{}::{name}({}) = {}: astro-float disagrees",
                                ty.name,
                                ty.show(b),
                                ty.show(got)
                            ));
                        }
                        if let Some(e) = libm_error(ty, inf, name, b, &mut cc) {
                            if e >= measured_limit(name, x) {
                                fail(format!("{}::{name}({x:e}): f64 error {e} ulp", ty.name));
                            }
                            if e > r.worst.0 {
                                r.worst = (e, x);
                            }
                        }
                    }
                    results.lock().unwrap().push(r);
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by(|a, b| (a.ty, a.name).cmp(&(b.ty, b.name)));
    let mut total = [0u64; 3];
    for r in &results {
        println!(
            "{} {}: {} confirmed by astro-float, {} exact, {} NaN (domain); largest f64 error \
             {:.3} ulp (at {:e})",
            r.ty, r.name, r.confirmed, r.exact, r.domain, r.worst.0, r.worst.1
        );
        total[0] += u64::from(r.confirmed);
        total[1] += u64::from(r.exact);
        total[2] += u64::from(r.domain);
    }
    let failures = failures.into_inner().unwrap();
    println!(
        "ORACLE: {} functions x every f16 and bf16 input: {} results confirmed by astro-float, \
         {} exact, {} NaN; {} disagreements",
        results.len() / 2,
        total[0],
        total[1],
        total[2],
        failures.len()
    );
    assert!(failures.is_empty(), "{failures:#?}");
}

// ---------------------------------------------------------------------------------------------
// Two-argument functions with libm: powf, atan2, log, powi.

/// Whether `name(x, y)` is undefined.
fn nan_domain2(name: &str, x: f64, y: f64) -> bool {
    match name {
        "powf" => {
            if y == 0.0 || x == 1.0 {
                false
            } else {
                x.is_nan()
                    || y.is_nan()
                    || (x < 0.0 && x.is_finite() && y.is_finite() && y.fract() != 0.0)
            }
        }
        "atan2" => x.is_nan() || y.is_nan(),
        "log" => {
            // log2 of each side: NaN below zero, -inf at 0, 0 at 1, +inf at +inf.
            let class = |t: f64| {
                if t.is_nan() || t < 0.0 {
                    'n'
                } else if t == 0.0 || t.is_infinite() {
                    'i'
                } else if t == 1.0 {
                    '0'
                } else {
                    'f'
                }
            };
            let (cx, cb) = (class(x), class(y));
            cx == 'n' || cb == 'n' || (cx == 'i' && cb == 'i') || (cx == '0' && cb == '0')
        }
        _ => unreachable!(),
    }
}

fn is_odd_integer(y: f64) -> bool {
    y.is_finite() && y.fract() == 0.0 && (y / 2.0).fract() != 0.0
}

/// The exact value of `name(x, y)` where it is known in closed form: the special values of C's
/// `pow` and `atan2`, and logarithms of powers of two to power-of-two bases.
fn exact2(name: &str, x: f64, y: f64) -> Option<f64> {
    match name {
        "powf" => {
            if y == 0.0 || x == 1.0 {
                return Some(1.0);
            }
            if x.is_nan() || y.is_nan() {
                return None;
            }
            if x == 0.0 {
                return Some(match (y > 0.0, is_odd_integer(y)) {
                    (true, true) => x,
                    (true, false) => 0.0,
                    (false, true) => 1.0 / x,
                    (false, false) => f64::INFINITY,
                });
            }
            if x.is_infinite() {
                return Some(match (y > 0.0, x > 0.0 || !is_odd_integer(y)) {
                    (true, true) => f64::INFINITY,
                    (true, false) => f64::NEG_INFINITY,
                    (false, true) => 0.0,
                    (false, false) => -0.0,
                });
            }
            if y.is_infinite() {
                return Some(if x.abs() == 1.0 {
                    1.0
                } else if (x.abs() < 1.0) == (y > 0.0) {
                    0.0
                } else {
                    f64::INFINITY
                });
            }
            None
        }
        "atan2" => {
            // Here `x` is the y coordinate and `y` the x coordinate (`x.atan2(y)`). The exactly
            // zero results: y = ±0 with x >= +0, or finite y with x = +inf.
            let (yc, xc) = (x, y);
            let zero = (yc == 0.0 && (xc > 0.0 || (xc == 0.0 && xc.is_sign_positive())))
                || (yc.is_finite() && xc == f64::INFINITY);
            zero.then_some(if yc.is_sign_negative() { -0.0 } else { 0.0 })
        }
        "log" => {
            let (lx, lb) = (log2_class(x), log2_class(y));
            match (lx, lb) {
                (Some(a), Some(b))
                    if a.is_infinite() || b.is_infinite() || a == 0.0 || b == 0.0 =>
                {
                    Some(a / b)
                }
                _ => {
                    let (k, j) = (log2_exact(x)?, log2_exact(y)?);
                    if j == 0 {
                        return None;
                    }
                    let q = k as f64 / j as f64;
                    (q.mul_add(j as f64, -(k as f64)) == 0.0).then_some(q)
                }
            }
        }
        _ => unreachable!(),
    }
}

/// `log2(t)` where it is a special value: ∓inf at 0 and +inf, 0 at 1; else `None`. (Only for
/// `t >= 0`; negative `t` is a domain error.)
fn log2_class(t: f64) -> Option<f64> {
    if t == 0.0 {
        Some(f64::NEG_INFINITY)
    } else if t.is_infinite() {
        Some(f64::INFINITY)
    } else if t == 1.0 {
        Some(0.0)
    } else {
        None
    }
}

/// Whether `r = x^y` exactly, with exact big-float arithmetic: for `y = n / 2^s`,
/// `|r|^(2^s) = |x|^n` (or `|r|^(2^s) |x|^-n = 1` for `n < 0`), and the sign is right.
fn pow_is_exact(x: f64, y: f64, r: f64) -> bool {
    if !r.is_finite() || r == 0.0 || !x.is_finite() || x == 0.0 || !y.is_finite() {
        return false;
    }
    let mut n = y;
    let mut s = 0u32;
    while n.fract() != 0.0 {
        n *= 2.0;
        s += 1;
    }
    if s > 8 || n.abs() > 4096.0 {
        return false;
    }
    let neg = x < 0.0 && is_odd_integer(y);
    if (x < 0.0 && s > 0) || (r < 0.0) != neg {
        return false;
    }
    let bits =
        |v: f64| 64 - (v.abs().to_bits() & ((1 << 52) - 1) | 1 << 52).trailing_zeros() as usize;
    let k = 1usize << s;
    let m = n.abs() as usize;
    let p = (bits(r) * k).max(bits(x) * m) + 128;
    let lhs = big(r.abs()).powi(k, p, RM);
    let rhs = big(x.abs()).powi(m, p, RM);
    if lhs.inexact() || rhs.inexact() {
        return false;
    }
    if n >= 0.0 {
        lhs.cmp(&rhs) == Some(0)
    } else {
        let prod = lhs.mul(&rhs, 2 * p, RM);
        !prod.inexact() && prod.cmp(&big(1.0)) == Some(0)
    }
}

/// The proof for one pair: returns how it was settled, or panics.
#[allow(clippy::too_many_arguments)]
fn check_pair(
    ty: &Ty,
    inf: &Info,
    name: &str,
    a: u32,
    b: u32,
    got: u32,
    y: f64,
    cc: &mut Consts,
    tally: &mut Tally,
) {
    let (x1, x2) = (ty.x(a), ty.x(b));
    let what = || format!("{}::{name}({}, {})", ty.name, ty.show(a), ty.show(b));
    if name == "atan2" && tiny_quotient(x1, x2) {
        check_atan2_tiny(ty, inf, x1, x2, got, cc, tally.exact_cmp < 2000);
        tally.exact_cmp += 1;
        return;
    }
    let want = ty.round_result(y);
    assert_eq!(
        got,
        want,
        "{}: not the f64 result {y:e} rounded once",
        what()
    );
    if y.is_nan() || nan_domain2(name, x1, x2) {
        assert_eq!(
            y.is_nan(),
            nan_domain2(name, x1, x2),
            "{}: NaN does not match the domain",
            what()
        );
        tally.domain += 1;
        return;
    }
    let known = exact2(name, x1, x2);
    if let Some(v) = known {
        assert_eq!(
            v.to_bits(),
            y.to_bits(),
            "{}: libm gives {y:e}, exactly {v:e}",
            what()
        );
    }
    if margin_ok(ty, y, want, B_ULPS) {
        tally.margin += 1;
        return;
    }
    let how = if known.is_some() {
        "exact"
    } else {
        let eval = |p| match name {
            "powf" => astro_pow(x1, x2, y, p, cc),
            "atan2" => astro_atan2(x1, x2, p, cc),
            "log" => astro_log(x1, x2, p, cc),
            _ => unreachable!(),
        };
        if astro_settles(ty, inf, want, eval) {
            "astro-float"
        } else if name == "powf" && pow_is_exact(x1, x2, y) {
            "exact (checked with exact powers)"
        } else {
            panic!("{} = {}: not confirmed", what(), ty.show(want));
        }
    };
    tally
        .settled
        .push(format!("{} = {} [{how}]", what(), ty.show(want)));
}

/// Whether `atan2(y, x)` is in the range the crate rounds from the quotient: `x > 0`, `y != 0`
/// finite, `|y/x| < 2^-14`.
fn tiny_quotient(y: f64, x: f64) -> bool {
    x > 0.0 && x.is_finite() && y != 0.0 && y.is_finite() && (y / x).abs() < 1.0 / 16384.0
}

/// `atan2(y, x)` for a tiny quotient `q = y/x`: `atan(q)` lies strictly between `q (1 - q²/3)`
/// and `q`, so compared with a boundary `b` it is on the side of `q`, which `y - b x` (exact in
/// f64) tells, provided `|q - b| > 2^-29 |q|`, which is checked; and just below `b` in magnitude
/// when `q = b`. A sample is confirmed with astro-float as well.
fn check_atan2_tiny(ty: &Ty, inf: &Info, y: f64, x: f64, got: u32, cc: &mut Consts, astro: bool) {
    let q_sign = if y > 0.0 { Greater } else { Less };
    let mut cmp = |b: f64| {
        if b == 0.0 {
            return q_sign;
        }
        let d = (-b).mul_add(x, y); // y - b x, exact (at most 23 significant bits)
        if d == 0.0 {
            return q_sign.reverse(); // q = b: atan(q) is just inside, toward zero
        }
        assert!(
            d.abs() > y.abs() * 2f64.powi(-29),
            "{}: boundary too close",
            ty.name
        );
        if d > 0.0 { Greater } else { Less }
    };
    let what = || format!("{}::atan2({y:e}, {x:e}) = {}", ty.name, ty.show(got));
    assert!(verify_exact(ty, inf, got, &mut cmp, u32::MAX), "{}", what());
    if astro {
        assert!(
            astro_settles(ty, inf, got, |p| astro_atan2(y, x, p, cc)),
            "{}: astro-float disagrees",
            what()
        );
    }
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u32) -> u32 {
        (self.next() >> 32) as u32 % n
    }
}

/// Random pairs for the 16-bit formats: the number per function.
const PAIRS_16: usize = 200_000;

#[test]
fn powf_atan2_log_are_correctly_rounded() {
    let mut cc = Consts::new().unwrap();
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for ty in all_types() {
        let inf = info(&ty);
        let exhaustive = ty.count() <= 256;
        for &(name, f) in ty.binary.iter().filter(|b| b.0 != "hypot") {
            let reference = reference2(name);
            let mut tally = Tally::default();
            let start = std::time::Instant::now();
            let mut run = |a: u32, b: u32, tally: &mut Tally| {
                let y = reference(ty.x(a), ty.x(b));
                check_pair(&ty, &inf, name, a, b, f(a, b), y, &mut cc, tally);
            };
            if exhaustive {
                for a in 0..ty.count() {
                    for b in 0..ty.count() {
                        run(a, b, &mut tally);
                    }
                }
            } else {
                for _ in 0..PAIRS_16 {
                    let (a, b) = (rng.below(ty.count()), rng.below(ty.count()));
                    run(a, b, &mut tally);
                }
                // Powers with small exponents, where exact results are common.
                if name == "powf" {
                    for _ in 0..PAIRS_16 / 4 {
                        let a = rng.below(ty.count());
                        let e = rng.below(33) as f64 / 4.0 - 4.0;
                        run(a, ty.round(e), &mut tally);
                    }
                }
            }
            let how = if exhaustive {
                "every pair"
            } else {
                "random pairs"
            };
            tally.report(&format!(
                "{}::{name} ({how}, {:.1?})",
                ty.name,
                start.elapsed()
            ));
        }
    }
}

#[test]
fn powi_is_correctly_rounded() {
    let mut cc = Consts::new().unwrap();
    // The 8-bit and narrower formats: every value with every exponent up to ±300. Beyond that
    // nothing changes: the value of these formats closest to 1 is 1 - 2^-5 or 1 + 2^-4, whose
    // 300th power, 2^-13.7 or 2^26, is already past every rounding boundary of such a format,
    // and |x^n| only moves further away as |n| grows (0, 1 and -1 give exact results for every
    // n, and the exponents tried include i32::MIN and i32::MAX).
    let narrow: Vec<i32> = (-300..=300)
        .chain([i32::MIN, i32::MIN + 1, -1000, 1000, i32::MAX - 1, i32::MAX])
        .collect();
    let wide: Vec<i32> = (-40..=40)
        .chain([i32::MIN, i32::MIN + 1, -1000, -129, 129, 1000, i32::MAX])
        .collect();
    for ty in all_types() {
        let inf = info(&ty);
        let mut tally = Tally::default();
        let (every, exps) = if ty.count() > 256 {
            (7, &wide)
        } else {
            (1, &narrow)
        };
        for b in (0..ty.count()).step_by(every) {
            for &n in exps {
                let x = ty.x(b);
                let got = (ty.powi)(b, n);
                // powi is powf with the exponent converted exactly.
                let y = pow_f64(x, n as f64);
                let want = ty.round_result(y);
                assert_eq!(got, want, "{}::powi({}, {n})", ty.name, ty.show(b));
                if y.is_nan() {
                    assert!(x.is_nan(), "{}::powi({}, {n}) is NaN", ty.name, ty.show(b));
                    tally.domain += 1;
                    continue;
                }
                if let Some(v) = exact2("powf", x, n as f64) {
                    assert_eq!(
                        v.to_bits(),
                        y.to_bits(),
                        "{}::powi({}, {n})",
                        ty.name,
                        ty.show(b)
                    );
                    tally.margin += 1;
                    continue;
                }
                if margin_ok(&ty, y, want, B_ULPS) {
                    tally.margin += 1;
                    continue;
                }
                let how =
                    if astro_settles(&ty, &inf, want, |p| astro_pow(x, n as f64, y, p, &mut cc)) {
                        "astro-float"
                    } else if pow_is_exact(x, n as f64, y) {
                        "exact (checked with exact powers)"
                    } else {
                        panic!(
                            "{}::powi({}, {n}) = {}: not confirmed",
                            ty.name,
                            ty.show(b),
                            ty.show(want)
                        );
                    };
                tally.settled.push(format!(
                    "{}::powi({}, {n}) = {} [{how}]",
                    ty.name,
                    ty.show(b),
                    ty.show(want)
                ));
            }
        }
        tally.report(&format!("{}::powi", ty.name));
    }
}

// ---------------------------------------------------------------------------------------------
// hypot and mul_add, against exact comparisons.

/// Checks `r` against the exact value given by `cmp`; `exact_zero` is the expected result when
/// the exact value is zero.
fn verify_exact(
    ty: &Ty,
    inf: &Info,
    r: u32,
    cmp: &mut dyn FnMut(f64) -> Ordering,
    zero: u32,
) -> bool {
    if cmp(0.0) == Equal {
        return r == zero;
    }
    contained(intervals(ty, inf, r), &mut |q| Some(cmp(q))) == Some(true)
}

fn check_hypot(ty: &Ty, inf: &Info, a: u32, b: u32, f: Bin) {
    let (x, y) = (ty.x(a), ty.x(b));
    let r = f(a, b);
    let what = || {
        format!(
            "{}::hypot({}, {}) = {}",
            ty.name,
            ty.show(a),
            ty.show(b),
            ty.show(r)
        )
    };
    if x.is_infinite() || y.is_infinite() {
        assert_eq!(r, ty.round(f64::INFINITY), "{}", what());
    } else if x.is_nan() || y.is_nan() {
        assert!(ty.is_nan(r), "{}", what()); // any NaN (the payload may propagate)
    } else {
        let mut cmp = |q: f64| {
            if q < 0.0 {
                Greater
            } else {
                sign3(x * x, y * y, -(q * q))
            }
        };
        assert!(
            verify_exact(ty, inf, r, &mut cmp, ty.round(0.0)),
            "{}",
            what()
        );
    }
}

#[test]
fn hypot_is_correctly_rounded() {
    let mut rng = Rng(0x0dd_ba11_cafe_f00d);
    for ty in all_types() {
        let inf = info(&ty);
        let f = ty.binary.iter().find(|b| b.0 == "hypot").unwrap().1;
        if ty.count() <= 256 {
            for a in 0..ty.count() {
                for b in 0..ty.count() {
                    check_hypot(&ty, &inf, a, b, f);
                }
            }
            continue;
        }
        for _ in 0..1_000_000 {
            check_hypot(&ty, &inf, rng.below(ty.count()), rng.below(ty.count()), f);
        }
        // Near-ties: a random boundary q and a random a <= q, b = the format's sqrt(q² - a²).
        let vals = &inf.vals;
        let start = vals.iter().position(|&v| v > 0.0).unwrap();
        let mut ties = 0;
        for _ in 0..1_000_000 {
            let i = start + rng.below((vals.len() - start - 1) as u32) as usize;
            let q = (vals[i] + vals[i + 1]) / 2.0;
            let a = ty.round(vals[start + rng.below((i - start + 1) as u32) as usize]);
            let rest = q * q - ty.x(a) * ty.x(a);
            let b = ty.round(rest.max(0.0).sqrt());
            let (x, y) = (ty.x(a), ty.x(b));
            if sign3(x * x, y * y, -(q * q)) == Equal {
                ties += 1;
            }
            check_hypot(&ty, &inf, a, b, f);
        }
        println!(
            "{}::hypot: 2,000,000 pairs, {ties} of them exact ties",
            ty.name
        );
    }
}

fn check_mul_add(ty: &Ty, inf: &Info, a: u32, b: u32, c: u32) {
    let r = (ty.mul_add)(a, b, c);
    let (x, y, z) = (ty.x(a), ty.x(b), ty.x(c));
    let p = x * y;
    if !p.is_finite() || !z.is_finite() {
        // Special operands: IEEE arithmetic on the f64s gives the special result exactly (a
        // NaN's payload aside).
        let want = ty.round(p + z);
        assert!(
            r == want || (ty.is_nan(r) && ty.is_nan(want)),
            "{}::mul_add({x:e}, {y:e}, {z:e})",
            ty.name
        );
        return;
    }
    // An exact zero is +0 unless both addends are -0.
    let zero = ty.round(
        if p == 0.0 && z == 0.0 && p.is_sign_negative() && z.is_sign_negative() {
            -0.0
        } else {
            0.0
        },
    );
    let mut cmp = |q: f64| sign3(p, z, -q);
    assert!(
        verify_exact(ty, inf, r, &mut cmp, zero),
        "{}::mul_add({}, {}, {}) = {}",
        ty.name,
        ty.show(a),
        ty.show(b),
        ty.show(c),
        ty.show(r)
    );
}

#[test]
fn mul_add_is_correctly_rounded_exhaustively_for_narrow_formats() {
    for ty in all_types().into_iter().filter(|t| t.count() <= 256) {
        let inf = info(&ty);
        let n = ty.count();
        for a in 0..n {
            for b in 0..n {
                for c in 0..n {
                    check_mul_add(&ty, &inf, a, b, c);
                }
            }
        }
        println!("{}::mul_add: all {} triples", ty.name, (n as u64).pow(3));
    }
}

#[test]
fn mul_add_is_correctly_rounded_for_16_bit_formats() {
    let mut rng = Rng(0xfeed_5eed_0123_4567);
    for ty in all_types().into_iter().filter(|t| t.count() > 256) {
        let inf = info(&ty);
        let n = ty.count();
        for _ in 0..2_000_000 {
            check_mul_add(&ty, &inf, rng.below(n), rng.below(n), rng.below(n));
        }
        // Sums near a boundary: c chosen to bring a*b close to the boundary above a value.
        for _ in 0..1_000_000 {
            let (a, b) = (rng.below(n), rng.below(n));
            let p = ty.x(a) * ty.x(b);
            let i = rng.below(inf.vals.len() as u32 - 1) as usize;
            let q = (inf.vals[i] + inf.vals[i + 1]) / 2.0;
            check_mul_add(&ty, &inf, a, b, ty.round(q - p));
        }
        // Products that are exactly a boundary, plus a tiny addend of either sign: here the f64
        // sum rounds onto the boundary and only the recovered error decides (bf16 mostly).
        let mut on_boundary = 0;
        for _ in 0..4_000_000 {
            let (a, b) = (rng.below(n), rng.below(n));
            let p = ty.x(a) * ty.x(b);
            if !p.is_finite() || p == 0.0 {
                continue;
            }
            let (lo, hi) = (p * (1.0 - 1e-12), p * (1.0 + 1e-12));
            if ty.round(lo) == ty.round(hi) {
                continue; // not a boundary
            }
            on_boundary += 1;
            for _ in 0..4 {
                let c = rng.below(n);
                let z = ty.x(c);
                if z.is_finite() && z.abs() < p.abs() * 1e-12 {
                    check_mul_add(&ty, &inf, a, b, c);
                }
                // The smallest values of either sign, which are below every product's ulp.
                check_mul_add(&ty, &inf, a, b, 1);
                if ty.fmt.signed {
                    check_mul_add(&ty, &inf, a, b, ty.fmt.sign_mask() | 1);
                }
            }
        }
        println!(
            "{}::mul_add: 7,000,000 triples, {on_boundary} products exactly on a boundary",
            ty.name
        );
    }
}

/// The exact comparison used for `mul_add` and `hypot`, cross-checked with astro-float's exact
/// arithmetic on random sums of wide exponent range.
#[test]
fn exact_sign_matches_astro_float() {
    let mut rng = Rng(42);
    for _ in 0..200_000 {
        let pick = |rng: &mut Rng| {
            let m = (rng.next() >> 53) as f64 + 1.0; // up to 11 bits
            let e = (rng.next() % 260) as i32 - 135;
            let s = if rng.next() & 1 == 0 { 1.0 } else { -1.0 };
            s * m * 2f64.powi(e)
        };
        let (x, y) = (pick(&mut rng) * pick(&mut rng), pick(&mut rng));
        let z = if rng.next().is_multiple_of(4) {
            -(x + y)
        } else {
            pick(&mut rng)
        };
        let exact = big(x).add(&big(y), 4096, RM).add(&big(z), 4096, RM);
        assert!(!exact.inexact());
        let want = if exact.is_zero() {
            Equal
        } else if exact.is_negative() {
            Less
        } else {
            Greater
        };
        assert_eq!(sign3(x, y, z), want, "{x:e} + {y:e} + {z:e}");
    }
}

// ---------------------------------------------------------------------------------------------
// Constants and exact special values.

#[test]
fn constants_are_correctly_rounded() {
    let mut cc = Consts::new().unwrap();
    let w = P + 64;
    let pi = cc.pi(w, RM);
    let e = cc.e(w, RM);
    let ln2 = cc.ln_2(w, RM);
    let ln10 = cc.ln_10(w, RM);
    let sqrt2 = big(2.0).sqrt(w, RM);
    let one = big(1.0);
    let value = |name: &str| -> BigFloat {
        match name {
            "PI" => pi.clone(),
            "TAU" => pi.mul(&big(2.0), w, RM),
            "E" => e.clone(),
            "SQRT_2" => sqrt2.clone(),
            "FRAC_1_SQRT_2" => one.div(&sqrt2, w, RM),
            "LN_2" => ln2.clone(),
            "LN_10" => ln10.clone(),
            "LOG2_E" => one.div(&ln2, w, RM),
            "LOG10_E" => one.div(&ln10, w, RM),
            "LOG2_10" => ln10.div(&ln2, w, RM),
            "LOG10_2" => ln2.div(&ln10, w, RM),
            "FRAC_PI_2" => pi.div(&big(2.0), w, RM),
            "FRAC_PI_3" => pi.div(&big(3.0), w, RM),
            "FRAC_PI_4" => pi.div(&big(4.0), w, RM),
            "FRAC_PI_6" => pi.div(&big(6.0), w, RM),
            "FRAC_PI_8" => pi.div(&big(8.0), w, RM),
            "FRAC_1_PI" => one.div(&pi, w, RM),
            "FRAC_2_PI" => big(2.0).div(&pi, w, RM),
            "FRAC_2_SQRT_PI" => big(2.0).div(&pi.sqrt(w, RM), w, RM),
            _ => panic!("{name}"),
        }
    };
    for ty in all_types() {
        let inf = info(&ty);
        assert_eq!(ty.consts.len(), 19);
        for &(name, bits) in &ty.consts {
            assert!(
                astro_confirms(&ty, &inf, bits, &Hi::Val(value(name))),
                "{}::{name} = {} is not the correctly rounded value",
                ty.name,
                ty.show(bits)
            );
        }
    }
}

macro_rules! special_values {
    ($($t:ident),*) => {$({
        let one = $t::from_f64(1.0);
        let z = $t::from_f64(0.0);
        let nz = $t::from_f64(-0.0);
        let same = |a: $t, b: $t| a.to_bits() == b.to_bits();
        let name = stringify!($t);
        if $t::FORMAT.has_zero() {
            for zero in [z, nz] {
                for (f, v) in [("exp", zero.exp()), ("exp2", zero.exp2()), ("cos", zero.cos()),
                               ("cosh", zero.cosh())] {
                    assert!(same(v, one), "{name}::{f}(±0) = 1");
                }
                for (f, v) in [("sin", zero.sin()), ("tan", zero.tan()), ("asin", zero.asin()),
                               ("atan", zero.atan()), ("sinh", zero.sinh()),
                               ("tanh", zero.tanh()), ("asinh", zero.asinh()),
                               ("atanh", zero.atanh()), ("sqrt", zero.sqrt()),
                               ("cbrt", zero.cbrt()), ("exp_m1", zero.exp_m1()),
                               ("ln_1p", zero.ln_1p()), ("trunc", zero.trunc()),
                               ("floor", zero.floor()), ("ceil", zero.ceil()),
                               ("round", zero.round()), ("to_degrees", zero.to_degrees())] {
                    assert!(same(v, zero), "{name}::{f}(±0) keeps the zero and its sign");
                }
            }
            for (f, v) in [("ln", one.ln()), ("log2", one.log2()), ("log10", one.log10()),
                           ("acos", one.acos()), ("acosh", one.acosh()),
                           ("fract", one.fract())] {
                assert!(same(v, z), "{name}::{f}(1) = +0");
            }
        } else {
            // E8M0: no zero, so exact zero results are NaN.
            assert!(one.ln().is_nan() && one.log2().is_nan() && one.acosh().is_nan());
            assert!(same(one.exp2(), $t::from_f64(2.0)) && same(one.sqrt(), one) && same(one.cbrt(), one));
        }
        assert!(same(one.exp().ln(), one) || $t::FORMAT.mantissa_bits < 4);
        // Perfect squares and cubes, powers of two and of ten.
        for bits in 0..(1u32 << $t::FORMAT.total_bits()) {
            let x = $t::from_bits(bits as _);
            let xf = x.to_f64();
            if x.is_nan() || x.is_infinite() || x.is_sign_negative() {
                continue;
            }
            let sq = xf * xf;
            if $t::from_f64(sq).to_f64() == sq {
                assert!(same($t::from_f64(sq).sqrt(), x), "{name}::sqrt({sq}) = {xf}");
            }
            let cube = xf * xf * xf;
            if $t::from_f64(cube).to_f64() == cube {
                assert!(same($t::from_f64(cube).cbrt(), x), "{name}::cbrt({cube}) = {xf}");
            }
            if xf > 0.0 && xf.log2().fract() == 0.0 {
                let k = xf.log2();
                assert!(same(x.log2(), $t::from_f64(k)), "{name}::log2({xf}) = {k}");
                if $t::from_f64(k).to_f64() == k {
                    assert!(same($t::from_f64(k).exp2(), x), "{name}::exp2({k}) = {xf}");
                }
            }
            if xf >= 1.0 && xf.log10().fract() == 0.0 && 10f64.powi(xf.log10() as i32) == xf {
                assert!(same(x.log10(), $t::from_f64(xf.log10())), "{name}::log10({xf})");
            }
            if xf.fract() == 0.0 {
                for (f, v) in [("floor", x.floor()), ("ceil", x.ceil()), ("round", x.round()),
                               ("round_ties_even", x.round_ties_even()), ("trunc", x.trunc())] {
                    assert!(same(v, x), "{name}::{f}({xf}) = {xf}");
                }
            }
        }
    })*};
}

#[test]
fn exact_special_values() {
    special_values!(
        f16, bf16, f8e4m3fn, f8e5m2, f8e4m3fnuz, f8e5m2fnuz, f8e4m3, f8e3m4, f8e8m0fnu, f6e2m3fn,
        f6e3m2fn, f4e2m1fn
    );
}

#[test]
fn documented_examples() {
    // Ties of the format resolved to even by exact results.
    assert_eq!(f16::from_f64(-25.0).exp2().to_bits(), 0); // 2^-25: tie between 0 and 2^-24
    assert_eq!(f8e5m2::from_f64(512.0).log2().to_f64(), 8.0); // 9 is a tie between 8 and 10
    assert_eq!(
        f4e2m1fn::from_f64(3.0)
            .hypot(f4e2m1fn::from_f64(4.0))
            .to_f64(),
        4.0
    ); // 5
    assert_eq!(
        f8e5m2::from_f64(3.0).powf(f8e5m2::from_f64(2.0)).to_f64(),
        8.0
    ); // 9
    // Out-of-range integers.
    assert!(f8e3m4::from_f64(15.5).ceil().is_infinite());
    assert_eq!(f6e2m3fn::from_f64(7.5).ceil().to_f64(), 7.5);
    assert!(f8e3m4::from_f64(15.5).round().is_infinite());
    // Signs and edge cases.
    assert_eq!(f16::from_f64(-0.5).ceil().to_bits(), 0x8000);
    assert_eq!(f16::from_f64(-0.5).floor().to_f64(), -1.0);
    assert_eq!(f16::from_f64(-2.5).round().to_f64(), -3.0);
    assert_eq!(f16::from_f64(2.5).round_ties_even().to_f64(), 2.0);
    assert_eq!(f16::from_f64(-1.25).fract().to_f64(), -0.25);
    assert_eq!(f16::from_f64(-2.0).fract().to_bits(), 0);
    assert!(f16::from_f64(-1.0).sqrt().is_nan());
    assert_eq!(f4e2m1fn::from_f64(-1.0).sqrt().to_bits(), 0); // no NaN: +0
    assert!(f8e8m0fnu::from_f64(0.5).ln().is_nan()); // negative: NaN
    assert!(f8e4m3fn::from_f64(0.0).recip().is_nan()); // no infinity
    assert_eq!(f6e3m2fn::from_f64(0.0).recip().to_f64(), 28.0); // saturates
    assert_eq!(f8e4m3fnuz::from_f64(-0.0).sin().to_bits(), 0);
    assert_eq!(
        f16::from_f64(1.0).powf(f16::from_f64(f64::NAN)).to_f64(),
        1.0
    );
    assert_eq!(f16::from_f64(f64::NAN).powi(0).to_f64(), 1.0);
    assert_eq!(f16::from_f64(8.0).log(f16::from_f64(4.0)).to_f64(), 1.5);
    assert!(f16::INFINITY.hypot(f16::NAN).to_bits() == f16::INFINITY.to_bits());
    // E8M0: a result below 2^-127 gives 2^-127, not NaN.
    let tiny = f8e8m0fnu::from_f64(2f64.powi(-127));
    assert_eq!(tiny.powi(10).to_bits(), 0);
    assert_eq!(tiny.powf(f8e8m0fnu::from_f64(2f64.powi(100))).to_bits(), 0);
    // mul_add rounds once: 1.75 * 0.578125 = 1 + 3/256 is a bf16 tie; a tiny addend decides.
    let (a, b) = (bf16::from_f64(1.75), bf16::from_f64(0.578125));
    let tiny = bf16::from_f64(2f64.powi(-100));
    assert_eq!(a.mul_add(b, bf16::from_f64(0.0)).to_f64(), 1.015625); // tie: to even
    assert_eq!(a.mul_add(b, tiny).to_f64(), 1.015625);
    assert_eq!(a.mul_add(b, -tiny).to_f64(), 1.0078125);
}
