//! `Display`, `Debug`, `LowerExp` and `UpperExp`, and [`Shortest`]: the shortest decimal that
//! reads back.
//!
//! # The formatting traits: the value's f32
//!
//! The types print as the `half` crate prints its `f16` and `bf16`, and the `float8` crate its
//! FP8 types, so that switching from either changes no output: the value is widened to f32
//! (exactly: every value of every format is an f32) and printed by `f32`'s own trait, with the
//! formatter's flags for `Display` and `Debug`, and without them for `LowerExp` and `UpperExp`
//! (`half` and `float8` write `{:e}` of the f32, dropping precision and width). The f16 nearest
//! to 0.1 prints as `0.099975586`. The ten formats that `half` lacks follow the same rule, so
//! that every type prints alike.
//!
//! # `Shortest`: the shortest decimal that reads back
//!
//! [`Shortest`] (made by each type's `shortest` method) prints fewer digits where fewer
//! identify the value. Without a precision, a finite nonzero value prints the decimal with the
//! fewest significant digits that this crate's `FromStr` rounds back to the same value; among
//! the decimals of that length, the one nearest to the exact value (an exact tie goes to the even last digit). So
//! `f16::from_f64(0.1)`, exactly 0.0999755859375, prints as `0.1`, where printing its f32 would
//! give `0.099975586`. The notations are those of Rust's `f32`:
//!
//! * `Display`: positional, never an exponent (`65500` for f16::MAX, `0.1`, `0.00006104`);
//! * `LowerExp`/`UpperExp`: `6.55e4`, `1e-1`, `1E-1`;
//! * `Debug`: positional with at least one fractional digit (`1.0`) for `1e-4 <= |x| < 1e16`,
//!   otherwise as `LowerExp`.
//!
//! With a precision (`{:.3}`, `{:.1e}`) the exact value is rounded to that many digits after the
//! point. Every value of every format is exactly an f32, so this, zero, infinity and NaN are
//! handed to `f32`'s own implementation, which is exact: `{:.1e}` of `f16::from_f64(PI)`
//! (3.140625) is `3.1e0`. Width, fill, alignment and the `+` and `0` flags behave as for `f32`.
//! NaN prints as `NaN` (never with a sign), infinities as `inf` and `-inf`, negative zero as
//! `-0` (`-0.0` in `Debug`).
//!
//! # The rounding interval
//!
//! A value `v = M * 2^Q` (`M` its integer significand, `2^Q` its quantum) owns the numbers
//! between the midpoints to its neighbours: from `(2M - 1) * 2^(Q-1)` to `(2M + 1) * 2^(Q-1)`,
//! except that at a power of two `M = 2^m` above the bottom binade the spacing below halves and
//! the lower midpoint is `(4M - 1) * 2^(Q-2)`; in E8M0, whose every value is a power of two, it
//! always is. Whether a midpoint itself belongs to `v` is asked of the rounding engine (ties to
//! even, so the interval is closed when `M` is even and open when it is odd; in E8M0, whose only
//! significand bit is odd, ties go up, so there it is `[low, high)`). The interval is thus
//! exactly the set of decimals that read back to `v`, with two deliberate exceptions at the ends
//! of the range, where it is cut where it would be with an unbounded exponent range:
//!
//! * in FP6 and FP4, which have neither infinity nor NaN, every number above MAX reads back as
//!   MAX (it saturates); the interval of MAX still ends at the overflow threshold `(M + 1/2) *
//!   2^Q`, so `f6e3m2fn::MAX` prints as `28` rather than as `30`, and `f6e2m3fn::MAX` as `7.5`
//!   rather than `8`;
//! * in E8M0, every positive number below its smallest value 2^-127 reads back as 2^-127; its
//!   interval still starts at `0.75 * 2^-127` (this changes nothing: it prints `6e-39` either
//!   way).
//!
//! Both cuts only shrink the interval, so the printed decimal always reads back. The exact
//! decimal expansions of `v` and both ends, and the search for the shortest decimal between
//! them, are in `decimal.rs`.

use crate::LowpFloat;
use crate::decimal::{self, Decimal};
use crate::format::Format;
use crate::round::{self, Decoded, Rounding};
use core::fmt;

