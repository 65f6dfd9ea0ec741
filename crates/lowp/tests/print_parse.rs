//! Printing and parsing, checked exhaustively against an independent exact reference.
//!
//! The reference here shares no code with the crate's `decimal.rs`/`parse.rs`: it parses a
//! decimal string into a big integer and a power of ten itself, lists every value of a format
//! (from `to_f64`, which is exact), and rounds by binary search over the midpoints between
//! adjacent values with exact big-integer comparisons; ties go to the even bit pattern (E8M0,
//! documented: up). It answers "overflow" separately from "MAX", so that saturation in FP6/FP4
//! does not count as reading back (see `display.rs`).
//!
//! Every bit pattern of every format is printed by [`Shortest`] with `{}`, `{:e}`, `{:E}` and
//! `{:?}`, and each output must parse back to the same bits, be shortest (neither decimal with one digit fewer
//! nearest to the value reads back), and be the nearest of its length. Parsing is checked on
//! every midpoint of every format, written exactly and nudged up and down by a tiny amount, on
//! random long strings and on edge cases.

use lowp::{
    LowpFloat, ParseErrorKind, ParseFloatError, Shortest, bf16, f4e2m1fn, f6e2m3fn, f6e3m2fn,
    f8e3m4, f8e4m3, f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz, f8e8m0fnu, f16,
};
use std::cmp::Ordering;
use std::str::FromStr;

// ---------------------------------------------------------------------------------------------
// A small unsigned big integer (little-endian base 2^32), just enough for exact comparisons.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(x: u64) -> Big {
        let mut b = Big(vec![x as u32, (x >> 32) as u32]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn mul_add_small(&mut self, m: u32, a: u32) {
        let mut carry = a as u64;
        for limb in &mut self.0 {
            let t = *limb as u64 * m as u64 + carry;
            *limb = t as u32;
            carry = t >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
        self.trim();
    }

    fn mul(&self, other: &Big) -> Big {
        let mut out = vec![0u32; self.0.len() + other.0.len() + 1];
        for (i, &a) in self.0.iter().enumerate() {
            let mut carry = 0u64;
            for (j, &b) in other.0.iter().enumerate() {
                let t = out[i + j] as u64 + a as u64 * b as u64 + carry;
                out[i + j] = t as u32;
                carry = t >> 32;
            }
            let mut k = i + other.0.len();
            while carry > 0 {
                let t = out[k] as u64 + carry;
                out[k] = t as u32;
                carry = t >> 32;
                k += 1;
            }
        }
        let mut b = Big(out);
        b.trim();
        b
    }

    fn shl(&self, bits: u64) -> Big {
        if self.is_zero() {
            return self.clone();
        }
        let words = (bits / 32) as usize;
        let rem = (bits % 32) as u32;
        let mut out = vec![0u32; words];
        let mut carry = 0u32;
        for &limb in &self.0 {
            if rem == 0 {
                out.push(limb);
            } else {
                out.push(limb << rem | carry);
                carry = limb >> (32 - rem);
            }
        }
        if carry > 0 {
            out.push(carry);
        }
        Big(out)
    }

    fn pow(base: u32, n: u64) -> Big {
        let mut b = Big::from_u64(1);
        for _ in 0..n {
            b.mul_add_small(base, 0);
        }
        b
    }

    fn cmp(&self, other: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }

    /// Decimal digits (most significant first; "0" for zero).
    fn to_decimal(&self) -> String {
        let mut limbs = self.0.clone();
        let mut chunks = vec![];
        while !limbs.is_empty() {
            let mut rem = 0u64;
            for limb in limbs.iter_mut().rev() {
                let t = rem << 32 | *limb as u64;
                *limb = (t / 1_000_000_000) as u32;
                rem = t % 1_000_000_000;
            }
            while limbs.last() == Some(&0) {
                limbs.pop();
            }
            chunks.push(rem as u32);
        }
        let mut s = match chunks.pop() {
            Some(top) => top.to_string(),
            None => return "0".into(),
        };
        for c in chunks.iter().rev() {
            s.push_str(&format!("{c:09}"));
        }
        s
    }
}

// ---------------------------------------------------------------------------------------------
// Exact values: binary `sig * 2^exp` and decimal `digits * 10^exp10`.
// ---------------------------------------------------------------------------------------------

/// A positive binary value `sig * 2^exp`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Bin {
    sig: u64,
    exp: i64,
}

/// The exact value of a positive finite f64.
fn bin(x: f64) -> Bin {
    assert!(x > 0.0 && x.is_finite());
    let bits = x.to_bits();
    let field = (bits >> 52) as i64;
    let frac = bits & ((1 << 52) - 1);
    if field == 0 {
        Bin {
            sig: frac,
            exp: -1074,
        }
    } else {
        Bin {
            sig: frac | 1 << 52,
            exp: field - 1075,
        }
    }
}

