//! The VALUE of `lowp inspect`: a number written out (a decimal, or a hexadecimal float as Rust
//! and C write them), or a bit pattern of a format.

use crate::bits;
use crate::error::Error;
use lowp::Format;

/// What the user gave to inspect.
#[derive(Clone, Copy)]
pub enum Input {
    /// A number written out, decimal (`"0.1"`, `"-2.5e3"`, `"inf"`, `"-nan"`) or hexadecimal
    /// (`"0x1.8p3"`), as its nearest f64 (`1e400` is infinity here). Each format rounds the
    /// written number itself, once ([`round_once`]); this f64 stands in for it in the error
    /// columns.
    Decimal(f64),
    /// A bit pattern of a format (`0x3c00 --as f16`); `bits` fits the format.
    Bits {
        /// The format the bits belong to.
        ops: &'static Format,
        /// The pattern.
        bits: u32,
    },
}

impl Input {
    /// Reads the VALUE. Bit patterns (`0x…`, `0b…` without a point or a `p` exponent) need
    /// `as_format`; hexadecimal floats (`0x1.8p3`, `-0x1p-149`) are read exactly; decimals are
    /// read with Rust's f64 parser (which also takes `inf`, `infinity` and `nan`). `as_arg` is
    /// how the caller's user gives `as_format` (`"--as FORMAT"` on the command line,
    /// `"source='FORMAT'"` in Python), for the error messages; its example replaces FORMAT
    /// with f16.
    pub fn parse(
        text: &str,
        as_format: Option<&'static Format>,
        as_arg: &str,
    ) -> Result<Self, Error> {
        if let Some(hex) = HexFloat::parse(text) {
            return hex
                .map(|h| Input::Decimal(h.to_f64()))
                .map_err(Error::invalid);
        }
        if bits::looks_like_bits(text) {
            let Some(ops) = as_format else {
                let example = as_arg.replace("FORMAT", "f16");
                return Err(Error::invalid(format!(
                    "'{text}' looks like a bit pattern; say which format it belongs to with {as_arg} (e.g. {example}), or write a hexadecimal float with a point or a p exponent (0x1.8p3)"
                )));
            };
            return bits::parse(text, ops)
                .map(|bits| Input::Bits { ops, bits })
                .map_err(Error::invalid);
        }
        let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
        if bits::looks_like_bits(unsigned) {
            return Err(Error::invalid(format!(
                "'{text}' is not a number: a bit pattern has no sign, and a hexadecimal float \
                 needs a point or a p exponent ({}p0)",
                text.trim_end_matches('.')
            )));
        }
        text.parse::<f64>().map(Input::Decimal).map_err(|_| {
            Error::invalid(format!(
                "invalid value '{text}': expected a decimal number (0.1, -2.5e3, 1e-8, inf, -inf, nan), a hexadecimal float (0x1.8p3, -0x1p-149) or, with {as_arg}, a bit pattern (0x3c00, 0b0011110000000000)"
            ))
        })
    }

    /// What the f64 stand-in of a written-out number lost, in words, when the number is beyond
    /// f64's range (`1e400 is beyond f64's range: read as inf; …`) or nonzero below half its
    /// smallest subnormal (`1e-400 is below f64's smallest subnormal: read as 0; …`), and what
    /// the errors are measured against instead ([`measured_as`]); `None` when the f64 is the
    /// number or its nearest neighbour, and for bit patterns.
    pub fn f64_note(&self, text: &str) -> Option<String> {
        let Input::Decimal(x) = *self else {
            return None;
        };
        let sign = if x.is_sign_negative() { "-" } else { "" };
        // The error columns measure against `measured_as`, not the f64 read: say which.
        match f64_lost(x, text)? {
            Lost::Overflow => Some(format!(
                "{text} is beyond f64's range: read as {sign}inf; errors are measured against \
                 {sign}f64::MAX"
            )),
            Lost::Underflow => Some(format!(
                "{text} is below f64's smallest subnormal: read as {sign}0; errors are measured \
                 against {sign}0x1p-1074, that subnormal"
            )),
        }
    }
}

