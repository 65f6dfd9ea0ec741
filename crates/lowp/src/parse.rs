//! Parsing decimal strings, correctly rounded directly into each format.
//!
//! # The algorithm
//!
//! A decimal string `d` must round to nearest, ties to even, *once*, into the target format.
//! Going through f32 (or f64) and then rounding that result again is wrong: the first rounding
//! can land exactly on a midpoint of the target format, and the second rounding then breaks the
//! tie by the even rule although `d` itself was not a tie. (`"1.00048828125000001"` is just
//! above the midpoint between the f16 values 1 and 1.0009765625, so it must give the latter;
//! through f64 it becomes the midpoint itself and would give 1.)
//!
//! The parser uses three facts:
//!
//! 1. Rust's `f64::from_str` is correctly rounded, and it also checks the syntax, so exactly the
//!    strings `f32::from_str` accepts are accepted here. Call its result `x`.
//! 2. Every point where rounding into one of this crate's formats changes its result (the
//!    midpoint between two adjacent values, the overflow threshold above the largest one, and,
//!    for E8M0, which has no zero, 0 itself) is exactly an f64: a significand of at most 12
//!    bits, an exponent between -134 and 126, well inside f64's normal range.
//! 3. Rounding to f64 is monotonic. So if `d` lies strictly below such a point `b`, then `x <=
//!    b`, and if it lies strictly above, `x >= b`.
//!
//! Hence `x` can only be on the other side of a rounding point than `d` by *being* that point.
//! If it is not one, `d` and `x` lie in the same open interval between rounding points, and
//! rounding `x` (exactly representable as `sig * 2^exp`) gives the right answer. Whether `x` is
//! a rounding point is asked of the engine itself: the numbers `(4 sig - 1) * 2^(exp-2)` and `(4
//! sig + 1) * 2^(exp-2)`, a quarter of an f64 unit on either side of `x`, contain no f64 between
//! them and `x`, so no rounding point either; they round to the same value exactly when `x` is
//! not a rounding point. When they differ, `d` is compared exactly with `x` (digit by digit
//! against `x`'s exact decimal expansion, which has at most about a hundred digits because `x`
//! is such a point; see `decimal.rs`), and the result is the rounding of the nearby number on
//! `d`'s side, or of `x` itself when `d == x`.
//!
//! Underflow needs the same care: when `x` is ±0 but `d` is not zero, the result is the
//! rounding of a positive number far below every format's smallest value (`2^-1076`, with `d`'s
//! sign), which is ±0, or E8M0's smallest value 2^-127 (it has no zero). A `d` that really is
//! zero gives zero (NaN in E8M0). `inf`, `infinity` and `nan`, and overflow beyond f64, convert
//! like the corresponding f64 (see `from_f64`).
//!
//! Nothing here allocates, and the digits of the string are compared as they are read, so any
//! length of string works.

use crate::decimal::Decimal;
use crate::format::Format;
use crate::parse_error::{ParseErrorKind, ParseFloatError};
use crate::round::{self, Decoded, Rounding};
use core::cmp::Ordering;

/// The bits of the string's value in `fmt`, rounded to nearest, ties to even, in one step.
/// Special strings and out-of-range values give what the f64 of the same meaning gives in
/// [`round::encode`]: overflow and `inf` give infinity, NaN or ±MAX depending on the format,
/// `nan` gives NaN (-0 in formats without NaN, `-nan` +0, as `from_f64` gives them), negative
/// values give NaN in the unsigned E8M0.
pub(crate) fn parse_bits(fmt: &Format, s: &str) -> Result<u32, ParseFloatError> {
    if s.is_empty() {
        return Err(ParseFloatError::new(ParseErrorKind::Empty));
    }
    let x: f64 = s
        .parse()
        .map_err(|_| ParseFloatError::new(ParseErrorKind::Invalid))?;
    let nearest =
        |neg, sig, exp| round::round_finite(fmt, neg, sig, exp, Rounding::NearestEven, false);
    let bits = match round::decode_f64(x) {
        Decoded::Finite { neg, sig, exp } => {
            // sig < 2^53, so 4 sig + 1 fits easily.
            let below = nearest(neg, 4 * sig - 1, exp - 2);
            let above = nearest(neg, 4 * sig + 1, exp - 2);
            if below == above {
                below
            } else {
                // `x` is a rounding point; which side of it is the string on?
                match compare_with(Literal::scan(s), sig, exp) {
                    Ordering::Less => below,
                    Ordering::Equal => nearest(neg, sig, exp),
                    Ordering::Greater => above,
                }
            }
        }
        Decoded::Zero { neg } => {
            if Literal::scan(s).is_zero() {
                round::encode(fmt, Decoded::Zero { neg }, Rounding::NearestEven, false)
            } else {
                // Underflowed in f64: a positive number below every rounding point but 0.
                nearest(neg, 1, -1076)
            }
        }
        special => round::encode(fmt, special, Rounding::NearestEven, false),
    };
    Ok(bits)
}