/// The exact decimal digits (no trailing zeros) and point of a positive binary value: the value
/// is `0.digits * 10^point`.
fn exact_decimal(b: Bin) -> (String, i64) {
    let (n, tens) = if b.exp >= 0 {
        (Big::from_u64(b.sig).shl(b.exp as u64), 0)
    } else {
        (
            Big::from_u64(b.sig).mul(&Big::pow(5, (-b.exp) as u64)),
            -b.exp,
        )
    };
    let s = n.to_decimal();
    let point = s.len() as i64 - tens;
    (s.trim_end_matches('0').to_string(), point)
}

/// A decimal literal parsed independently of the crate: `(-1)^neg * digits * 10^exp10`.
#[derive(Clone, Debug)]
struct Dec {
    neg: bool,
    /// `digits * 10^max(exp10, 0)`.
    scaled: Big,
    /// `10^max(-exp10, 0)`.
    denominator: Big,
    /// The value is below `10^magnitude` and at least `10^(magnitude - 1)` (if nonzero).
    magnitude: i64,
    zero: bool,
}

/// What a literal means: a number, an infinity (with its sign) or a NaN.
#[derive(Clone, Debug)]
enum Literal {
    Number(Dec),
    Inf(bool),
    /// NaN, with its sign.
    Nan(bool),
}

/// Parses `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?` or inf/infinity/nan in any
/// case; `None` for anything else. Written from the grammar of `f32::from_str`'s documentation.
fn parse_literal(s: &str) -> Option<Literal> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    if lower == "inf" || lower == "infinity" {
        return Some(Literal::Inf(neg));
    }
    if lower == "nan" {
        return Some(Literal::Nan(neg));
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int, frac) = match mantissa.find('.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, ""),
    };
    let all_digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int) || !all_digits(frac) || int.len() + frac.len() == 0 {
        return None;
    }
    let mut exp10: i64 = 0;
    if let Some(e) = exponent {
        let (eneg, edigits) = match e.as_bytes().first() {
            Some(b'-') => (true, &e[1..]),
            Some(b'+') => (false, &e[1..]),
            _ => (false, e),
        };
        if edigits.is_empty() || !all_digits(edigits) {
            return None;
        }
        for b in edigits.bytes() {
            exp10 = (exp10 * 10 + (b - b'0') as i64).min(1 << 40);
        }
        if eneg {
            exp10 = -exp10;
        }
    }
    let digits: String = format!("{int}{frac}");
    let digits = digits.trim_start_matches('0');
    let exp10 = exp10 - frac.len() as i64;
    let zero = digits.is_empty();
    let magnitude = digits.len() as i64 + exp10;
    // Far outside every format's range: do not build huge numbers.
    let (scaled, denominator) = if zero || !(-80..=80).contains(&magnitude) {
        (Big::from_u64(0), Big::from_u64(1))
    } else {
        let mut d = Big::from_u64(0);
        for b in digits.bytes() {
            d.mul_add_small(10, (b - b'0') as u32);
        }
        if exp10 >= 0 {
            (d.mul(&Big::pow(10, exp10 as u64)), Big::from_u64(1))
        } else {
            (d, Big::pow(10, (-exp10) as u64))
        }
    };
    Some(Literal::Number(Dec {
        neg,
        scaled,
        denominator,
        magnitude,
        zero,
    }))
}

/// Compares the magnitude of a nonzero decimal with a positive binary value, exactly.
fn cmp_dec_bin(d: &Dec, b: Bin) -> Ordering {
    // Every binary value compared here lies in [2^-140, 2^140], within 10^-43..10^43.
    if d.magnitude < -60 {
        return Ordering::Less;
    }
    if d.magnitude > 60 {
        return Ordering::Greater;
    }
    // digits * 10^e10 vs sig * 2^exp  <=>  scaled * 2^-exp vs sig * denominator (exp < 0)...
    let lhs = d.scaled.shl(if b.exp < 0 { (-b.exp) as u64 } else { 0 });
    let rhs =
        d.denominator
            .mul(&Big::from_u64(b.sig))
            .shl(if b.exp > 0 { b.exp as u64 } else { 0 });
    lhs.cmp(&rhs)
}

// ---------------------------------------------------------------------------------------------
// The reference rounding.
// ---------------------------------------------------------------------------------------------

/// What correct rounding of a decimal into a format gives, before the format's overflow policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    /// These bits (a finite value; a zero keeps its sign where the format has -0).
    Value(u32),
    /// Beyond the overflow threshold, with this sign (or `inf` itself).
    Overflow(bool),
    /// NaN: `nan`, or a value the format cannot hold (negative or zero in E8M0).
    Nan,
}

/// Everything the reference knows about one format.
struct Table {
    name: &'static str,
    signed: bool,
    has_zero: bool,
    has_negative_zero: bool,
    has_infinity: bool,
    has_nan: bool,
    sign_mask: u32,
    /// Ties go up instead of to the even pattern (E8M0, whose only significand bit is odd).
    ties_up: bool,
    /// Positive finite nonzero values, ascending: (bits, value).
    values: Vec<(u32, f64)>,
    /// `mids[i]` lies between `values[i]` and `values[i + 1]`; the last is the overflow
    /// threshold above MAX.
    mids: Vec<Bin>,
    /// Half the smallest value (where there is zero below it).
    half_min: Bin,
    max_bits: u32,
    inf_bits: Option<u32>,
}