/// How a written number's nearest f64 failed to hold it.
enum Lost {
    /// A finite number read as infinity.
    Overflow,
    /// A nonzero number read as zero.
    Underflow,
}

/// Whether `x`, the nearest f64 of the number `text` writes, lost it entirely.
fn f64_lost(x: f64, text: &str) -> Option<Lost> {
    if x.is_infinite() && !is_infinity_word(text) {
        Some(Lost::Overflow)
    } else if x == 0.0 && !written_zero(text) {
        Some(Lost::Underflow)
    } else {
        None
    }
}

/// The f64 to measure the rounding of the number `text` against, `x` being its nearest f64:
/// `x` itself, except where f64 lost the number ([`Input::f64_note`]): then f64's largest
/// finite value or its smallest subnormal, with the sign, so that a format's infinity for
/// `1e400` reads as an overflow and its zero for `1e-400` as an underflow, not as exact.
pub fn measured_as(x: f64, text: &str) -> f64 {
    match f64_lost(x, text) {
        Some(Lost::Overflow) => f64::MAX.copysign(x),
        Some(Lost::Underflow) => f64::from_bits(1).copysign(x),
        None => x,
    }
}

/// Whether `text` spells infinity (`inf`, `-Infinity`) rather than a number too large.
fn is_infinity_word(text: &str) -> bool {
    let word = text.strip_prefix(['+', '-']).unwrap_or(text);
    word.eq_ignore_ascii_case("inf") || word.eq_ignore_ascii_case("infinity")
}

/// Whether the digits of an accepted number (decimal or hexadecimal) are all zero.
fn written_zero(text: &str) -> bool {
    let unsigned = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (hex, digits) = match unsigned.get(..2) {
        Some("0x" | "0X") => (true, &unsigned[2..]),
        _ => (false, unsigned),
    };
    let mantissa = if hex {
        digits.split(['p', 'P']).next().unwrap_or("")
    } else {
        digits.split(['e', 'E']).next().unwrap_or("")
    };
    mantissa.chars().all(|c| matches!(c, '0' | '.' | '_'))
}

/// `text` rounded once, to nearest, ties to even, into `ops`: a decimal by lowp's own parser,
/// which rounds the exact decimal ([`Format::parse`]), a hexadecimal float from its exact
/// binary value ([`HexFloat::round_into`]). `None` for anything else (bit patterns).
pub fn round_once(ops: &Format, text: &str) -> Option<u32> {
    match HexFloat::parse(text) {
        Some(hex) => hex.ok().map(|h| h.round_into(ops)),
        None => ops.parse(text).ok(),
    }
}

/// A hexadecimal floating-point literal, `[+-]0x` hex digits with an optional `.`, then an
/// optional binary exponent `p[+-]digits` (`0x1.8p3` = 12, `-0x1p-149`, `0X.8P1`, `0x1.8`),
/// as Rust's `hexf` and C's `%a` write them; `_` may separate digits, as in bit patterns.
///
/// The value is kept exactly enough to round it correctly anywhere: the leading 64 bits of the
/// significand, a sticky flag for any nonzero bit beyond them, and a binary exponent, so any
/// number of digits and any exponent are read without loss that could change a rounding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HexFloat {
    /// The sign (`-0x0p0` is -0).
    pub negative: bool,
    /// The leading 64 bits of the significand, the top one set; 0 for a zero.
    pub top: u64,
    /// Whether any bit below `top` is nonzero.
    pub sticky: bool,
    /// The magnitude is `top * 2^exp` (plus less than `2^exp` when `sticky`).
    pub exp: i64,
}

/// Exponents are saturated here: far beyond every f64, yet far from overflowing an i64 as the
/// digits and the exponent are combined.
const EXP_LIMIT: i64 = 1 << 40;

