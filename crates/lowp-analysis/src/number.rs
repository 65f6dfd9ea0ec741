//! Printing numbers: exact decimal expansions of f64 values and the one readable spelling the
//! tool uses everywhere.
//!
//! Every value of every lowp format (and every f64) is a dyadic rational, so it has a finite
//! decimal expansion; [`Decimal::exact`] takes it from Rust's formatting, which is exact at any
//! precision. [`readable`] then
//! applies the rule the tables use:
//!
//! * a value whose exact expansion has at most [`EXACT_DIGITS`] significant digits is printed
//!   exactly (`65504`, `0.0009765625`, `5.9604644775390625e-8`);
//! * a longer one is rounded (ties to even) to [`APPROX_DIGITS`] significant digits and marked
//!   with `≈` (`≈3.38953e38`);
//! * either way, plain notation is used when the decimal exponent is in `-4..12` (as C's `%g`
//!   does) and scientific notation (`6.103515625e-5`) otherwise.

/// The most significant digits a value may need to be printed exactly (an f64 needs at most 17
/// to be told apart, and every f16 value fits).
pub const EXACT_DIGITS: usize = 17;

/// Significant digits of an approximate value (marked with `≈`).
pub const APPROX_DIGITS: usize = 6;

/// A finite, nonzero decimal number `±d.ddd × 10^exp10`, or zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decimal {
    /// Whether the number is negative (or -0).
    pub negative: bool,
    /// Significant digits as ASCII, without leading or trailing zeros; `"0"` for zero.
    pub digits: Vec<u8>,
    /// Decimal exponent of the first digit.
    pub exp10: i32,
}

impl Decimal {
    /// The exact decimal expansion of a finite f64 (`None` for NaN and infinities).
    pub fn exact(x: f64) -> Option<Self> {
        if !x.is_finite() {
            return None;
        }
        let negative = x.is_sign_negative();
        if x == 0.0 {
            return Some(Decimal {
                negative,
                digits: b"0".to_vec(),
                exp10: 0,
            });
        }
        // Rust prints any precision exactly, and no f64 needs more than 767 significant digits.
        let text = format!("{:.766e}", x.abs());
        let (mantissa, exponent) = text.split_once('e')?;
        let mut digits: Vec<u8> = mantissa.bytes().filter(|&b| b != b'.').collect();
        let exp10 = exponent.parse().ok()?;
        while digits.last() == Some(&b'0') {
            digits.pop();
        }
        Some(Decimal {
            negative,
            digits,
            exp10,
        })
    }

    /// Whether the number is zero.
    pub fn is_zero(&self) -> bool {
        self.digits == b"0"
    }

    /// The number rounded to at most `sig` significant digits, ties to even.
    pub fn rounded(&self, sig: usize) -> Self {
        let sig = sig.max(1);
        if self.digits.len() <= sig {
            return self.clone();
        }
        let mut kept = self.digits[..sig].to_vec();
        let first_dropped = self.digits[sig];
        let rest_nonzero = self.digits[sig + 1..].iter().any(|&d| d != b'0');
        let odd = (kept[sig - 1] - b'0') % 2 == 1;
        let up = first_dropped > b'5' || (first_dropped == b'5' && (rest_nonzero || odd));
        let mut exp10 = self.exp10;
        if up {
            let mut i = sig;
            loop {
                if i == 0 {
                    kept.insert(0, b'1');
                    kept.pop();
                    exp10 += 1;
                    break;
                }
                i -= 1;
                if kept[i] == b'9' {
                    kept[i] = b'0';
                } else {
                    kept[i] += 1;
                    break;
                }
            }
        }
        while kept.len() > 1 && kept.last() == Some(&b'0') {
            kept.pop();
        }
        Decimal {
            negative: self.negative,
            digits: kept,
            exp10,
        }
    }

    /// Plain positional notation: `65504`, `0.0009765625`.
    pub fn plain(&self) -> String {
        let mut s = String::new();
        if self.negative {
            s.push('-');
        }
        let digits = std::str::from_utf8(&self.digits).unwrap_or("0");
        if self.exp10 < 0 {
            s.push_str("0.");
            s.extend(std::iter::repeat_n('0', (-self.exp10 - 1) as usize));
            s.push_str(digits);
        } else {
            let int_len = self.exp10 as usize + 1;
            if digits.len() <= int_len {
                s.push_str(digits);
                s.extend(std::iter::repeat_n('0', int_len - digits.len()));
            } else {
                s.push_str(&digits[..int_len]);
                s.push('.');
                s.push_str(&digits[int_len..]);
            }
        }
        s
    }

    /// Scientific notation: `6.103515625e-5`, `1e38`.
    pub fn scientific(&self) -> String {
        let mut s = String::new();
        if self.negative {
            s.push('-');
        }
        let digits = std::str::from_utf8(&self.digits).unwrap_or("0");
        s.push_str(&digits[..1]);
        if digits.len() > 1 {
            s.push('.');
            s.push_str(&digits[1..]);
        }
        s.push('e');
        s.push_str(&self.exp10.to_string());
        s
    }

