//! The activation functions of machine learning in f64: forms that neither overflow nor
//! cancel, with the error bound that the proof of correct rounding (the `math` module docs)
//! needs of each.
//!
//! `u = 2^-53` is the unit roundoff of f64; libm's `exp`, `log1p`, `tanh` and `erfc` are within
//! 2 ulps of the exact value, so each function below is within `8u` (relative) of the exact
//! result except where its own docs say more. Every bound is far inside the `2^10` f64 ulps
//! that the proof assumes, except `gelu` far out on its negative tail, whose docs and test
//! give the wider bound used there.

/// The logistic function `1 / (1 + e^-x)`, as `1 / (1 + e^-x)` for `x >= 0` and `e^x / (1 +
/// e^x)` below, so that `e^(±x)` never overflows: three roundings and libm's `exp`, within
/// `5u`. `+inf` gives 1, `-inf` gives `+0`, NaN gives NaN.
pub(super) fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + libm::exp(-x))
    } else {
        let e = libm::exp(x);
        e / (1.0 + e)
    }
}

/// `ln(sigmoid(x))` as `min(x, 0) - ln(1 + e^-|x|)`: both terms are `<= 0`, so the sum cannot
/// cancel, and `e^-|x| <= 1` cannot overflow; within `6u`. `+inf` gives `-0` (the limit from
/// below), `-inf` gives `-inf`, NaN gives NaN.
pub(super) fn log_sigmoid(x: f64) -> f64 {
    let m = if x < 0.0 { x } else { 0.0 };
    // Negated last, so that a result too small to show is -0, not +0.
    -(libm::log1p(libm::exp(-libm::fabs(x))) - m)
}

/// Whether `x` is nonzero and below 2^-60 in magnitude, where `silu(x)` and `gelu(x)` are
/// `x/2 + c x² + O(x³)` (`c` = 1/4 and 1/√(2π)) and f64 cannot show the `c x²`: `1 + e^-x` and
/// `erfc(-x/√2)` round to 2 and 1, and the result to exactly `x/2`, which is a tie of the
/// format when `x` is a subnormal with an odd last bit (bf16 `silu(2^-133)` came out 0 where
/// the exact result, just above 2^-134, rounds to 2^-133).
fn is_tiny(x: f64) -> bool {
    x != 0.0 && libm::fabs(x) < 1.0 / 1_152_921_504_606_846_976.0
}

/// `x/2` moved one f64 ulp up, for a tiny `x` (see [`is_tiny`]): the exact `x/2 + c x²` lies
/// strictly between the two, since `c x²` is positive and below 2^-61 of `x/2`, a fraction of
/// an ulp, and no rounding boundary (at most 12 significant bits) lies strictly between two
/// adjacent f64 numbers; so both round like the exact result.
fn just_above_half(x: f64) -> f64 {
    libm::nextafter(0.5 * x, f64::INFINITY)
}

/// Softplus, `ln(1 + e^x)`, as `max(x, 0) + ln(1 + e^-|x|)`: both terms are `>= 0`, so the
/// sum cannot cancel, and `e^-|x| <= 1` cannot overflow; within `6u`. `+inf` gives `+inf`,
/// `-inf` gives `+0`, `±0` gives `ln 2`, NaN gives NaN.
pub(super) fn softplus(x: f64) -> f64 {
    let m = if x > 0.0 { x } else { 0.0 };
    m + libm::log1p(libm::exp(-libm::fabs(x)))
}

/// `x * sigmoid(x)` as `x / (1 + e^-x)` for `x >= 0` and `x e^x / (1 + e^x)` below (within
/// `6u`; below `-708`, where `e^x` is an f64 subnormal, within `|x|` times its 2^-1074
/// quantum, which is below 2^10 quanta of the result), and near 0 `x/2` nudged up (see
/// [`is_tiny`]). `+inf` gives `+inf`, `-inf` gives `-0` (`-inf * 0` would be NaN), `±0`
/// gives `±0`, NaN gives NaN.
pub(super) fn silu(x: f64) -> f64 {
    if is_tiny(x) {
        return just_above_half(x);
    }
    if x >= 0.0 {
        x / (1.0 + libm::exp(-x))
    } else if x == f64::NEG_INFINITY {
        -0.0
    } else {
        let e = libm::exp(x);
        x * e / (1.0 + e)
    }
}