/// Which formatting trait is asked for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Display,
    Debug,
    LowerExp,
    UpperExp,
}

/// One end of a rounding interval: the boundary `sig * 2^exp` and whether it belongs to the
/// interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct End {
    sig: u64,
    exp: i32,
    inclusive: bool,
}

/// The rounding interval of the positive value `sig * 2^exp` with magnitude bits `mag` in `fmt`
/// (see the module documentation): its lower and upper ends.
fn interval(fmt: &Format, mag: u32, sig: u64, exp: i32) -> (End, End) {
    let man = fmt.mantissa_bits;
    // Below a power of two the spacing halves, except in the bottom binade of a format with
    // subnormals, whose lower neighbour is a subnormal with the same spacing.
    let halves = sig == 1 << man && (exp > fmt.min_quantum_exponent() || !fmt.subnormals);
    let (low_sig, low_exp) = if halves {
        (4 * sig - 1, exp - 2)
    } else {
        (2 * sig - 1, exp - 1)
    };
    let (high_sig, high_exp) = (2 * sig + 1, exp - 1);
    let rounds_here =
        |s, e| round::round_finite(fmt, false, s, e, Rounding::NearestEven, false) == mag;
    let high_inclusive = if mag == fmt.max_finite_bits() && !fmt.has_nan() {
        // The engine saturates here; with an unbounded exponent a tie would stay only if the
        // significand were even (MAX's is all ones, so it never does).
        sig % 2 == 0
    } else {
        rounds_here(high_sig, high_exp)
    };
    let low = End {
        sig: low_sig,
        exp: low_exp,
        inclusive: rounds_here(low_sig, low_exp),
    };
    let high = End {
        sig: high_sig,
        exp: high_exp,
        inclusive: high_inclusive,
    };
    (low, high)
}

/// The shortest decimal in the rounding interval of the positive value `sig * 2^exp` with
/// magnitude bits `mag` in `fmt`, and the exact decimal of the value itself.
fn shortest(fmt: &Format, mag: u32, sig: u64, exp: i32) -> (Decimal, Decimal) {
    let (low, high) = interval(fmt, mag, sig, exp);
    let value = Decimal::from_binary(sig, exp);
    let digits = decimal::shortest(
        &value,
        &Decimal::from_binary(low.sig, low.exp),
        low.inclusive,
        &Decimal::from_binary(high.sig, high.exp),
        high.inclusive,
    );
    (digits, value)
}

/// A fixed buffer for one formatted number. The longest output is well below its size: at most
/// 144 digits (see `decimal.rs`), 45 zeros between the point and the first digit (the smallest
/// value is 2^-134 > 10^-41) or after the digits (the largest is below 10^39), a point and an
/// exponent.
struct Buf {
    bytes: [u8; 256],
    len: usize,
}

impl Buf {
    fn push(&mut self, b: u8) -> fmt::Result {
        let slot = self.bytes.get_mut(self.len).ok_or(fmt::Error)?;
        *slot = b;
        self.len += 1;
        Ok(())
    }

    fn digits(&mut self, digits: &[u8]) -> fmt::Result {
        digits.iter().try_for_each(|&d| self.push(b'0' + d))
    }

    fn zeros(&mut self, n: i32) -> fmt::Result {
        (0..n).try_for_each(|_| self.push(b'0'))
    }

    fn as_str(&self) -> Result<&str, fmt::Error> {
        core::str::from_utf8(&self.bytes[..self.len]).map_err(|_| fmt::Error)
    }
}