impl HexFloat {
    /// Reads `text` when it is written as a hexadecimal float: `None` when it is not one at all
    /// (no `0x` after the sign, or neither a point nor a `p`, as in the bit pattern `0x3c00`),
    /// `Some(Err)` with the reason when it starts as one but is malformed.
    pub fn parse(text: &str) -> Option<Result<HexFloat, String>> {
        let (negative, unsigned) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let body = match unsigned.get(..2) {
            Some("0x" | "0X") => &unsigned[2..],
            _ => return None,
        };
        if !body.contains(['.', 'p', 'P']) {
            return None;
        }
        Some(Self::parse_body(negative, body).map_err(|why| {
            format!(
                "'{text}' is not a hexadecimal float ({why}): write hex digits with an optional \
                 point and an optional binary exponent, as in 0x1.8p3 (12), -0x1p-149 or 0x1.8"
            )
        }))
    }

    /// Reads what follows `0x`.
    fn parse_body(negative: bool, body: &str) -> Result<HexFloat, &'static str> {
        let (mantissa, exponent) = match body.find(['p', 'P']) {
            Some(at) => (&body[..at], Some(&body[at + 1..])),
            None => (body, None),
        };
        let mut top: u64 = 0;
        let mut sticky = false;
        let mut exp: i64 = 0;
        let mut seen_point = false;
        let mut digits = 0usize;
        let mut last_was_digit = false;
        for c in mantissa.chars() {
            if c == '.' {
                if seen_point {
                    return Err("two points");
                }
                seen_point = true;
                last_was_digit = false;
                continue;
            }
            if c == '_' {
                if !last_was_digit {
                    return Err("'_' only goes between digits");
                }
                continue;
            }
            let Some(d) = c.to_digit(16) else {
                return Err("not a hex digit");
            };
            digits += 1;
            last_was_digit = true;
            if top >> 60 == 0 {
                top = top << 4 | u64::from(d);
                if seen_point {
                    exp -= 4;
                }
            } else {
                // Beyond 64 bits: only whether something is there matters, and where the
                // point is.
                sticky |= d != 0;
                if !seen_point {
                    exp = (exp + 4).min(EXP_LIMIT);
                }
            }
        }
        if digits == 0 {
            return Err("no hex digits");
        }
        if mantissa.ends_with('_') || mantissa.contains("_.") {
            return Err("'_' only goes between digits");
        }
        if let Some(e) = exponent {
            let (sign, digits) = match e.as_bytes().first() {
                Some(b'-') => (-1, &e[1..]),
                Some(b'+') => (1, &e[1..]),
                _ => (1, e),
            };
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err("the exponent after p needs decimal digits");
            }
            let value = digits
                .bytes()
                .fold(0i64, |v, b| (v * 10 + i64::from(b - b'0')).min(EXP_LIMIT));
            exp += sign * value;
        }
        if top == 0 {
            // Only zeros were written: nothing can sit below them.
            return Ok(HexFloat {
                negative,
                top: 0,
                sticky: false,
                exp: 0,
            });
        }
        let shift = top.leading_zeros();
        Ok(HexFloat {
            negative,
            top: top << shift,
            sticky,
            exp: exp - i64::from(shift),
        })
    }

    /// The nearest f64, ties to even: ±infinity beyond f64's range, ±0 below half its smallest
    /// subnormal.
    pub fn to_f64(&self) -> f64 {
        let magnitude = if self.top == 0 {
            0.0
        } else {
            // The exponent of the last kept bit: 53 bits for normals, fixed at 2^-1074 below.
            let msb = self.exp + 63;
            let quantum = (msb - 52).max(-1074);
            let drop = quantum - self.exp; // at least 11
            if msb > 1023 {
                f64::INFINITY
            } else if drop > 64 {
                0.0
            } else {
                let kept = if drop == 64 { 0 } else { self.top >> drop };
                let rest = if drop == 64 {
                    self.top
                } else {
                    self.top & ((1u64 << drop) - 1)
                };
                let half = 1u64 << (drop - 1);
                let up = rest > half || (rest == half && (self.sticky || kept & 1 == 1));
                from_parts(kept + u64::from(up), quantum)
            }
        };
        if self.negative { -magnitude } else { magnitude }
    }

    /// The value rounded once, to nearest, ties to even, into `ops`, as [`Format::parse`]
    /// rounds a decimal: overflow gives what an f64 too large for the format gives (infinity,
    /// NaN or ±MAX, as the format has it), a nonzero value too small gives ±0 (the smallest
    /// value in E8M0, which has no zero).
    ///
    /// The value is first rounded to 53 bits *to odd* (truncated, the last bit set when
    /// anything nonzero was cut), which is an f64, then to nearest into the format by
    /// [`Format::from_f64`]. Rounding to odd with at least two more bits than the target
    /// keeps the value on the same side of every point where the target's rounding changes
    /// (those points have at most 12 significant bits), so the two steps give what one
    /// rounding of the exact value gives. Values far outside every format's range are first
    /// replaced by ±2^±300, which round the same way.
    pub fn round_into(&self, ops: &Format) -> u32 {
        let magnitude = if self.top == 0 {
            0.0
        } else if self.exp + 63 > 300 {
            from_parts(1, 300)
        } else if self.exp + 63 < -300 {
            from_parts(1, -300)
        } else {
            let odd = (self.top & 0x7ff != 0 || self.sticky) as u64;
            from_parts(self.top >> 11 | odd, self.exp + 11)
        };
        ops.from_f64(if self.negative { -magnitude } else { magnitude })
    }
}

