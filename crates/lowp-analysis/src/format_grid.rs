//! A format's grid of values as the analyses measure against it: its spacing ([`ulp`]), the
//! largest rounding error at each magnitude ([`midpoint_errors`]) and where rounding leaves
//! its range ([`overflows`]); and [`Number`], the bound every analysis is generic over. Each
//! analysis reaches a format's type through `lowp::with_format!`.

use lowp::{Format, LowpFloat};
use lowp_tensor::FloatElement;

/// A lowp number type that is also a tensor element: what every analysis is generic over.
pub trait Number: LowpFloat + FloatElement {}
impl<T: LowpFloat + FloatElement> Number for T {}

/// The relative error of rounding the midpoint between each pair of neighbouring positive
/// values of `T` (zero included), `(midpoint, error)`: the largest relative rounding error at
/// that magnitude.
pub fn midpoint_errors<T: Number>() -> Vec<(f64, f64)> {
    let fmt = T::FORMAT;
    let values: Vec<f64> = (0..=fmt.max_finite_bits())
        .map(|b| LowpFloat::to_f64(T::from_bits_u32(b)))
        .filter(|v| v.is_finite() && *v >= 0.0)
        .collect();
    values
        .windows(2)
        .map(|w| {
            let mid = (w[0] + w[1]) / 2.0;
            (mid, (w[1] - w[0]) / 2.0 / mid)
        })
        .collect()
}

/// `2^e` as an f64, for `-1074 <= e <= 1023`.
pub fn pow2(e: i32) -> f64 {
    2f64.powi(e)
}

/// The spacing of a format's values at magnitude `y`: `2^(e - m)` where `e` is `y`'s binary
/// exponent, raised to the smallest normal exponent (the subnormal spacing below it).
pub fn ulp(format: &Format, y: f64) -> f64 {
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

#[cfg(test)]
mod tests {
    use super::*;

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