impl Table {
    fn new<T: LowpFloat>(from_bits: fn(u32) -> T) -> Table {
        let f = T::FORMAT;
        let mut values: Vec<(u32, f64)> = (0..1u32 << f.total_bits())
            .map(|b| (b, from_bits(b).to_f64()))
            .filter(|&(_, v)| v.is_finite() && v > 0.0)
            .collect();
        values.sort_by(|a, b| a.1.partial_cmp(&b.1).unwrap());
        values.dedup_by(|a, b| a.1 == b.1);
        let n = values.len();
        let mut mids: Vec<Bin> = values
            .windows(2)
            .map(|w| bin((w[0].1 + w[1].1) / 2.0))
            .collect();
        let max = values[n - 1].1;
        // The value MAX would be followed by with an unbounded exponent range.
        let next = if f.mantissa_bits == 0 {
            2.0 * max
        } else {
            2.0 * max - values[n - 2].1
        };
        mids.push(bin((max + next) / 2.0));
        let inf_bits =
            (0..1u32 << f.total_bits()).find(|&b| from_bits(b).to_f64() == f64::INFINITY);
        Table {
            name: f.name,
            signed: f.signed,
            has_zero: f.has_zero(),
            has_negative_zero: f.has_negative_zero(),
            has_infinity: f.has_infinity(),
            has_nan: f.has_nan(),
            sign_mask: f.sign_mask(),
            ties_up: f.mantissa_bits == 0,
            half_min: bin(values[0].1 / 2.0),
            max_bits: values[n - 1].0,
            values,
            mids,
            inf_bits,
        }
    }

    /// Correct rounding of a literal, to nearest with ties to even (E8M0: up).
    fn round(&self, lit: &Literal) -> Outcome {
        let d = match lit {
            // Formats without NaN (FP6, FP4) give the zero of the NaN's opposite sign, as
            // ml_dtypes converts a NaN (`nan` is -0, `-nan` +0).
            Literal::Nan(neg) if !self.has_nan => {
                return Outcome::Value(if *neg { 0 } else { self.sign_mask });
            }
            Literal::Nan(_) => return Outcome::Nan,
            Literal::Inf(neg) => return self.signed_outcome(*neg, Outcome::Overflow(false)),
            Literal::Number(d) => d,
        };
        if d.zero {
            return if !self.has_zero {
                Outcome::Nan
            } else {
                self.signed_outcome(d.neg, Outcome::Value(0))
            };
        }
        let magnitude = self.round_magnitude(d);
        self.signed_outcome(d.neg, magnitude)
    }

    fn round_magnitude(&self, d: &Dec) -> Outcome {
        if self.has_zero {
            match cmp_dec_bin(d, self.half_min) {
                Ordering::Less | Ordering::Equal => return Outcome::Value(0),
                Ordering::Greater => {}
            }
        }
        // First midpoint at or above d.
        let j = self
            .mids
            .partition_point(|&m| cmp_dec_bin(d, m) == Ordering::Greater);
        let n = self.values.len();
        if j == n {
            return Outcome::Overflow(false);
        }
        if cmp_dec_bin(d, self.mids[j]) == Ordering::Less {
            return Outcome::Value(self.values[j].0);
        }
        // A tie between values[j] and values[j + 1] (or the overflow threshold).
        let low = self.values[j].0;
        let up = if self.ties_up { true } else { low & 1 == 1 };
        match (up, j + 1 < n) {
            (false, _) => Outcome::Value(low),
            (true, true) => Outcome::Value(self.values[j + 1].0),
            (true, false) => Outcome::Overflow(false),
        }
    }

    fn signed_outcome(&self, neg: bool, magnitude: Outcome) -> Outcome {
        if !neg {
            return magnitude;
        }
        if !self.signed {
            return Outcome::Nan;
        }
        match magnitude {
            Outcome::Value(0) if !self.has_negative_zero => Outcome::Value(0),
            Outcome::Value(b) => Outcome::Value(b | self.sign_mask),
            Outcome::Overflow(_) => Outcome::Overflow(true),
            Outcome::Nan => Outcome::Nan,
        }
    }