/// `sig * 2^quantum` as an f64, for a `sig` of at most 2^53 and a result within f64's range or
/// rounding to infinity exactly at `2^1024` (the carry of a rounding).
fn from_parts(sig: u64, quantum: i64) -> f64 {
    let (mut sig, mut quantum) = (sig, quantum);
    if sig == 1 << 53 {
        sig >>= 1;
        quantum += 1;
    }
    if sig == 0 {
        return 0.0;
    }
    // Normalize a small significand (never below 2^-1074's quantum).
    while sig < 1 << 52 && quantum > -1074 {
        sig <<= 1;
        quantum -= 1;
    }
    if sig < 1 << 52 {
        return f64::from_bits(sig); // subnormal
    }
    let biased = quantum + 52 + 1023;
    if biased >= 2047 {
        return f64::INFINITY;
    }
    f64::from_bits((biased as u64) << 52 | (sig - (1 << 52)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::lookup;

    /// The command line's spelling.
    const AS: &str = "--as FORMAT";

    #[test]
    fn decimals() {
        assert!(matches!(Input::parse("0.1", None, AS), Ok(Input::Decimal(x)) if x == 0.1));
        assert!(
            matches!(Input::parse("-inf", None, AS), Ok(Input::Decimal(x)) if x == f64::NEG_INFINITY)
        );
        assert!(
            matches!(Input::parse("1e400", None, AS), Ok(Input::Decimal(x)) if x == f64::INFINITY)
        );
        assert!(Input::parse("abc", None, AS).is_err());
        assert!(Input::parse("", None, AS).is_err());
        assert!(Input::parse(" 1", None, AS).is_err());
    }

    #[test]
    fn hex_floats_read_exactly() {
        let read = |t: &str| match Input::parse(t, None, AS) {
            Ok(Input::Decimal(x)) => x,
            Ok(_) => panic!("{t} read as bits"),
            Err(e) => panic!("{t}: {e}"),
        };
        assert_eq!(read("0x1.8p3"), 12.0);
        assert_eq!(read("-0x1.8p3"), -12.0);
        assert_eq!(read("+0X1.8P+3"), 12.0);
        assert_eq!(read("0x1.8"), 1.5);
        assert_eq!(read("0x.8p1"), 1.0);
        assert_eq!(read("0x1."), 1.0);
        assert_eq!(read("0xAbC.dEfp0"), 0xabcdef as f64 / 4096.0);
        assert_eq!(read("0x1_000.0p0"), 4096.0);
        // As Python's float.hex() writes them.
        assert_eq!(read("0x1.8000000000000p+3"), 12.0);
        assert_eq!(read("-0x1.999999999999ap-4"), -0.1);
        assert_eq!(read("0x1p-149"), f32::from_bits(1) as f64);
        assert_eq!(read("0x1p-126"), f32::MIN_POSITIVE as f64);
        assert_eq!(read("0x1.fffffep127"), f32::MAX as f64);
        assert_eq!(read("0x1p-1074"), f64::from_bits(1));
        assert_eq!(read("0x1.fffffffffffffp1023"), f64::MAX);
        // f64's own limits: ties to even at the bottom, overflow past MAX + half its spacing.
        assert_eq!(read("0x1p-1075").to_bits(), 0);
        assert_eq!(read("-0x1p-1075").to_bits(), (-0.0f64).to_bits());
        assert_eq!(read("0x1.00000000000000000001p-1075"), f64::from_bits(1));
        assert_eq!(read("0x3p-1075"), f64::from_bits(2)); // 1.5 quanta: to even, 2
        assert_eq!(read("0x1.fffffffffffff7ffffffp1023"), f64::MAX);
        assert_eq!(read("0x1.fffffffffffff8p1023"), f64::INFINITY);
        assert_eq!(read("0x1p1024"), f64::INFINITY);
        assert_eq!(read("-0x1p99999999999999999999"), f64::NEG_INFINITY);
        assert_eq!(read("0x1p-99999999999999999999"), 0.0);
        assert_eq!(read("-0x0.0p0").to_bits(), (-0.0f64).to_bits());
        // One ulp of 1 in f64 and a sticky bit far below: the tie breaks upward.
        assert_eq!(read("0x1.00000000000008p0"), 1.0);
        assert_eq!(
            read("0x1.000000000000080000000000000000001p0"),
            1.0 + f64::EPSILON
        );
        // With --as, a hex float is a number, not a bit pattern.
        let f16 = lookup("f16").unwrap();
        assert!(matches!(
            Input::parse("0x1.8p3", Some(f16), AS),
            Ok(Input::Decimal(x)) if x == 12.0
        ));
        for bad in [
            "0x",
            "0x.",
            "0xp3",
            "0x1p",
            "0x1p+",
            "0x1.8.8p1",
            "0x1g.0",
            "0x1p3.5",
            "0x1p0x3",
            "0x_1.0",
            "0x1_.0",
            "0x1.0_",
            "-0xp1",
            "0x1.8 p3",
        ] {
            let err = Input::parse(bad, None, AS).err().unwrap().to_string();
            assert!(err.contains("0x1.8p3"), "{bad}: {err}");
        }
        // A sign is no bit pattern; the message says how to write the number.
        let err = Input::parse("-0x3c00", Some(f16), AS)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("-0x3c00p0"), "{err}");
        let err = Input::parse("0x18", None, AS).err().unwrap().to_string();
        assert!(err.contains("--as f16") && err.contains("0x1.8p3"), "{err}");
    }

    #[test]
    fn special_values_and_f64_overflow_are_said() {
        let note = |t: &str| Input::parse(t, None, AS).unwrap().f64_note(t);
        assert_eq!(
            note("1e400").as_deref(),
            Some("1e400 is beyond f64's range: read as inf; errors are measured against f64::MAX")
        );
        assert_eq!(
            note("-1e400").as_deref(),
            Some(
                "-1e400 is beyond f64's range: read as -inf; errors are measured against -f64::MAX"
            )
        );
        assert_eq!(
            note("0x1p1024").as_deref(),
            Some(
                "0x1p1024 is beyond f64's range: read as inf; errors are measured against f64::MAX"
            )
        );
        assert_eq!(
            note("1e-400").as_deref(),
            Some(
                "1e-400 is below f64's smallest subnormal: read as 0; errors are measured against 0x1p-1074, that subnormal"
            )
        );
        for plain in [
            "inf",
            "-inf",
            "+Infinity",
            "nan",
            "-nan",
            "0",
            "-0.0e9",
            "0x0p5",
            "1.5",
        ] {
            assert_eq!(note(plain), None, "{plain}");
        }
        let x = |t: &str| match Input::parse(t, None, AS) {
            Ok(Input::Decimal(x)) => x,
            _ => panic!("{t}"),
        };
        assert!(x("-nan").is_nan() && x("-inf") == f64::NEG_INFINITY);
    }

    /// A small generator, so the cases are the same on every run.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// The exact decimal value of the unsigned hex float `0x<digits>p<exp>` (an integer's hex
    /// digits, no point), as `DIGITSe-K`: computed with decimal big numbers, independently of
    /// the parser under test.
    fn exact_decimal(digits: &str, exp: i64) -> String {
        // Little-endian limbs of 10^9.
        let mut n: Vec<u64> = vec![0];
        let mul_add = |n: &mut Vec<u64>, m: u64, a: u64| {
            let mut carry = a;
            for limb in n.iter_mut() {
                let v = *limb * m + carry;
                *limb = v % 1_000_000_000;
                carry = v / 1_000_000_000;
            }
            while carry > 0 {
                n.push(carry % 1_000_000_000);
                carry /= 1_000_000_000;
            }
        };
        for c in digits.chars() {
            mul_add(&mut n, 16, u64::from(c.to_digit(16).unwrap()));
        }
        let (factor, times) = if exp >= 0 { (2, exp) } else { (5, -exp) };
        for _ in 0..times {
            mul_add(&mut n, factor, 0);
        }
        let mut text = n.last().unwrap().to_string();
        for limb in n.iter().rev().skip(1) {
            text.push_str(&format!("{limb:09}"));
        }
        let shift = if exp >= 0 { 0 } else { -exp };
        format!("{text}e-{shift}")
    }

    /// `x` (finite, positive) as `0x<odd integer digits>p<exp>`.
    fn hex_of(x: f64) -> (String, i64) {
        let bits = x.to_bits();
        let (e, m) = ((bits >> 52) as i64, bits & ((1 << 52) - 1));
        let (m, e) = if e == 0 {
            (m, -1074)
        } else {
            (m | 1 << 52, e - 1075)
        };
        let zeros = m.trailing_zeros();
        (format!("{:x}", m >> zeros), e + i64::from(zeros))
    }

    /// Hex floats round as the exact value they write: against Rust's decimal parser for the
    /// nearest f64 and lowp's decimal parser for every format (both correctly rounded, both
    /// fed the exact decimal expansion), on random long literals across every format's range
    /// and f64's, and on every tie between neighbouring values of every format, with a bit
    /// just above and just below each.
    #[test]
    fn hex_floats_round_once_like_their_exact_decimal() {
        let formats: Vec<&'static Format> = crate::registry::all().collect();
        let check = |digits: &str, exp: i64, negative: bool| {
            let sign = if negative { "-" } else { "" };
            let text = format!("{sign}0x{digits}p{exp}");
            let decimal = format!("{sign}{}", exact_decimal(digits, exp));
            let hex = HexFloat::parse(&text).unwrap().unwrap();
            let want: f64 = decimal.parse().unwrap();
            assert_eq!(hex.to_f64().to_bits(), want.to_bits(), "{text} = {decimal}");
            for ops in &formats {
                assert_eq!(
                    Some(hex.round_into(ops)),
                    ops.parse(&decimal).ok(),
                    "{text} into {}",
                    ops.name
                );
                assert_eq!(round_once(ops, &text), Some(hex.round_into(ops)));
            }
        };
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let len = 1 + rng.below(24) as usize;
            let mut digits: String = (0..len)
                .map(|_| char::from_digit(rng.below(16) as u32, 16).unwrap())
                .collect();
            // Runs of zeros and of f's make near-ties.
            if rng.below(3) == 0 {
                let fill = if rng.below(2) == 0 { '0' } else { 'f' };
                let at = rng.below(len as u64) as usize;
                digits.insert_str(at, &fill.to_string().repeat(1 + rng.below(20) as usize));
            }
            let bits = 4 * digits.len() as i64;
            let exp = match rng.below(4) {
                0 => rng.below(300) as i64 - 150 - bits, // every lowp format's range
                1 => rng.below(40) as i64 - 1090 - bits, // f64's subnormals
                2 => rng.below(12) as i64 + 1016 - bits, // f64's top
                _ => rng.below(2200) as i64 - 1100 - bits, // anywhere
            };
            check(&digits, exp, rng.below(2) == 0);
        }
        for ops in &formats {
            let mut values: Vec<(f64, u32)> = (0..=ops.bits_mask())
                .map(|b| (ops.to_f64(b), b))
                .filter(|(v, _)| v.is_finite() && *v > 0.0)
                .collect();
            values.sort_by(|a, b| a.0.total_cmp(&b.0));
            // Every pair of the small formats; in f16 and bf16 both ends of the range and
            // every 97th pair between.
            let n = values.len();
            let pairs = values
                .windows(2)
                .enumerate()
                .filter(|(k, _)| n < 1000 || *k < 300 || *k + 300 > n || k % 97 == 0);
            for (_, pair) in pairs {
                let ((lo, lo_bits), (hi, hi_bits)) = (pair[0], pair[1]);
                let (digits, exp) = hex_of((lo + hi) / 2.0);
                check(&digits, exp, false);
                check(&digits, exp, true);
                let tie = HexFloat::parse(&format!("0x{digits}p{exp}"))
                    .unwrap()
                    .unwrap();
                assert!(
                    [lo_bits, hi_bits].contains(&tie.round_into(ops)),
                    "{}",
                    ops.name
                );
                // A 1 eighty bits below the midpoint, and the midpoint less that much.
                let above = format!("{digits}{}1", "0".repeat(19));
                check(&above, exp - 80, false);
                let above = HexFloat::parse(&format!("0x{above}p{}", exp - 80))
                    .unwrap()
                    .unwrap();
                assert_eq!(above.round_into(ops), hi_bits, "{}", ops.name);
                let below = u128::from_str_radix(&digits, 16).unwrap() << 80;
                let below = format!("{:x}", below - 1);
                check(&below, exp - 80, false);
                let below = HexFloat::parse(&format!("0x{below}p{}", exp - 80))
                    .unwrap()
                    .unwrap();
                assert_eq!(below.round_into(ops), lo_bits, "{}", ops.name);
            }
        }
    }

    #[test]
    fn bit_patterns() {
        let f16 = lookup("f16").unwrap();
        assert!(matches!(
            Input::parse("0x3c00", Some(f16), AS),
            Ok(Input::Bits { bits: 0x3c00, .. })
        ));
        let err = Input::parse("0x3c00", None, AS).err().unwrap();
        assert!(err.to_string().contains("--as FORMAT (e.g. --as f16)"));
        let err = Input::parse("0x3c00", None, "source='FORMAT'")
            .err()
            .unwrap();
        let message = err.to_string();
        assert!(
            message.contains("with source='FORMAT' (e.g. source='f16')"),
            "{message}"
        );
        assert!(!message.contains("--"), "{message}");
        let err = Input::parse("0x1ffff", Some(f16), AS).err().unwrap();
        assert!(matches!(err, Error::Invalid(_)));
        assert!(err.to_string().contains("16 bits"), "{}", err.to_string());
    }
}