    /// Plain notation for decimal exponents in `-4..12`, scientific otherwise.
    pub fn auto(&self) -> String {
        if self.is_zero() || (-4..12).contains(&self.exp10) {
            self.plain()
        } else {
            self.scientific()
        }
    }
}

/// The spelling of non-finite values.
fn non_finite(x: f64) -> &'static str {
    if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// The readable spelling of `x` described in the module docs: exact when it takes at most
/// `EXACT_DIGITS` significant digits, else `≈` and `APPROX_DIGITS` digits.
pub fn readable(x: f64) -> String {
    readable_with(x, EXACT_DIGITS, APPROX_DIGITS)
}

/// [`readable`] with other digit limits (the inspect header shows the input more fully).
pub fn readable_with(x: f64, exact_digits: usize, approx_digits: usize) -> String {
    match Decimal::exact(x) {
        None => non_finite(x).to_string(),
        Some(d) if d.digits.len() <= exact_digits => d.auto(),
        Some(d) => format!("≈{}", d.rounded(approx_digits).auto()),
    }
}

/// `x` known to be only an approximation (a rounded error): always `≈` and `APPROX_DIGITS`
/// digits, except zero and values that already fit.
pub fn approximate(x: f64) -> String {
    match Decimal::exact(x) {
        None => non_finite(x).to_string(),
        Some(d) if d.is_zero() => d.auto(),
        Some(d) => format!("≈{}", d.rounded(APPROX_DIGITS).auto()),
    }
}

/// The full exact decimal expansion of `x`, notation as [`Decimal::auto`] (`NaN`, `inf` for the
/// rest).
pub fn exact_string(x: f64) -> String {
    match Decimal::exact(x) {
        None => non_finite(x).to_string(),
        Some(d) => d.auto(),
    }
}

/// The shortest spelling of `x` that reads back as the same f64 (`65504`, `3.3895313892515355e38`),
/// for machine-readable output.
pub fn lossless(x: f64) -> String {
    if !x.is_finite() {
        return non_finite(x).to_string();
    }
    let s = format!("{x:?}");
    match s.strip_suffix(".0") {
        Some(int) => int.to_string(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_expansions() {
        assert_eq!(
            exact_string(0.1),
            "0.1000000000000000055511151231257827021181583404541015625"
        );
        assert_eq!(exact_string(65504.0), "65504");
        assert_eq!(exact_string(2f64.powi(-10)), "0.0009765625");
        assert_eq!(exact_string(2f64.powi(-24)), "5.9604644775390625e-8");
        assert_eq!(exact_string(2f64.powi(64)), "1.8446744073709551616e19");
        assert_eq!(exact_string(-0.0), "-0");
        let tiny = exact_string(f64::from_bits(1));
        assert!(
            tiny.starts_with("4.940656458412465441765687928682213723"),
            "{tiny}"
        );
        assert!(tiny.ends_with("625e-324"), "{tiny}");
    }

    #[test]
    fn readable_rule() {
        assert_eq!(readable(65504.0), "65504");
        assert_eq!(readable(0.0009765625), "0.0009765625");
        assert_eq!(readable(2f64.powi(-14)), "6.103515625e-5");
        assert_eq!(readable(2f64.powi(-24)), "5.9604644775390625e-8");
        assert_eq!(readable(2f64.powi(-133)), "≈9.18355e-41");
        assert_eq!(readable(3.3895313892515355e38), "≈3.38953e38");
        assert_eq!(readable(0.1), "≈0.1");
        assert_eq!(readable(-1.5), "-1.5");
        assert_eq!(readable(0.0), "0");
        assert_eq!(readable(f64::NAN), "NaN");
        assert_eq!(readable(f64::NEG_INFINITY), "-inf");
        assert_eq!(readable(1e12), "1e12");
        assert_eq!(readable(1.0 / 3.0), "≈0.333333");
        assert_eq!(readable(0.9999999999), "≈1");
        assert_eq!(readable(-2f64.powi(-30) / 3.0), "≈-3.10441e-10");
    }

    #[test]
    fn rounding_ties_to_even() {
        let d = |s: &[u8], e| Decimal {
            negative: false,
            digits: s.to_vec(),
            exp10: e,
        };
        assert_eq!(d(b"125", 0).rounded(2).plain(), "1.2");
        assert_eq!(d(b"135", 0).rounded(2).plain(), "1.4");
        assert_eq!(d(b"1251", 0).rounded(2).plain(), "1.3");
        assert_eq!(d(b"995", 0).rounded(2).plain(), "10");
    }

    #[test]
    fn lossless_spelling() {
        assert_eq!(lossless(65504.0), "65504");
        assert_eq!(lossless(2f64.powi(-24)), "5.960464477539063e-8");
        assert_eq!(lossless(3.3895313892515355e38), "3.3895313892515355e38");
    }
}