/// `x / (1 + |x|)`: two roundings, within `2u`; exact results (`softsign(1) = 1/2`) come out
/// exact whenever `1 + |x|` is exact in f64. `±inf` gives `±1` (`inf / inf` would be NaN),
/// `±0` gives `±0`, NaN gives NaN.
pub(super) fn softsign(x: f64) -> f64 {
    if x.is_infinite() {
        libm::copysign(1.0, x)
    } else {
        x / (1.0 + libm::fabs(x))
    }
}

/// Taylor coefficients of `x - tanh(x)` (of x^3, x^5, ..., x^33), from the Bernoulli numbers:
/// `-2^(2n) (2^(2n) - 1) B_2n / (2n)!` for the power `2n - 1`.
const TANH_SHRINK_SERIES: [f64; 16] = [
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
];

/// `x - tanh(x)` without the cancellation of the naive form near 0, nor a false tie where the
/// exact result is just past one.
///
/// Below 1/2 in magnitude, the Taylor series to `x^33`: the first omitted term is below `2^-53`
/// of the sum at 1/2 (much less nearer 0), and Horner's scheme on these alternating, quickly
/// falling terms is within a few ulps.
///
/// From 1/2 on, `(x ∓ 1) ± d` with `d = 1 - tanh|x| = 2e^-2|x| / (1 + e^-2|x|)` (within `4u`),
/// `x ∓ 1` being exact. Where `d` is far below an ulp of `x ∓ 1`, a plain sum would give
/// `x ∓ 1` itself, which may be exactly a tie of the format while the exact result lies just
/// past it (e4m3fn `tanh_shrink(18)` is `17 + 4.6e-16`, above the midpoint 17 between 16 and
/// 18), so the sum is taken with [`sum_off_boundaries`]. The error is `d`'s, at most `4u · d`,
/// which is at most 16 ulps of the result (the worst ratio `d / result` is at `x = 1/2`, where
/// `d ≈ 0.54` and the result `≈ 0.038`), plus one ulp for the sum. `±inf` gives `±inf`, `±0`
/// gives `±0`, NaN gives NaN.
pub(super) fn tanh_shrink(x: f64) -> f64 {
    let a = libm::fabs(x);
    if a < 0.5 {
        let x2 = x * x;
        let poly = TANH_SHRINK_SERIES
            .iter()
            .rev()
            .fold(0.0, |acc, &c| acc * x2 + c);
        poly * x2 * x
    } else if a == f64::INFINITY {
        x
    } else {
        let t = libm::exp(-2.0 * a);
        // Past |x| = 372, e^-2|x| underflows; the smallest positive f64 stands in for d then,
        // which keeps the sum's direction and is within 2^-1074 of the true d.
        let d = if t == 0.0 {
            f64::from_bits(1)
        } else {
            2.0 * t / (1.0 + t)
        };
        let sign = libm::copysign(1.0, x);
        sum_off_boundaries(x - sign, sign * d)
    }
}

/// `a + b` rounded to f64, except that when the sum is inexact and its rounding landed on an
/// f64 with 12 or fewer significant bits (which a rounding boundary of a lowp format may be),
/// the neighbour on the side of the exact sum is returned instead.
///
/// The exact sum lies strictly between the two (its rounding error `e`, recovered exactly by
/// TwoSum, is nonzero and under half an ulp), the neighbour has 53 significant bits and so is
/// no boundary, and no boundary lies strictly between two adjacent f64s: the result rounds into
/// every format as the exact sum does, at the cost of one ulp.
fn sum_off_boundaries(a: f64, b: f64) -> f64 {
    let (s, e) = super::in_f64::two_sum(a, b);
    let short = s.to_bits() & ((1 << 41) - 1) == 0;
    if e != 0.0 && short && s.is_finite() {
        libm::nextafter(
            s,
            if e > 0.0 {
                f64::INFINITY
            } else {
                f64::NEG_INFINITY
            },
        )
    } else {
        s
    }
}