    /// The bits the format gives for an outcome; `None` for "some NaN".
    fn bits(&self, o: Outcome) -> Option<u32> {
        let sign = |neg: bool| if neg { self.sign_mask } else { 0 };
        match o {
            Outcome::Value(b) => Some(b),
            Outcome::Overflow(neg) if self.has_infinity => Some(self.inf_bits.unwrap() | sign(neg)),
            Outcome::Overflow(_) if self.has_nan => None,
            Outcome::Overflow(neg) => Some(self.max_bits | sign(neg)),
            // Only formats with a NaN reach this (see `round` for `nan` in the others).
            Outcome::Nan => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Checking one format.
// ---------------------------------------------------------------------------------------------

trait Printable: LowpFloat + FromStr<Err = ParseFloatError> {}
impl<T: LowpFloat + FromStr<Err = ParseFloatError>> Printable for T {}

struct Checker<T> {
    table: Table,
    from_bits: fn(u32) -> T,
    parsed: usize,
}

impl<T: Printable> Checker<T> {
    fn new(from_bits: fn(u32) -> T) -> Self {
        Checker {
            table: Table::new(from_bits),
            from_bits,
            parsed: 0,
        }
    }

    /// Parses `s` with the crate and with the reference and insists they agree; returns the
    /// reference outcome.
    #[track_caller]
    fn check_parse(&mut self, s: &str) -> Option<Outcome> {
        self.parsed += 1;
        let ours = s.parse::<T>();
        let std_ok = s.parse::<f32>().is_ok();
        let lit = parse_literal(s);
        assert_eq!(lit.is_some(), std_ok, "reference syntax vs f32 on {s:?}");
        let Some(lit) = lit else {
            let err = ours.expect_err(s);
            let kind = if s.is_empty() {
                ParseErrorKind::Empty
            } else {
                ParseErrorKind::Invalid
            };
            assert_eq!(err.kind(), kind, "{s:?}");
            return None;
        };
        let ours = match ours {
            Ok(x) => x,
            Err(e) => panic!("{}: {s:?} rejected: {e}", self.table.name),
        };
        let outcome = self.table.round(&lit);
        match self.table.bits(outcome) {
            Some(b) => assert_eq!(
                ours.to_bits_u32(),
                b,
                "{}: {s:?} parsed to {:#x}, expected {b:#x} ({outcome:?})",
                self.table.name,
                ours.to_bits_u32()
            ),
            None => assert!(
                (self.from_bits)(ours.to_bits_u32()).to_f64().is_nan(),
                "{}: {s:?} parsed to {:#x}, expected NaN",
                self.table.name,
                ours.to_bits_u32()
            ),
        }
        Some(outcome)
    }

    /// Every bit pattern printed every way; returns the number of patterns.
    fn check_printing(&mut self) -> usize {
        let count = 1u32 << T::FORMAT.total_bits();
        for bits in 0..count {
            let x = (self.from_bits)(bits);
            let s = Shortest(x);
            let display = format!("{s}");
            let lower = format!("{s:e}");
            let upper = format!("{s:E}");
            let debug = format!("{s:?}");
            for s in [&display, &lower, &upper, &debug] {
                self.check_reads_back(x, s);
            }
            let v = x.to_f64();
            if !v.is_finite() || v == 0.0 {
                // Handed to f32, which prints these exactly as wanted.
                let y = x.to_f32();
                assert_eq!(display, format!("{y}"));
                assert_eq!(lower, format!("{y:e}"));
                assert_eq!(upper, format!("{y:E}"));
                assert_eq!(debug, format!("{y:?}"));
                continue;
            }
            assert!(!display.contains(['e', 'E']), "{display}");
            let (digits, point) = significant(&display);
            self.check_shortest(x, &digits, point, &display);
            // The other notations carry the same digits.
            assert_eq!(significant(&lower), (digits.clone(), point), "{lower}");
            assert_eq!(lower.to_uppercase(), upper);
            let expected_exp = {
                let mut s = String::from(if v < 0.0 { "-" } else { "" });
                s.push_str(&digits[..1]);
                if digits.len() > 1 {
                    s.push('.');
                    s.push_str(&digits[1..]);
                }
                format!("{s}e{}", point - 1)
            };
            assert_eq!(lower, expected_exp);
            let exact_point = exact_decimal(bin(v.abs())).1;
            if exact_point <= -4 || exact_point >= 17 {
                assert_eq!(debug, lower);
            } else if display.contains('.') {
                assert_eq!(debug, display);
            } else {
                assert_eq!(debug, format!("{display}.0"));
            }
            self.compare_with_f32(x, &display);
        }
        count as usize
    }

    /// The string parses back to `x` (NaN to NaN, -0 to -0).
    #[track_caller]
    fn check_reads_back(&mut self, x: T, s: &str) {
        let back = s
            .parse::<T>()
            .unwrap_or_else(|e| panic!("{}: {s:?}: {e}", self.table.name));
        if x.to_f64().is_nan() {
            assert!(back.to_f64().is_nan(), "{}: {s:?}", self.table.name);
        } else {
            assert_eq!(
                back.to_bits_u32(),
                x.to_bits_u32(),
                "{}: {s:?} does not read back",
                self.table.name
            );
        }
        self.check_parse(s);
    }

    /// The printed digits are the fewest possible, and the nearest among that many.
    fn check_shortest(&mut self, x: T, digits: &str, point: i64, printed: &str) {
        let bits = x.to_bits_u32();
        let v = x.to_f64();
        let sign = if v < 0.0 { "-" } else { "" };
        let (exact, exact_point) = exact_decimal(bin(v.abs()));
        let k = digits.len();
        let reads_back = |this: &mut Self, d: &str, p: i64| {
            let s = format!("{sign}0.{d}e{p}");
            this.check_parse(&s) == Some(Outcome::Value(bits))
        };
        if k > 1 {
            assert!(
                exact.len() >= k,
                "{printed}: the exact value {exact} is shorter"
            );
            let (lo, lo_p) = (exact[..k - 1].to_string(), exact_point);
            let (hi, hi_p) = increment(&lo, lo_p);
            assert!(
                !reads_back(self, &lo, lo_p) && !reads_back(self, &hi, hi_p),
                "{}: {printed} is not shortest: 0.{lo}e{lo_p} or 0.{hi}e{hi_p}",
                self.table.name
            );
        }
        // Nearest among k digits: the truncation or the one above it.
        if exact.len() <= k {
            assert_eq!((digits, point), (exact.as_str(), exact_point), "{printed}");
            return;
        }
        let floor = exact[..k].to_string();
        let (ceil, ceil_p) = increment(&floor, exact_point);
        let floor_t = floor.trim_end_matches('0').to_string();
        let is_floor = (digits, point) == (floor_t.as_str(), exact_point);
        let is_ceil = (digits, point) == (ceil.as_str(), ceil_p);
        assert!(is_floor || is_ceil, "{printed}: not next to {exact}");
        if reads_back(self, &floor_t, exact_point) && reads_back(self, &ceil, ceil_p) {
            let rest = &exact[k..];
            let up = match rest.as_bytes()[0].cmp(&b'5') {
                Ordering::Greater => true,
                Ordering::Less => false,
                Ordering::Equal if rest.len() > 1 => true,
                Ordering::Equal => (floor.as_bytes()[k - 1] - b'0') % 2 == 1,
            };
            assert_eq!(is_ceil, up, "{printed}: not the nearest to {exact}");
        }
    }

    /// For values that are normal f32s and at most 6 digits long (every value here), the f32
    /// nearest to our output prints the same digits, so all of f32's formatting (flags, width,
    /// fill, alignment) must agree with ours character for character.
    fn compare_with_f32(&mut self, x: T, display: &str) {
        let (digits, _) = significant(display);
        let y: f32 = display.parse().unwrap();
        if digits.len() > 6 || y.abs() < f32::MIN_POSITIVE {
            return;
        }
        let s = Shortest(x);
        macro_rules! same {
            ($($f:literal),*) => {$(
                assert_eq!(format!($f, s), format!($f, y), "{} {}", self.table.name, $f);
            )*};
        }
        same!(
            "{}", "{:e}", "{:E}", "{:+}", "{:>14}", "{:<14}|", "{:^14}|", "{:*^16}", "{:014}",
            "{:+014}", "{:+014e}", "{:>+12E}", "{:1}", "{:-^3}"
        );
        let ours_exp = format!("{s:?}").contains('e');
        let theirs_exp = format!("{y:?}").contains('e');
        if ours_exp == theirs_exp {
            same!("{:?}", "{:#?}", "{:+016?}", "{:_<20?}");
        } else {
            // Only where the exact value and the f32 straddle 1e-4 or 1e16.
            let a = y.abs();
            assert!((0.99e-4..1.01e-4).contains(&a) || (0.99e16..1.01e16).contains(&a));
        }
        // With a precision the exact value is rounded: identical to f32 by construction.
        let z = x.to_f32();
        macro_rules! same_exact {
            ($($f:literal),*) => {$(
                assert_eq!(format!($f, s), format!($f, z), "{} {}", self.table.name, $f);
            )*};
        }
        same_exact!(
            "{:.0}",
            "{:.3}",
            "{:+010.2}",
            "{:.1e}",
            "{:.4E}",
            "{:.2?}",
            "{:.45}"
        );
    }
}

/// The significant digits (no leading or trailing zeros) and the point of a printed number:
/// the number is `0.digits * 10^point`.
fn significant(s: &str) -> (String, i64) {
    let s = s.trim_start_matches(['-', '+']);
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], s[i + 1..].parse::<i64>().unwrap()),
        None => (s, 0),
    };
    let (int, frac) = match mantissa.find('.') {
        Some(i) => (&mantissa[..i], &mantissa[i + 1..]),
        None => (mantissa, ""),
    };
    let all = format!("{int}{frac}");
    let lead = all.len() - all.trim_start_matches('0').len();
    let digits = all.trim_matches('0').to_string();
    (digits, int.len() as i64 - lead as i64 + exp)
}

