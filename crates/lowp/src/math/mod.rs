//! The math functions, computed in f64 and rounded once: the methods of every format
//! (`f16::sin`, `bf16::gelu`, ...), and [`Function`], the same one-argument functions as values.
//!
//! Every function takes its arguments exactly into f64 (`to_f64` is exact for every format),
//! evaluates there with the `libm` crate (a port of musl/FreeBSD msun; the crate is `no_std`, so
//! not std's `f64` methods), and rounds the f64 result once into the format with
//! [`from_f64`](crate::f16::from_f64): to nearest, ties to even, with the format's own overflow,
//! NaN and zero rules. This module's docs explain why that is *correctly rounded*, and what the
//! tests (`tests/math_correct_rounding.rs`) check to prove it.
//!
//! # Why f64-then-round-once is correctly rounded
//!
//! Let `F` be a format of this crate (precision `p <= 11` bits), `x` a value of `F`, `Y = f(x)`
//! the exact result and `y` the f64 that libm returns. `RN_F` (rounding to nearest even into
//! `F`) is a monotone step function: it is constant on each interval between two consecutive
//! *boundaries*, which are
//!
//! * the midpoints between adjacent values of `F` (ties go to the even one),
//! * the overflow thresholds `±(MAX + ulp(MAX)/2)` (none in FP6/FP4, which saturate),
//! * zero, where the sign of a zero result or E8M0's NaN for non-positive values changes.
//!
//! All of them have at most `p + 1 <= 12` significant bits and exponents between -135 and 129,
//! so every boundary is an f64 number.
//!
//! **The error model.** libm's documented errors for the functions used here are below 1 ulp
//! (musl/FreeBSD `exp`, `log`, `log1p`, `sin`, `cos`, `tan`, `asin`, `acos`, `atan`, `pow`),
//! below 2 ulp (`tanh`, `asinh`, `acosh`, `atanh`), or correctly rounded (`sqrt`, `cbrt`,
//! `floor`, ...). Compositions done here (`1/sqrt(x)`, `x * (180/π)`, `log2(x)/log2(b)`) add at
//! most two more roundings. The activation functions (`sigmoid`, `log_sigmoid`, `softplus`,
//! `silu`, `softsign`, `tanh_shrink`, `gelu`) are compositions in forms that neither overflow nor
//! cancel; `activation.rs` bounds each one's error (17 ulps at most, `gelu` 520 for `|x| <= 16`
//! and `2^13` beyond, where its result is below 2^-186 and the tests use that bound). We
//! assume a bound `B = 2^10` f64 ulps of `y` (`2^13` for that tail of `gelu`), more than 250
//! times the largest documented libm error and twice the largest composition bound:
//! `|y - Y| <= B ulp(y)`, a zero `y` having the sign of `Y`
//! (exact zero results included, whose sign IEEE 754 fixes), and an infinite `y` only for an
//! infinite `Y` or `|Y| > 2^1023`. The tests measure libm against a 256-bit evaluation
//! (astro-float): on a sample of inputs of every function in the regular run, and on all f16
//! and bf16 inputs of every function in an on-demand run (the oracle,
//! `oracle_every_16_bit_input`); the largest error of libm's own functions is 1.98 ulp
//! (`tanh`), more than 500 times inside the bound, and the compositions stay within theirs.
//!
//! **The check.** If the interval `I = [y - B ulp(y), y + B ulp(y)]`, which contains `Y`, holds
//! no boundary, then `RN_F(y) = RN_F(Y)`: both ends of `I` round to the same value, so by
//! monotonicity everything in `I` does. The test computes `I` (rounded outward) for *every*
//! input of *every* format and every one-argument function and checks that its ends round to
//! the same bits as `y`. The few inputs where this fails are listed and settled one by one,
//! independently of libm: either the result is exact (`exp2(-25) = 2^-25`, which for f16 is
//! exactly the tie between 0 and the smallest subnormal and so rounds to the even 0, exactly as
//! `RN_F(y)` does since `y = Y`), or a 256-bit astro-float evaluation of `Y` shows it lies
//! strictly inside the same rounding interval as `y`. So for every input the result is
//! `RN_F(Y)`: every one-argument function is correctly rounded for every input of every format.
//!
//! The exact cases come out exact: `sqrt` of a perfect square, `exp(0) = 1`, `ln(1) = 0`,
//! `log2(2^k) = k`, `cos(0) = 1`, and so on, because libm returns them exactly and they are
//! values of the format (or ties, rounded to even).
//!
//! # Functions of two or three arguments
//!
//! * [`mul_add`](crate::f16::mul_add) is correctly rounded by construction: `a * b` is exact in
//!   f64 (at most 22 significant bits, exponents within ±270), `s = a*b + c` is rounded to f64
//!   and its error `e` is recovered exactly with TwoSum. If `e = 0`, `s` is the exact result.
//!   Otherwise the exact result lies strictly between `s` and its f64 neighbour on `e`'s side,
//!   within half the gap, and so does the number `s ± ulp(s)/4`, written `(4 sig ± 1) *
//!   2^(exp-2)` for `s = sig * 2^exp`; no f64 number, hence no boundary, separates the two, so
//!   rounding that 55-bit number exactly with the engine gives the correctly rounded result.
//! * [`hypot`](crate::f16::hypot) computes `sqrt(a*a + b*b)` in f64 and is correctly rounded; its
//!   docs give the argument.
//! * [`powf`](crate::f16::powf), [`powi`](crate::f16::powi), [`atan2`](crate::f16::atan2) and
//!   [`log`](crate::f16::log) rely on the same error model; the tests check every pair of
//!   every 8-bit and narrower format (correctly rounded) and hundreds of thousands of f16 and
//!   bf16 pairs. For f16 and bf16 they are correctly rounded except possibly when the exact
//!   result lies within `2^-40` (relative) of a boundary, and always faithful.
//!
//! One structured case defeats the error model and is handled apart: `atan2(y, x)` with a tiny
//! quotient `q = y/x`. The exact result `atan(q) = q (1 - q²/3 + ...)` is then closer to `q`
//! than an f64 can resolve, and `q` itself may be exactly a midpoint of the format (in bf16,
//! `atan2(-1.1655e-17, 2.5383e23)` has `q = -2^-134`, the tie between -0 and the smallest
//! subnormal): libm returns the tie and rounding it to even goes the wrong way. Below
//! `|q| = 2^-14` the quotient is rounded directly, nudged toward zero when it is exact (see
//! `atan2_bits`); the tests check that range against exact comparisons. No one-argument function
//! has this problem (their arguments are values of the format, never midpoints), and the
//! exhaustive proof would have caught it.

mod activation;
mod function;
mod in_f64;
mod methods;

pub use function::Function;