/// The parts of a numeric literal that `f64::from_str` has already accepted:
/// `[+-]? int [. frac]? ([eE] [+-]? exp)?`.
struct Literal<'a> {
    /// The digits before the point (possibly none).
    int: &'a [u8],
    /// The digits after the point (possibly none).
    frac: &'a [u8],
    /// The exponent, saturated far beyond any value that matters (a string long enough to
    /// bring such an exponent back into range cannot exist in memory).
    exp: i64,
}

impl<'a> Literal<'a> {
    /// Splits a literal; only called on strings `f64::from_str` accepted as numbers.
    fn scan(s: &'a str) -> Self {
        let s = s.as_bytes();
        let s = match s.first() {
            Some(b'+' | b'-') => &s[1..],
            _ => s,
        };
        let digits = |t: &[u8]| t.iter().take_while(|b| b.is_ascii_digit()).count();
        let n = digits(s);
        let (int, rest) = s.split_at(n);
        let (frac, rest) = match rest.split_first() {
            Some((b'.', after)) => {
                let n = digits(after);
                after.split_at(n)
            }
            _ => (&rest[..0], rest),
        };
        let mut exp: i64 = 0;
        if let Some((_, after)) = rest.split_first() {
            let (negative, digits) = match after.split_first() {
                Some((b'-', d)) => (true, d),
                Some((b'+', d)) => (false, d),
                _ => (false, after),
            };
            const LIMIT: i64 = 1 << 50;
            for &b in digits.iter().take_while(|b| b.is_ascii_digit()) {
                exp = (exp * 10 + (b - b'0') as i64).min(LIMIT);
            }
            if negative {
                exp = -exp;
            }
        }
        Literal { int, frac, exp }
    }

    /// Whether every digit is zero.
    fn is_zero(&self) -> bool {
        self.int.iter().chain(self.frac).all(|&b| b == b'0')
    }
}

/// Compares the nonzero literal with `sig * 2^exp` (both magnitudes) exactly.
fn compare_with(lit: Literal<'_>, sig: u64, exp: i32) -> Ordering {
    let int_zeros = lit.int.iter().take_while(|&&b| b == b'0').count();
    // The literal is 0.D * 10^point, D starting with its first nonzero digit.
    let point = if int_zeros < lit.int.len() {
        lit.exp.saturating_add((lit.int.len() - int_zeros) as i64)
    } else {
        let frac_zeros = lit.frac.iter().take_while(|&&b| b == b'0').count();
        lit.exp.saturating_sub(frac_zeros as i64)
    };
    let digits = lit
        .int
        .iter()
        .chain(lit.frac)
        .skip_while(|&&b| b == b'0')
        .map(|&b| b - b'0');
    Decimal::from_binary(sig, exp).cmp_digits_with(digits, point)
}

macro_rules! impl_from_str {
    ($t:ident) => {
        impl core::str::FromStr for crate::$t {
            type Err = ParseFloatError;

            /// Parses a decimal string (the syntax of `f32::from_str`, see [`ParseFloatError`])
            /// and rounds its exact value to nearest, ties to even, directly into this format:
            /// never through f32 or f64 first, so there is no double rounding. Overflow, `inf`
            /// and `nan` give what `from_f64` gives for the f64 of the same meaning (infinity,
            /// else NaN, else ±MAX; NaN, or in formats without NaN a zero of the sign opposite
            /// to the NaN's: `nan` gives -0, `-nan` +0); a nonzero value too
            /// small for the format gives ±0, or the smallest value in a format without zero
            /// (E8M0), and `-0` gives -0 where the format has it. Any length of digit string and
            /// any exponent is accepted; this never panics.
            fn from_str(s: &str) -> Result<Self, ParseFloatError> {
                parse_bits(&Self::FORMAT, s).map(|bits| Self(bits as _))
            }
        }
    };
}

crate::for_each_format!(impl_from_str);

#[cfg(test)]
mod tests {
    use crate::{bf16, f8e8m0fnu, f16};

    #[test]
    fn double_rounding_cases() {
        let h = |s: &str| s.parse::<f16>().unwrap().to_bits();
        let b = |s: &str| s.parse::<bf16>().unwrap().to_bits();
        assert_eq!(h("1.00048828125000001"), 0x3c01);
        assert_eq!(h("1.00048828125"), 0x3c00);
        assert_eq!(h("1.00048828124999999"), 0x3c00);
        assert_eq!(b("1.00390625000001"), 0x3f81);
        assert_eq!(b("1.00390625"), 0x3f80);
    }

    #[test]
    fn no_zero() {
        let e = |s: &str| s.parse::<f8e8m0fnu>().unwrap().to_bits();
        assert_eq!(e("1e-400"), 0x00);
        assert_eq!(e("0"), 0xff);
        assert_eq!(e("-1e-400"), 0xff);
        assert_eq!(e("1"), 127);
    }
}