/// `0.d * 10^p` plus one unit in the last digit of `d`, normalised (no trailing zeros).
fn increment(d: &str, p: i64) -> (String, i64) {
    let mut bytes = d.as_bytes().to_vec();
    let mut i = bytes.len();
    loop {
        if i == 0 {
            return ("1".into(), p + 1);
        }
        i -= 1;
        if bytes[i] == b'9' {
            bytes[i] = b'0';
        } else {
            bytes[i] += 1;
            break;
        }
    }
    let s = String::from_utf8(bytes).unwrap();
    (s.trim_end_matches('0').to_string(), p)
}

/// `0.d * 10^p` minus one unit in the last digit of `d` (d not a power of ten's "1"), as digits
/// that may keep trailing zeros.
fn decrement(d: &str) -> String {
    let mut bytes = d.as_bytes().to_vec();
    let mut i = bytes.len();
    while i > 0 {
        i -= 1;
        if bytes[i] == b'0' {
            bytes[i] = b'9';
        } else {
            bytes[i] -= 1;
            break;
        }
    }
    String::from_utf8(bytes).unwrap()
}

/// A tiny deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn digits(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| (b'0' + self.below(10) as u8) as char)
            .collect()
    }
}

/// Strings around every rounding point of the format, and random ones; returns how many.
fn check_parsing<T: Printable>(c: &mut Checker<T>, rng: &mut Rng) -> usize {
    let before = c.parsed;
    let mut points: Vec<Bin> = c.table.mids.clone();
    if c.table.has_zero {
        points.push(c.table.half_min);
    }
    let values: Vec<Bin> = c.table.values.iter().map(|&(_, v)| bin(v)).collect();
    for (i, &p) in points.iter().chain(&values).enumerate() {
        let (d, e) = exact_decimal(p);
        let mut strings = vec![
            format!("0.{d}e{e}"),
            format!("0.{d}000000000000000000001e{e}"),
            format!("0.{}999999999999999999999e{e}", decrement(&d)),
        ];
        // The same number written positionally, and through the shortest f64.
        if i % 5 == 0 {
            let digits = d.len() as i64;
            strings.push(if e <= 0 {
                format!("0.{}{d}", "0".repeat((-e) as usize))
            } else if e < digits {
                format!("{}.{}", &d[..e as usize], &d[e as usize..])
            } else {
                format!("{d}{}", "0".repeat((e - digits) as usize))
            });
            let x = p.sig as f64 * 2f64.powi(p.exp as i32);
            strings.push(format!("{x}"));
            strings.push(format!("{x:e}"));
        }
        // A long tail of zeros (or nines) before the deciding digit: beyond the 768 digits
        // that Rust's f64 parser keeps exactly.
        if i % 29 == 0 {
            strings.push(format!("0.{d}{}1e{e}", "0".repeat(1000)));
            strings.push(format!("0.{}{}9E{}", decrement(&d), "9".repeat(1000), e));
            strings.push(format!("{}.{d}e{}", "0".repeat(2000), e));
            strings.push(format!("0.{}{d}e{}", "0".repeat(2000), e + 2000));
        }
        // Random digits replacing the end of the exact expansion.
        let keep = 1 + rng.below(d.len() as u64 + 3) as usize;
        let head: String = d.chars().chain(std::iter::repeat('0')).take(keep).collect();
        let tail_len = 1 + rng.below(30) as usize;
        strings.push(format!("0.{head}{}e{e}", rng.digits(tail_len)));
        for s in strings {
            c.check_parse(&s);
            c.check_parse(&format!("-{s}"));
            if i % 3 == 0 {
                c.check_parse(&format!("+{s}"));
            }
        }
    }
    // Random strings across the whole range and beyond.
    let lo = (c.table.half_min.exp as f64 * std::f64::consts::LOG10_2) as i64 - 3;
    let hi = 42;
    for _ in 0..20_000 {
        let n = 1 + rng.below(25) as usize;
        let digits = rng.digits(n);
        let e = lo + rng.below((hi - lo) as u64) as i64;
        let s = match rng.below(4) {
            0 => format!("{digits}e{e}"),
            1 => format!(".{digits}E{e}"),
            2 => {
                let cut = rng.below(n as u64 + 1) as usize;
                format!("{}.{}e+{}", &digits[..cut], &digits[cut..], e + 50)
            }
            _ => format!("-{digits}.e-{}", rng.below(50)),
        };
        c.check_parse(&s);
    }
    c.parsed - before
}