/// The exact (erf) GELU, `x Φ(x)` with `Φ` the standard normal distribution function, as
/// `x/2 · erfc(-x/√2)`: erfc keeps the tiny values of large negative `x` that `1 + erf` would
/// cancel to zero.
///
/// Error: the argument `z = -x/√2` carries a relative error below `2u` (the constant and the
/// product), which erfc magnifies by `|z erfc'(z) / erfc(z)| < 2z² + 1` for `z > 0` (that is,
/// `x < 0`): `(2x² + 2)u`. With erfc's own error (a few tens of ulps far out on its tail) and
/// two more roundings, the tests measure within `(4x² + 16)u`, that is `2x² + 8` ulps, on
/// every f16 and bf16 input (which include every value of every other lowp format). That is
/// below 2^10 ulps for `|x| <= 16`, where the result is at least 2^-186 in magnitude: far
/// below half of the smallest value any lowp format holds (bf16's 2^-133). Further out the
/// result is below 2^-186 and within `2x² + 8 < 2^13` ulps (erfc underflows to 0 before
/// `x = -38.6`), so it rounds to `-0` in every format either way; the tests use that wider
/// bound there. Near 0 the result is `x/2` nudged up (see [`is_tiny`]). For `x > 0`, `erfc(z)` lies in `[1, 2]`
/// and its argument error is damped, not magnified: within `6u`. `+inf` gives `+inf`, `-inf`
/// gives `-0` (`-inf * 0` would be NaN), `±0` gives `±0`, NaN gives NaN.
pub(super) fn gelu(x: f64) -> f64 {
    if is_tiny(x) {
        return just_above_half(x);
    }
    if x == f64::NEG_INFINITY {
        -0.0
    } else {
        0.5 * x * libm::erfc(-x * core::f64::consts::FRAC_1_SQRT_2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tanh_shrink_is_accurate_near_zero() {
        // x - tanh(x) in f64 where the cancellation still leaves 40 bits or more.
        for &x in &[0.01f64, 0.1, 0.3, 0.4999, 0.5, 0.7, -0.1] {
            let naive = x - libm::tanh(x);
            assert!(
                ((tanh_shrink(x) - naive) / naive).abs() < 1e-11,
                "{x}: {} {naive}",
                tanh_shrink(x)
            );
        }
        // Near 0 the first term rules: x^3 / 3 (the next, -2x^5/15, is 4e-19 of it).
        let x = 1e-9f64;
        assert!((tanh_shrink(x) / (x * x * x / 3.0) - 1.0).abs() < 1e-15);
        assert_eq!(tanh_shrink(0.0).to_bits(), 0);
        assert_eq!(tanh_shrink(-0.0).to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    fn the_forms_neither_overflow_nor_give_nan_at_infinities() {
        assert_eq!(sigmoid(-1000.0), 0.0);
        assert_eq!(sigmoid(1000.0), 1.0);
        assert!((sigmoid(-20.0) - 2.061153618190204e-9).abs() < 1e-22);
        assert_eq!(log_sigmoid(1000.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(log_sigmoid(-1000.0), -1000.0);
        assert_eq!(silu(f64::NEG_INFINITY).to_bits(), (-0.0f64).to_bits());
        assert_eq!(silu(f64::INFINITY), f64::INFINITY);
        assert_eq!(softsign(f64::NEG_INFINITY), -1.0);
        assert_eq!(gelu(f64::NEG_INFINITY).to_bits(), (-0.0f64).to_bits());
        assert_eq!(gelu(f64::INFINITY), f64::INFINITY);
        // Not flushed to 0 by 1 + erf cancelling.
        assert!(gelu(-30.0) < 0.0);
    }
}