/// Formats the value with bits `bits` of `fmt`, whose exact f32 is `exact`, in the given style.
pub(crate) fn write_value(
    fmt: &Format,
    bits: u32,
    exact: f32,
    f: &mut fmt::Formatter<'_>,
    style: Style,
) -> fmt::Result {
    let (neg, sig, exp) = match round::decode(fmt, bits) {
        Decoded::Finite { neg, sig, exp } if f.precision().is_none() => (neg, sig, exp),
        // Zero, infinity, NaN, or a precision: f32 prints these exactly as wanted.
        _ => {
            return match style {
                Style::Display => fmt::Display::fmt(&exact, f),
                Style::Debug => fmt::Debug::fmt(&exact, f),
                Style::LowerExp => fmt::LowerExp::fmt(&exact, f),
                Style::UpperExp => fmt::UpperExp::fmt(&exact, f),
            };
        }
    };
    let (d, value) = shortest(fmt, bits & fmt.magnitude_mask(), sig, exp);
    let exponent = match style {
        Style::Display => None,
        Style::LowerExp => Some(b'e'),
        Style::UpperExp => Some(b'E'),
        // `value` lies in [10^(point-1), 10^point): below 1e-4 iff point <= -4, at or above
        // 1e16 iff point >= 17. (f32 compares with the f32s nearest to 1e-4 and 1e16, and no
        // f32 lies between those and the exact powers, so the decision is the same.)
        Style::Debug => (value.point() <= -4 || value.point() >= 17).then_some(b'e'),
    };
    let digits = d.digits();
    let point = d.point();
    let mut buf = Buf {
        bytes: [0; 256],
        len: 0,
    };
    match exponent {
        Some(e) => {
            buf.digits(&digits[..1])?;
            if digits.len() > 1 {
                buf.push(b'.')?;
                buf.digits(&digits[1..])?;
            }
            buf.push(e)?;
            let mut power = point - 1;
            if power < 0 {
                buf.push(b'-')?;
                power = -power;
            }
            // At most three digits: |power| < 160.
            let mut started = false;
            for div in [100, 10, 1] {
                let d = (power / div % 10) as u8;
                if d != 0 || started || div == 1 {
                    started = true;
                    buf.push(b'0' + d)?;
                }
            }
        }
        None => {
            let n = digits.len() as i32;
            if point <= 0 {
                buf.push(b'0')?;
                buf.push(b'.')?;
                buf.zeros(-point)?;
                buf.digits(digits)?;
            } else if point < n {
                buf.digits(&digits[..point as usize])?;
                buf.push(b'.')?;
                buf.digits(&digits[point as usize..])?;
            } else {
                buf.digits(digits)?;
                buf.zeros(point - n)?;
                if style == Style::Debug {
                    buf.push(b'.')?;
                    buf.push(b'0')?;
                }
            }
        }
    }
    f.pad_integral(!neg, "", buf.as_str()?)
}

/// Prints a value as the shortest decimal that reads back as the same value: `0.1` for the
/// f16 nearest to 0.1, where the standard formatting traits print its f32, `0.099975586`.
///
/// The notation follows the trait: `{}` positional (`65500` for `f16::MAX`), `{:?}` as `f32`'s
/// `Debug` (`1.0`; an exponent below 1e-4 and from 1e16), `{:e}`/`{:E}` scientific (`6.55e4`).
/// A precision (`{:.3}`) rounds the exact value to that many decimals instead, and width,
/// fill, alignment, `+` and `0` apply as for `f32`. The module documentation of lowp's
/// `display.rs` proves that the digits read back. This is what the `lowp` command and the
/// Python module print; [`Format::display`](crate::Format::display) gives the same for bits
/// chosen at run time. Made by each type's `shortest` method.
///
/// ```
/// use lowp::{f16, f8e4m3fn};
///
/// let x = f16::from_f32(0.1);
/// assert_eq!(x.to_string(), "0.099975586"); // the f32, as the `half` crate prints it
/// assert_eq!(x.shortest().to_string(), "0.1");
/// assert_eq!(format!("{:?} {:e} {:>6}", x.shortest(), f16::MAX.shortest(), x.shortest()),
///            "0.1 6.55e4    0.1");
/// assert_eq!(f8e4m3fn::from_f32(0.3).shortest().to_string(), "0.3");
/// ```
#[derive(Clone, Copy)]
pub struct Shortest<T>(pub T);