/// Strings every format must treat the same way.
const EDGE_CASES: &[&str] = &[
    "0",
    "-0",
    "+0",
    "0.0",
    "-0.0",
    "0e0",
    "-0e-5",
    "0e99999999999999999999",
    "00000",
    ".0",
    "0.",
    "1",
    "-1",
    "+1",
    "1.",
    ".5",
    "-.5",
    "+.5",
    "1e0",
    "1E0",
    "1e+0",
    "1e-0",
    "1e-99999",
    "-1e-99999",
    "1e99999",
    "-1e99999",
    "1e-400",
    "1e400",
    "1e-45",
    "1e-39",
    "1e-38",
    "1e38",
    "1e39",
    "6e-8",
    "5.960464477539063e-8",
    "2.9802322387695312e-8",
    "2.98023223876953125e-8",
    "2.98023223876953125000000001e-8",
    "65504",
    "65519.99999",
    "65520",
    "65520.0000001",
    "65536",
    "448",
    "464",
    "464.00001",
    "480",
    "240",
    "248",
    "247.9999",
    "57344",
    "61440",
    "61439.99",
    "15.5",
    "15.75",
    "16",
    "7.5",
    "7.75",
    "7.7500001",
    "28",
    "30",
    "6",
    "7",
    "5",
    "3.4028235e38",
    "3.3961776e38",
    "339615136492876986382404208523153702912",
    "339615136492876986382404208523153702911",
    "1.7014118346046923e38",
    "2.5521177519070385e38",
    "2.552117751907038e38",
    "5.877471754111438e-39",
    "4.408103815583578e-39",
    "2.938735877055719e-39",
    "9.183549615799121e-41",
    "4.591774807899561e-41",
    "4.591774807899560e-41",
    "4.5917748078995606e-41",
    "0.1",
    "0.2",
    "0.3",
    "3.14159",
    "1.00048828125",
    "1.00048828125000001",
    "1.00048828124999999",
    "1.00390625",
    "1.00390625000001",
    "1.00390624999999",
    "inf",
    "-inf",
    "+inf",
    "INF",
    "Inf",
    "infinity",
    "-Infinity",
    "INFINITY",
    "nan",
    "NaN",
    "-nan",
    "+NAN",
    "nAn",
    "",
    "+",
    "-",
    "1e",
    "1e+",
    "1e-",
    "0x10",
    "1.2.3",
    " 1",
    "1 ",
    ".",
    "-.",
    "e5",
    ".e5",
    "1_0",
    "--1",
    "+-1",
    "1e--5",
    "1e5.5",
    "infinit",
    "infinityy",
    "nana",
    "in",
    "\u{661}",
    "∞",
    "1\0",
    "+e",
    "0xp1",
    "1ee5",
    "1d5",
    "1.5f",
    "١.٥",
];

fn run<T: Printable>(from_bits: fn(u32) -> T, seed: u64) {
    let mut c = Checker::new(from_bits);
    let mut rng = Rng(seed);
    let printed = c.check_printing();
    let during_printing = c.parsed;
    for s in EDGE_CASES {
        c.check_parse(s);
        // Very long digit strings: the same value with a thousand more zeros.
        if s.bytes().all(|b| b.is_ascii_digit()) && !s.is_empty() {
            c.check_parse(&format!("{s}.{}", "0".repeat(1000)));
            c.check_parse(&format!("{}{s}", "0".repeat(1000)));
        }
    }
    let parsed = check_parsing(&mut c, &mut rng);
    println!(
        "{}: {printed} bit patterns printed 4 ways (shortest, nearest, read back); {} strings \
         parsed while printing, {parsed} parsed around {} rounding points and at random, {} \
         edge cases",
        c.table.name,
        during_printing,
        c.table.mids.len() + c.table.has_zero as usize,
        EDGE_CASES.len()
    );
}

#[test]
fn f16_all() {
    run(|b| f16::from_bits(b as u16), 1);
}

#[test]
fn bf16_all() {
    run(|b| bf16::from_bits(b as u16), 2);
}

#[test]
fn fp8_all() {
    run(|b| f8e4m3fn::from_bits(b as u8), 3);
    run(|b| f8e5m2::from_bits(b as u8), 4);
    run(|b| f8e4m3fnuz::from_bits(b as u8), 5);
    run(|b| f8e5m2fnuz::from_bits(b as u8), 6);
    run(|b| f8e4m3::from_bits(b as u8), 7);
    run(|b| f8e3m4::from_bits(b as u8), 8);
    run(|b| f8e8m0fnu::from_bits(b as u8), 9);
}

#[test]
fn fp6_fp4_all() {
    run(|b| f6e2m3fn::from_bits(b as u8), 10);
    run(|b| f6e3m2fn::from_bits(b as u8), 11);
    run(|b| f4e2m1fn::from_bits(b as u8), 12);
}

/// The cases the issue names; each would fail with parsing through f32 or f64 and rounding
/// again (double rounding).
#[test]
fn double_rounding() {
    let h = |s: &str| s.parse::<f16>().unwrap().to_bits();
    let b = |s: &str| s.parse::<bf16>().unwrap().to_bits();
    assert_eq!(h("1.00048828125000001"), 0x3c01);
    assert_eq!(h("1.00048828125"), 0x3c00);
    assert_eq!(h("1.00048828124999999"), 0x3c00);
    assert_eq!(h("1.00146484375"), 0x3c02); // midpoint above an odd pattern: up
    assert_eq!(b("1.00390625000001"), 0x3f81);
    assert_eq!(b("1.00390625"), 0x3f80);
    assert_eq!(b("1.00390625000000000001"), 0x3f81);
    assert_eq!(b("1.00390624999999999999"), 0x3f80);
    // Through f64 (or f32) these are the midpoint itself, which ties to even: the wrong answer.
    assert_eq!(
        f16::from_f64("1.00048828125000001".parse::<f64>().unwrap()).to_bits(),
        0x3c00
    );
    assert_eq!(
        f16::from_f32("1.00048828125000001".parse::<f32>().unwrap()).to_bits(),
        0x3c00
    );
    assert_eq!(
        bf16::from_f32("1.00390625000001".parse::<f32>().unwrap()).to_bits(),
        0x3f80
    );
    assert_eq!(
        bf16::from_f64("1.00390625000000000001".parse::<f64>().unwrap()).to_bits(),
        0x3f80
    );
    // The midpoint between the two smallest f16 subnormals, plus and minus a hair.
    assert_eq!(h("8.940696716308594e-8"), 0x0002); // 1.5 * 2^-24, a tie: to even (2)
    assert_eq!(h("8.9406967163085937499999999e-8"), 0x0001);
    assert_eq!(h("2.98023223876953125e-8"), 0x0000); // half the smallest: to zero
    assert_eq!(h("2.9802322387695312500000001e-8"), 0x0001);
    assert_eq!(h("-2.9802322387695312500000001e-8"), 0x8001);
    assert_eq!(h("-2.98023223876953125e-8"), 0x8000);
    // The overflow threshold of f16: 65520 is a tie that goes up (to infinity).
    assert_eq!(h("65519.999999999999999"), 0x7bff);
    assert_eq!(h("65520"), 0x7c00);
}