macro_rules! impl_fmt {
    ($t:ident) => {
        impl crate::$t {
            /// The value, printed by every formatting trait as the shortest decimal that reads
            /// back as it ([`Shortest`](crate::Shortest)): `f16::from_f32(0.1).shortest()`
            /// prints `0.1`, where the value itself prints its f32, `0.099975586`.
            #[inline]
            pub const fn shortest(self) -> Shortest<crate::$t> {
                Shortest(self)
            }
        }

        impl fmt::Display for crate::$t {
            /// The value's f32 (exact: every value is one), with the formatter's flags, as the
            /// `half` and `float8` crates print: `0.099975586` for the f16 nearest to 0.1.
            /// [`shortest`](crate::$t::shortest) prints the shortest decimal that reads back.
            #[inline]
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_f32(), f)
            }
        }

        impl fmt::Debug for crate::$t {
            /// The value's f32 as `f32`'s `Debug` prints it, with the formatter's flags, as the
            /// `half` and `float8` crates print.
            #[inline]
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.to_f32(), f)
            }
        }

        impl fmt::LowerExp for crate::$t {
            /// The value's f32 in `f32`'s `{:e}` notation (`9.9975586e-2`), as the `half` and
            /// `float8` crates print it: like them, without the formatter's flags (precision,
            /// width). [`shortest`](crate::$t::shortest) honours them.
            #[inline]
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{:e}", self.to_f32())
            }
        }

        impl fmt::UpperExp for crate::$t {
            /// As `LowerExp`, with `E`.
            #[inline]
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{:E}", self.to_f32())
            }
        }
    };
}

crate::for_each_format!(impl_fmt);

/// Formats `x` as the shortest decimal, in the notation of `style`.
fn write_shortest<T: LowpFloat>(x: T, f: &mut fmt::Formatter<'_>, style: Style) -> fmt::Result {
    write_value(&T::FORMAT, x.to_bits_u32(), x.to_f32(), f, style)
}

impl<T: LowpFloat> fmt::Display for Shortest<T> {
    /// The shortest decimal that reads back, positional (`65500` for `f16::MAX`, `0.1`), or
    /// with a precision the exact value rounded to that many decimals.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_shortest(self.0, f, Style::Display)
    }
}

impl<T: LowpFloat> fmt::Debug for Shortest<T> {
    /// The shortest digits laid out as `f32`'s `Debug` lays out its own: positional with at
    /// least one decimal (`1.0`) for `1e-4 <= |x| < 1e16`, in exponent form (`1e-5`) otherwise.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_shortest(self.0, f, Style::Debug)
    }
}

impl<T: LowpFloat> fmt::LowerExp for Shortest<T> {
    /// The shortest digits in scientific notation (`6.55e4` for 65504, `1e-1`), or with a
    /// precision the exact value rounded to that many digits after the point.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_shortest(self.0, f, Style::LowerExp)
    }
}

impl<T: LowpFloat> fmt::UpperExp for Shortest<T> {
    /// As `LowerExp`, with `E` (`6.55E4`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_shortest(self.0, f, Style::UpperExp)
    }
}

/// `{:x}`, `{:X}`, `{:b}` and `{:o}` format a value's bits, as the `half` and `float8` crates'
/// types do: `format!("{:x}", f16::ONE)` is `3c00`. Like theirs, they drop the formatter's flags
/// (`{:#06x}` is `3c00` too); format [`to_bits`](crate::f16::to_bits) for width, `0` and `#`.
macro_rules! impl_bits_fmt {
    ($t:ident) => {
        impl_bits_fmt!(@each $t: LowerHex "{:x}", UpperHex "{:X}", Binary "{:b}", Octal "{:o}");
    };
    (@each $t:ident: $($trait:ident $spec:literal),*) => {$(
        impl fmt::$trait for crate::$t {
            /// Formats the bits (the integer [`to_bits`](crate::$t::to_bits) returns), without
            /// the formatter's flags, as the `half` crate does.
            #[inline]
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, $spec, self.to_bits())
            }
        }
    )*};
}

crate::for_each_format!(impl_bits_fmt);

#[cfg(test)]
mod tests {
    use super::interval;
    use crate::round::{self, Decoded};
    use crate::{bf16, f6e2m3fn, f6e3m2fn, f8e8m0fnu, f16};
    use core::fmt::Write;

    /// Formats into a fixed buffer (the crate has no `alloc`).
    struct Out {
        bytes: [u8; 128],
        len: usize,
    }