#[test]
fn no_zero_and_no_nan_formats() {
    let e = |s: &str| s.parse::<f8e8m0fnu>().unwrap().to_bits();
    assert_eq!(e("1e-400"), 0x00);
    assert_eq!(e("1e-39"), 0x00);
    assert_eq!(e("0"), 0xff);
    assert_eq!(e("-0"), 0xff);
    assert_eq!(e("-1"), 0xff);
    assert_eq!(e("1.5"), 128); // ties up
    assert_eq!(e("1.4999999999999999999"), 127);
    assert_eq!(e("2.5521177519070385e38"), 0xff); // 1.5 * 2^127 rounds up, past MAX
    assert_eq!(e("inf"), 0xff);
    assert_eq!(
        format!("{}", Shortest(f8e8m0fnu::from_bits(0))),
        format!("0.{}6", "0".repeat(38))
    );
    assert_eq!(format!("{:?}", Shortest(f8e8m0fnu::from_bits(0))), "6e-39");
    assert_eq!(
        format!("{}", Shortest(f8e8m0fnu::from_bits(0xfe))),
        format!("2{}", "0".repeat(38))
    );
    assert_eq!(format!("{}", Shortest(f8e8m0fnu::from_bits(0xff))), "NaN");
    // FP6/FP4 saturate, and print MAX as itself rather than as a larger number.
    assert_eq!("1e10".parse::<f6e3m2fn>().unwrap().to_bits(), 0x1f);
    assert_eq!("-inf".parse::<f4e2m1fn>().unwrap().to_bits(), 0xf);
    assert_eq!("nan".parse::<f4e2m1fn>().unwrap().to_bits(), 0x8);
    assert_eq!("-nan".parse::<f4e2m1fn>().unwrap().to_bits(), 0);
    assert_eq!(format!("{}", Shortest(f6e3m2fn::MAX)), "28");
    assert_eq!(format!("{}", Shortest(f6e2m3fn::MAX)), "7.5");
    assert_eq!(format!("{}", Shortest(f4e2m1fn::MAX)), "6");
}

#[test]
fn examples() {
    assert_eq!(format!("{}", Shortest(f16::from_f64(0.1))), "0.1");
    assert_eq!(format!("{:e}", Shortest(f16::from_f64(0.1))), "1e-1");
    assert_eq!(
        format!("{}", Shortest(bf16::MAX)),
        "339000000000000000000000000000000000000"
    );
    // 65500 reads back as 65504 (the interval is (65488, 65520)), so it is the shortest.
    assert_eq!(format!("{}", Shortest(f16::MAX)), "65500");
    assert_eq!(format!("{:e}", Shortest(f16::MAX)), "6.55e4");
    assert_eq!(format!("{:.0}", Shortest(f16::MAX)), "65504");
    assert_eq!(
        format!("{:.1e}", Shortest(f16::from_f64(std::f64::consts::PI))),
        "3.1e0"
    );
    assert_eq!(format!("{:?}", Shortest(f16::from_f64(1.0))), "1.0");
    assert_eq!(format!("{:?}", Shortest(f16::from_f64(-0.0))), "-0.0");
    assert_eq!(format!("{}", Shortest(f16::from_f64(-0.0))), "-0");
    assert_eq!(format!("{:?}", Shortest(f16::from_f64(1e-5))), "1e-5");
    assert_eq!(format!("{:?}", Shortest(bf16::from_f64(1e20))), "1e20");
    assert_eq!(
        format!("{:+08.3}", Shortest(f16::from_f64(-1.5))),
        "-001.500"
    );
    assert_eq!(
        format!("{:+}", Shortest(f16::from_f64(f64::INFINITY))),
        "+inf"
    );
    assert_eq!(
        format!("{:>6}", Shortest(f16::from_f64(f64::NAN))),
        "   NaN"
    );
    assert_eq!(format!("{}", Shortest(f8e4m3fnuz::from_bits(0x80))), "NaN");
}