    impl Write for Out {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            let end = self.len + s.len();
            self.bytes
                .get_mut(self.len..end)
                .ok_or(core::fmt::Error)?
                .copy_from_slice(s.as_bytes());
            self.len = end;
            Ok(())
        }
    }

    fn check(args: core::fmt::Arguments<'_>, expected: &str) {
        let mut out = Out {
            bytes: [0; 128],
            len: 0,
        };
        out.write_fmt(args).unwrap();
        assert_eq!(
            core::str::from_utf8(&out.bytes[..out.len]).unwrap(),
            expected
        );
    }

    /// The claims of `decimal.rs` about the boundaries: odd significands of at most 12 bits,
    /// exponents in -134..=126; and the inclusivity rule: closed for an even significand, open
    /// for an odd one, and `[low, high)` in E8M0.
    #[test]
    fn interval_ends() {
        for fmt in &crate::format::formats::ALL {
            for bits in 0..1u32 << fmt.total_bits() {
                let Decoded::Finite {
                    neg: false,
                    sig,
                    exp,
                } = round::decode(fmt, bits)
                else {
                    continue;
                };
                let (low, high) = interval(fmt, bits, sig, exp);
                for end in [low, high] {
                    assert!(end.sig % 2 == 1 && end.sig < 1 << 12, "{}", fmt.name);
                    assert!((-134..=126).contains(&end.exp), "{} {bits:#x}", fmt.name);
                }
                assert!((-133..=127).contains(&exp));
                if fmt.mantissa_bits == 0 {
                    assert!(low.inclusive && !high.inclusive);
                } else {
                    let even = sig % 2 == 0;
                    assert_eq!((low.inclusive, high.inclusive), (even, even), "{bits:#x}");
                }
            }
        }
    }

    #[test]
    fn examples() {
        check(format_args!("{}", f16::from_f64(0.1).shortest()), "0.1");
        // 65500 lies between the midpoints 65488 and 65520 around 65504 (as in numpy).
        check(format_args!("{}", f16::MAX.shortest()), "65500");
        check(format_args!("{:e}", f16::MAX.shortest()), "6.55e4");
        check(
            format_args!("{:e}", f16::from_f64(65472.0).shortest()),
            "6.547e4",
        );
        check(format_args!("{:E}", f16::from_f64(0.1).shortest()), "1E-1");
        check(format_args!("{:?}", f16::ONE.shortest()), "1.0");
        check(
            format_args!("{:?}", f16::MIN_POSITIVE_SUBNORMAL.shortest()),
            "6e-8",
        );
        check(
            format_args!("{}", bf16::MAX.shortest()),
            "339000000000000000000000000000000000000",
        );
        check(
            format_args!("{:.1e}", f16::from_f64(core::f64::consts::PI).shortest()),
            "3.1e0",
        );
        check(
            format_args!("{:+08.2}", f16::from_f64(-1.5).shortest()),
            "-0001.50",
        );
        check(
            format_args!("{:+08}", f16::from_f64(1.5).shortest()),
            "+00001.5",
        );
        check(
            format_args!("{:<6}|", f16::from_f64(1.5).shortest()),
            "1.5   |",
        );
        // The formatting traits of the types themselves print the f32, as `half` does.
        check(format_args!("{}", f16::from_f64(0.1)), "0.099975586");
        check(format_args!("{:?}", bf16::from_f64(0.1)), "0.100097656");
        check(
            format_args!("{:.2e}|{:>12e}", f16::from_f64(0.1), f16::ONE),
            "9.9975586e-2|1e0",
        );
        check(format_args!("{:+08.2}", f16::from_f64(-1.5)), "-0001.50");
        check(format_args!("{}", f16::MAX), "65504");
        check(format_args!("{}", f6e3m2fn::MAX.shortest()), "28");
        check(format_args!("{}", f6e2m3fn::MAX.shortest()), "7.5");
        check(
            format_args!("{}", f8e8m0fnu::from_f64(1024.0).shortest()),
            "1000",
        );
        check(format_args!("{}", f16::from_f64(-0.0).shortest()), "-0");
        check(format_args!("{:?}", f16::from_f64(-0.0).shortest()), "-0.0");
        check(
            format_args!("{}", f16::from_f64(f64::NAN).shortest()),
            "NaN",
        );
        check(
            format_args!("{}", f16::from_f64(f64::NEG_INFINITY).shortest()),
            "-inf",
        );
    }
}
