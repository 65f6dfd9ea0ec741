//! lowp against the `float8` crate 0.7.0, whose `F8E4M3` and `F8E5M2` (candle's FP8 types) are
//! lowp's `f8e4m3fn` and `f8e5m2`, under the same names in lowp ([`lowp::F8E4M3`],
//! [`lowp::F8E5M2`]): float8's API compiled against both crates, then every bit pattern, every
//! constant, every f32 input of `from_f32`, a directed set of f64 inputs of `from_f64`, every
//! pair of operands of the arithmetic, parsing and formatting.
//!
//! The crates agree except on the inputs each test lists, and each listed difference is
//! asserted as what it is (float8's answer and lowp's), so the test fails if either crate
//! changes. `docs/migrating-from-float8.md` explains each one. In short: the layouts and the
//! rounding are the same; float8 saturates every conversion (its E4M3 overflow gives 448, its
//! E5M2 overflow and even infinity give 57344) where lowp follows the OCP FP8 specification and
//! ml_dtypes (NaN, infinity); float8 names 448 and 57344 `INFINITY`; and its classification
//! predicates are its own (zero and NaN are subnormal, 0x7D and 0x7F of E5M2 are numbers).
//! float8's `from_f32` and `from_f64` are lowp's `from_f32_saturating` and
//! `from_f64_saturating`, NaNs aside.

// Tests run on the development toolchain; the minimum Rust (`rust-version`) is the
// library's.
#![allow(clippy::incompatible_msrv)]

use core::cmp::Ordering;
use core::num::FpCategory;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::time::Instant;

type F8E4M3 = float8::F8E4M3;
type F8E5M2 = float8::F8E5M2;
type L8E4M3 = lowp::F8E4M3;
type L8E5M2 = lowp::F8E5M2;

/// The sign bit of an FP8 pattern.
const SIGN: u8 = 0x80;

/// The position of a pattern on the number line when it is read as sign and magnitude (-0 and
/// +0 both 0): the order float8's `PartialOrd` gives every pattern it does not call NaN.
fn sign_magnitude(bits: u8) -> i32 {
    let mag = i32::from(bits & 0x7F);
    if bits & SIGN != 0 { -mag } else { mag }
}

/// The quiet f32 NaN of a pattern's sign: what lowp widens every NaN to.
fn lowp_nan_f32(bits: u8) -> u32 {
    if bits & SIGN != 0 {
        0xFFC0_0000
    } else {
        0x7FC0_0000
    }
}

/// What float8 widens every NaN to: its f16 NaN 0x7FFF (positive, every payload bit set), as f32.
const FLOAT8_NAN_F32: u32 = 0x7FFF_E000;
/// The same as f64.
const FLOAT8_NAN_F64: u64 = 0x7FFF_FC00_0000_0000;
/// The same as `half::f16`.
const FLOAT8_NAN_F16: u16 = 0x7FFF;

// ---------------------------------------------------------------------------------------------
// float8's API, compiled against both crates
// ---------------------------------------------------------------------------------------------

/// Code written against float8's documented API for a type `F`, compiled once with float8's
/// type and once with lowp's alias: it compiles unchanged with both. It returns what it
/// computed, on inputs where the crates agree (in range, no NaN), so both return the same.
macro_rules! float8_api {
    ($F:ty) => {{
        type F = $F;
        let x = F::from_f32(1.5);
        let y = F::from_f64(-0.25);
        let z = F::from_bits(0x40);
        let mut acc = x + y;
        acc += z;
        acc -= y;
        acc *= x;
        acc /= z;
        acc %= x;
        let mut sorted = vec![
            F::ONE,
            F::ZERO,
            F::NEG_ZERO,
            F::NEG_ONE,
            F::MIN_POSITIVE,
            F::MIN_POSITIVE_SUBNORMAL,
            F::MAX_SUBNORMAL,
            F::EPSILON,
            -F::PI,
        ];
        sorted.sort_by(|a, b| a.total_cmp(b));
        let parsed: F = "0.75".parse().unwrap();
        let from_float: f32 = f32::from(x);
        let from_float64: f64 = y.into();
        // In the API, with answers that differ (the constants tests compare them).
        let _ = (F::MAX, F::MIN, F::MANTISSA_DIGITS, F::MAX_EXP);
        (
            [
                x.to_bits(),
                y.to_bits(),
                z.to_bits(),
                acc.to_bits(),
                (-x).to_bits(),
                (x * y - z / x).to_bits(),
                x.min(y).to_bits(),
                x.max(y).to_bits(),
                x.clamp(y, z).to_bits(),
                z.clamp(y, x).to_bits(),
                x.copysign(y).to_bits(),
                y.signum().to_bits(),
                parsed.to_bits(),
                F::default().to_bits(),
                F::NAN.to_bits(),
                F::E.to_bits(),
                F::TAU.to_bits(),
                F::LN_2.to_bits(),
                F::LOG2_E.to_bits(),
                F::SQRT_2.to_bits(),
                F::FRAC_2_SQRT_PI.to_bits(),
            ],
            [
                x.is_nan(),
                x.is_infinite(),
                x.is_finite(),
                x.is_normal(),
                F::MAX_SUBNORMAL.is_normal(),
                y.is_sign_negative(),
                y.is_sign_positive(),
                x == x,
                x < z,
                x.partial_cmp(&y) == Some(Ordering::Greater),
                F::NAN.is_nan(),
                F::NAN != F::NAN,
            ],
            [
                x.to_f32(),
                y.to_f64() as f32,
                x.to_f16().to_f32(),
                from_float,
                from_float64 as f32,
            ],
            (
                x.classify(),
                F::MIN_POSITIVE_SUBNORMAL.classify(),
                z.total_cmp(&x),
                format!("{x:.3} {y:.1} {z:x} {z:X} {acc:.5}"),
                sorted.iter().map(|v| v.to_bits()).collect::<Vec<u8>>(),
                (F::MIN_EXP, F::MIN_10_EXP, F::MAX_10_EXP, F::DIGITS),
            ),
        )
    }};
}

#[test]
fn float8_api_compiles_against_lowp_and_gives_the_same_answers_in_range() {
    assert_eq!(float8_api!(F8E4M3), float8_api!(L8E4M3));
    assert_eq!(float8_api!(F8E5M2), float8_api!(L8E5M2));
    // E5M2 has infinities in both crates (though not the same patterns: see the constants).
    let _ = (F8E5M2::INFINITY, F8E5M2::NEG_INFINITY);
    let _ = (L8E5M2::INFINITY, L8E5M2::NEG_INFINITY);
    // What needs an edit, each beside its replacement (docs/migrating-from-float8.md).
    let values = [F8E4M3::from_f32(0.5), F8E4M3::ONE];
    let lowp_values = [L8E4M3::from_f32(0.5), L8E4M3::ONE];
    let widened: Vec<f32> = values.iter().map(F8E4M3::to_f32).collect();
    let lowp_widened: Vec<f32> = lowp_values.iter().copied().map(L8E4M3::to_f32).collect();
    assert_eq!(widened, lowp_widened);
    assert_eq!(
        F8E4M3::from(1.5f32).to_bits(),
        L8E4M3::from_f32(1.5).to_bits()
    );
    assert_eq!(
        F8E5M2::from(1.5f64).to_bits(),
        L8E5M2::from_f64(1.5).to_bits()
    );
    assert!(L8E4M3::try_from(1.5f32).is_ok() && L8E4M3::try_from(1.6f32).is_err());
    let h = half::f16::from_f32(0.3);
    assert_eq!(
        F8E4M3::from(h).to_bits(),
        L8E4M3::from_f32(h.to_f32()).to_bits()
    );
    let x = (F8E4M3::from_f32(-0.75), L8E4M3::from_f32(-0.75));
    assert_eq!(
        half::f16::from(x.0).to_bits(),
        lowp::f16::from(x.1).to_bits()
    );
    assert_eq!(x.0.to_f16().to_bits(), x.1.to_f16().to_bits());
    #[cfg(feature = "half")]
    assert_eq!(half::f16::from(x.0), half::f16::from(x.1.to_f16()));
    // The aliases are lowp's types themselves.
    let x: lowp::f8e4m3fn = L8E4M3::ONE;
    let y: lowp::f8e5m2 = L8E5M2::ONE;
    assert_eq!((x.to_bits(), y.to_bits()), (0x38, 0x3C));
}

// ---------------------------------------------------------------------------------------------
// Every bit pattern
// ---------------------------------------------------------------------------------------------

/// `to_f32`, `to_f64` and `to_f16` of pattern `b` in float8 and lowp: the same value, except
/// a NaN (`nan`), which float8 widens to its positive all-payload NaN and lowp to the quiet NaN
/// of its sign.
fn check_widening(b: u8, nan: bool, float8: (f32, f64, u16), lowp: (f32, f64, u16)) {
    let float8 = (float8.0.to_bits(), float8.1.to_bits(), float8.2);
    let lowp = (lowp.0.to_bits(), lowp.1.to_bits(), lowp.2);
    if nan {
        assert_eq!(
            float8,
            (FLOAT8_NAN_F32, FLOAT8_NAN_F64, FLOAT8_NAN_F16),
            "{b:#04x}"
        );
        let sign = u64::from(b & SIGN) << 56;
        let f16_nan = u16::from(b & SIGN) << 8 | 0x7E00;
        assert_eq!(
            lowp,
            (lowp_nan_f32(b), sign | 0x7FF8 << 48, f16_nan),
            "{b:#04x}"
        );
    } else {
        assert_eq!(float8, lowp, "{b:#04x}");
    }
}

#[test]
fn e4m3_every_bit_pattern() {
    for b in 0..=255u8 {
        let (f, l) = (F8E4M3::from_bits(b), L8E4M3::from_bits(b));
        let mag = b & 0x7F;
        let nan = mag == 0x7F; // S.1111.111, NaN in both crates
        let float8_infinity = mag == 0x7E; // ±448: lowp's ±MAX, float8's ±INFINITY
        let zero = mag == 0;
        let at = format!("{b:#04x}");

        assert_eq!((f.to_bits(), l.to_bits()), (b, b), "{at}");
        assert_eq!((f.is_nan(), l.is_nan()), (nan, nan), "{at}");
        assert_eq!(f.is_sign_negative(), l.is_sign_negative(), "{at}");
        assert_eq!(f.is_sign_positive(), l.is_sign_positive(), "{at}");
        assert_eq!(f.signum().to_bits(), l.signum().to_bits(), "{at}");
        // float8 calls ±448 infinite; E4M3FN has no infinity.
        assert_eq!(
            (f.is_infinite(), l.is_infinite()),
            (float8_infinity, false),
            "{at}"
        );
        assert_eq!(
            (f.is_finite(), l.is_finite()),
            (!nan && !float8_infinity, !nan),
            "{at}"
        );
        assert_eq!(f.is_normal(), l.is_normal() && !float8_infinity, "{at}");
        // float8 classifies zero and NaN as subnormal.
        let float8_class = if float8_infinity {
            FpCategory::Infinite
        } else if zero || nan {
            FpCategory::Subnormal
        } else {
            l.classify()
        };
        assert_eq!(f.classify(), float8_class, "{at}");
        assert_eq!(l.classify() == FpCategory::Zero, zero, "{at}");
        assert_eq!(l.classify() == FpCategory::Nan, nan, "{at}");

        check_widening(
            b,
            nan,
            (f.to_f32(), f.to_f64(), f.to_f16().to_bits()),
            (l.to_f32(), l.to_f64(), l.to_f16().to_bits()),
        );
        assert_eq!(l.to_f16().to_bits(), lowp::f16::from(l).to_bits(), "{at}");

        // float8 negates through f32, where every NaN is positive: -NaN is 0xFF for both NaNs.
        let float8_neg = if nan { 0xFF } else { (-l).to_bits() };
        assert_eq!((-f).to_bits(), float8_neg, "{at}");
        assert_eq!((-l).to_bits(), b ^ SIGN, "{at}");

        for c in 0..=255u8 {
            let (g, m) = (F8E4M3::from_bits(c), L8E4M3::from_bits(c));
            assert_eq!(f.total_cmp(&g), l.total_cmp(&m), "{at} {c:#04x}");
            assert_eq!(f == g, l == m, "{at} {c:#04x}");
            assert_eq!(f.partial_cmp(&g), l.partial_cmp(&m), "{at} {c:#04x}");
        }
    }
}

#[test]
fn e5m2_every_bit_pattern() {
    for b in 0..=255u8 {
        let (f, l) = (F8E5M2::from_bits(b), L8E5M2::from_bits(b));
        let mag = b & 0x7F;
        let lowp_nan = mag >= 0x7D; // S.11111.01 to .11, as in IEEE 754
        let float8_nan = mag == 0x7E; // float8's only NaNs: 0x7E and 0xFE
        let not_nan_to_float8 = lowp_nan && !float8_nan; // 0x7D, 0x7F, 0xFD, 0xFF
        let infinity = mag == 0x7C; // ±infinity, a normal number to float8
        let float8_infinity = mag == 0x7B; // ±57344: lowp's ±MAX, float8's ±INFINITY
        let zero = mag == 0;
        let at = format!("{b:#04x}");

        assert_eq!((f.to_bits(), l.to_bits()), (b, b), "{at}");
        assert_eq!((f.is_nan(), l.is_nan()), (float8_nan, lowp_nan), "{at}");
        assert_eq!(f.is_sign_negative(), l.is_sign_negative(), "{at}");
        assert_eq!(f.is_sign_positive(), l.is_sign_positive(), "{at}");
        assert_eq!(
            (f.is_infinite(), l.is_infinite()),
            (float8_infinity, infinity),
            "{at}"
        );
        assert_eq!(f.is_finite(), !float8_nan && !float8_infinity, "{at}");
        assert_eq!(l.is_finite(), !lowp_nan && !infinity, "{at}");
        let float8_normal = if float8_nan || float8_infinity {
            false
        } else {
            infinity || not_nan_to_float8 || l.is_normal()
        };
        assert_eq!(f.is_normal(), float8_normal, "{at}");
        let float8_class = if float8_infinity {
            FpCategory::Infinite
        } else if zero || float8_nan {
            FpCategory::Subnormal
        } else if infinity || not_nan_to_float8 {
            FpCategory::Normal
        } else {
            l.classify()
        };
        assert_eq!(f.classify(), float8_class, "{at}");
        // signum: float8 gives ±1 for the NaNs its is_nan denies.
        let float8_signum = if not_nan_to_float8 {
            if b & SIGN != 0 { 0xBC } else { 0x3C }
        } else {
            l.signum().to_bits()
        };
        assert_eq!(f.signum().to_bits(), float8_signum, "{at}");
        if lowp_nan {
            assert_eq!(l.signum().to_bits(), b, "{at}: NaN's signum is the NaN");
        }

        check_widening(
            b,
            lowp_nan,
            (f.to_f32(), f.to_f64(), f.to_f16().to_bits()),
            (l.to_f32(), l.to_f64(), l.to_f16().to_bits()),
        );

        // float8 negates through f32 and back: every NaN becomes 0xFF (a pattern its is_nan
        // denies), and -infinity saturates to ∓57344.
        let float8_neg = if lowp_nan {
            0xFF
        } else if infinity {
            (b ^ SIGN) - 1
        } else {
            (-l).to_bits()
        };
        assert_eq!((-f).to_bits(), float8_neg, "{at}");
        assert_eq!((-l).to_bits(), b ^ SIGN, "{at}");

        for c in 0..=255u8 {
            let (g, m) = (F8E5M2::from_bits(c), L8E5M2::from_bits(c));
            let at = format!("{b:#04x} {c:#04x}");
            assert_eq!(f.total_cmp(&g), l.total_cmp(&m), "{at}");
            let pseudo = not_nan_to_float8 || (c & 0x7F != 0x7E && m.is_nan());
            if pseudo && !float8_nan && !g.is_nan() {
                // Numbers to float8, ordered by their bits above infinity; NaN to lowp.
                let order = sign_magnitude(b).cmp(&sign_magnitude(c));
                assert_eq!(f.partial_cmp(&g), Some(order), "{at}");
                assert_eq!(f == g, order == Ordering::Equal, "{at}");
                assert_eq!((l.partial_cmp(&m), l == m), (None, false), "{at}");
            } else {
                assert_eq!(f == g, l == m, "{at}");
                assert_eq!(f.partial_cmp(&g), l.partial_cmp(&m), "{at}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Constants
// ---------------------------------------------------------------------------------------------

/// Asserts that both crates' constants of these names have the same bits.
macro_rules! same_constants {
    ($f:ty, $l:ty: $($c:ident),*) => {$(
        assert_eq!(<$f>::$c.to_bits(), <$l>::$c.to_bits(), "{}", stringify!($c));
    )*};
}

/// Asserts that both crates' integer constants of these names are equal.
macro_rules! same_numbers {
    ($f:ty, $l:ty: $($c:ident),*) => {$(
        assert_eq!(<$f>::$c, <$l>::$c, "{}", stringify!($c));
    )*};
}

#[test]
fn constants_agree_except_max_min_infinity_mantissa_digits_and_max_exp() {
    macro_rules! both {
        ($f:ty, $l:ty) => {
            same_constants!($f, $l: NAN, ONE, ZERO, NEG_ONE, NEG_ZERO, MIN_POSITIVE,
                MIN_POSITIVE_SUBNORMAL, MAX_SUBNORMAL, EPSILON, PI, TAU, FRAC_PI_2, FRAC_PI_3,
                FRAC_PI_4, FRAC_PI_6, FRAC_PI_8, FRAC_1_PI, FRAC_2_PI, FRAC_2_SQRT_PI, SQRT_2,
                FRAC_1_SQRT_2, E, LOG2_10, LOG2_E, LOG10_2, LOG10_E, LN_2, LN_10);
            same_numbers!($f, $l: MIN_EXP, MIN_10_EXP, MAX_10_EXP, DIGITS);
        };
    }
    both!(F8E4M3, L8E4M3);
    both!(F8E5M2, L8E5M2);

    // E4M3: float8's MAX is 416 and its INFINITY 448, which is the format's largest value.
    assert_eq!((F8E4M3::MAX.to_bits(), L8E4M3::MAX.to_bits()), (0x7D, 0x7E));
    assert_eq!((F8E4M3::MAX.to_f32(), L8E4M3::MAX.to_f32()), (416.0, 448.0));
    assert_eq!((F8E4M3::MIN.to_bits(), L8E4M3::MIN.to_bits()), (0xFD, 0xFE));
    assert_eq!(F8E4M3::INFINITY.to_bits(), L8E4M3::MAX.to_bits());
    assert_eq!(F8E4M3::NEG_INFINITY.to_bits(), L8E4M3::MIN.to_bits());
    assert_eq!(F8E4M3::INFINITY.to_f32(), 448.0);
    // Rust's conventions: the significand's digits with the implicit bit, and one more than
    // the largest exponent (448 = 1.75 * 2^8).
    assert_eq!((F8E4M3::MANTISSA_DIGITS, L8E4M3::MANTISSA_DIGITS), (3, 4));
    assert_eq!((F8E4M3::MAX_EXP, L8E4M3::MAX_EXP), (7, 9));

    // E5M2: float8's INFINITY is 57344, the largest finite value, and its MAX the one below.
    assert_eq!((F8E5M2::MAX.to_bits(), L8E5M2::MAX.to_bits()), (0x7A, 0x7B));
    assert_eq!(
        (F8E5M2::MAX.to_f32(), L8E5M2::MAX.to_f32()),
        (49152.0, 57344.0)
    );
    assert_eq!((F8E5M2::MIN.to_bits(), L8E5M2::MIN.to_bits()), (0xFA, 0xFB));
    assert_eq!(
        (F8E5M2::INFINITY.to_bits(), L8E5M2::INFINITY.to_bits()),
        (0x7B, 0x7C)
    );
    assert_eq!(F8E5M2::INFINITY.to_f32(), 57344.0);
    assert_eq!(
        (
            F8E5M2::NEG_INFINITY.to_bits(),
            L8E5M2::NEG_INFINITY.to_bits()
        ),
        (0xFB, 0xFC)
    );
    assert_eq!((F8E5M2::MANTISSA_DIGITS, L8E5M2::MANTISSA_DIGITS), (2, 3));
    assert_eq!((F8E5M2::MAX_EXP, L8E5M2::MAX_EXP), (15, 16));
}

/// Whether a type implements num-traits' `Float`: the inherent constant where it does, the
/// trait's where it does not (inherent items are preferred when their bounds hold).
#[cfg(feature = "num-traits")]
struct IsFloat<T>(core::marker::PhantomData<T>);

#[cfg(feature = "num-traits")]
trait NotFloat {
    const FLOAT: bool = false;
}

#[cfg(feature = "num-traits")]
impl<T> NotFloat for IsFloat<T> {}

#[cfg(feature = "num-traits")]
impl<T: num_traits::Float> IsFloat<T> {
    const FLOAT: bool = true;
}

#[cfg(feature = "num-traits")]
#[test]
fn num_traits_constants_are_the_inherent_ones_and_lowp_has_no_float_for_e4m3() {
    use num_traits::{Bounded, Float};
    // float8's Float and Bounded return its constants: E4M3's infinity is 448, its max 416.
    assert_eq!(<F8E4M3 as Float>::infinity().to_bits(), 0x7E);
    assert_eq!(<F8E4M3 as Float>::max_value().to_bits(), 0x7D);
    assert_eq!(<F8E4M3 as Bounded>::max_value().to_bits(), 0x7D);
    assert_eq!(<L8E4M3 as Bounded>::max_value().to_bits(), 0x7E);
    assert_eq!(<F8E5M2 as Float>::infinity().to_bits(), 0x7B);
    assert_eq!(<L8E5M2 as Float>::infinity().to_bits(), 0x7C);
    assert_eq!(<F8E5M2 as Float>::max_value().to_bits(), 0x7A);
    assert_eq!(<L8E5M2 as Float>::max_value().to_bits(), 0x7B);
    // lowp implements Float only where the format has an infinity: not for E4M3. Its math
    // functions (exp, sqrt, ...) are inherent methods of every type.
    const {
        assert!(IsFloat::<F8E4M3>::FLOAT && IsFloat::<F8E5M2>::FLOAT && IsFloat::<L8E5M2>::FLOAT);
        assert!(!IsFloat::<L8E4M3>::FLOAT);
    }
    assert_eq!(L8E4M3::ONE.exp().to_bits(), L8E4M3::E.to_bits());
}

// ---------------------------------------------------------------------------------------------
// from_f32 on every f32, from_f64 on a directed set
// ---------------------------------------------------------------------------------------------

/// Above this magnitude (464, the midpoint of E4M3's 448 and the 480 its exponent range lacks;
/// the tie itself rounds to the even 448) an f32 or f64 overflows E4M3: lowp gives NaN, float8
/// 448.
const E4M3_OVERFLOW: f64 = 464.0;
/// From this magnitude (61440, the midpoint of E5M2's 57344 and 65536, a tie that rounds to the
/// even 65536, out of range) an f32 or f64 overflows E5M2: lowp gives infinity, float8 57344.
const E5M2_OVERFLOW: f64 = 61440.0;

/// float8's and lowp's E4M3 `from_f64` of `x` (or `from_f32` of the f32 it holds), as float8
/// and lowp give them: the same, except on overflow (±infinity included).
fn expected_e4m3(x: f64, same: u8) -> (u8, u8) {
    let sign = if x.is_sign_negative() { SIGN } else { 0 };
    if !x.is_nan() && x.abs() > E4M3_OVERFLOW {
        (0x7E | sign, 0x7F | sign)
    } else {
        (same, same)
    }
}

/// The same for E5M2: overflow (and ±infinity) gives float8's 57344 and lowp's infinity; a NaN
/// whose second payload bit (f64 bit 50, f32 bit 21) is set gives float8's 0x7F (its mantissa
/// bits are copied, and only 0x7E is a NaN to float8) and lowp's quiet 0x7E.
fn expected_e5m2(x: f64, same: u8) -> (u8, u8) {
    let sign = if x.is_sign_negative() { SIGN } else { 0 };
    if x.is_nan() && x.to_bits() & 1 << 50 != 0 {
        (0x7F | sign, 0x7E | sign)
    } else if !x.is_nan() && x.abs() >= E5M2_OVERFLOW {
        (0x7B | sign, 0x7C | sign)
    } else {
        (same, same)
    }
}

/// Whether lowp's saturating conversion gave float8's result: it does for every input but a
/// NaN, which gives lowp's NaN (the same as float8's but for the E5M2 payload bit above).
fn float8_is_saturating(nan: bool, (float8, lowp): (u8, u8), lowp_saturating: u8) -> bool {
    lowp_saturating == if nan { lowp } else { float8 }
}

#[test]
fn from_f32_on_every_f32() {
    // f32 is widened exactly, and quieted if signalling, before the classes are taken.
    const BLOCK: u64 = 1 << 24;
    let start = Instant::now();
    let next = AtomicU64::new(0);
    let counts = Mutex::new([0u64; 4]);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                // Inputs where E4M3 differs, E5M2 overflow, E5M2 NaN, and the rest.
                let mut local = [0u64; 4];
                loop {
                    let block = next.fetch_add(1, AtomicOrdering::Relaxed);
                    if block >= (1 << 32) / BLOCK {
                        break;
                    }
                    for bits in block * BLOCK..(block + 1) * BLOCK {
                        let x = f32::from_bits(bits as u32);
                        let e4m3 = (F8E4M3::from_f32(x).to_bits(), L8E4M3::from_f32(x).to_bits());
                        let e5m2 = (F8E5M2::from_f32(x).to_bits(), L8E5M2::from_f32(x).to_bits());
                        let wide = f64::from(x);
                        let want4 = expected_e4m3(wide, e4m3.1);
                        let want5 = expected_e5m2(wide, e5m2.1);
                        assert!(
                            e4m3 == want4,
                            "E4M3 {bits:#010x}: {e4m3:x?}, not {want4:x?}"
                        );
                        assert!(
                            e5m2 == want5,
                            "E5M2 {bits:#010x}: {e5m2:x?}, not {want5:x?}"
                        );
                        let sat4 = L8E4M3::from_f32_saturating(x).to_bits();
                        let sat5 = L8E5M2::from_f32_saturating(x).to_bits();
                        assert!(float8_is_saturating(x.is_nan(), e4m3, sat4), "{bits:#x}");
                        assert!(float8_is_saturating(x.is_nan(), e5m2, sat5), "{bits:#x}");
                        if e4m3.0 != e4m3.1 {
                            local[0] += 1;
                        }
                        if e5m2.0 != e5m2.1 {
                            local[if x.is_nan() { 2 } else { 1 }] += 1;
                        }
                        if e4m3.0 == e4m3.1 && e5m2.0 == e5m2.1 {
                            local[3] += 1;
                        }
                    }
                }
                let mut total = counts.lock().unwrap();
                for (t, l) in total.iter_mut().zip(local) {
                    *t += l;
                }
            });
        }
    });
    let counts = counts.into_inner().unwrap();
    println!(
        "{} f32 inputs in {:.1} s on {threads} threads: E4M3 differs on {}, E5M2 on {} (overflow) \
         and {} (NaN), both agree on {}",
        1u64 << 32,
        start.elapsed().as_secs_f64(),
        counts[0],
        counts[1],
        counts[2],
        counts[3]
    );
    // Per sign: E4M3, the f32s above 464 up to infinity; E5M2, 61440 up to infinity, and the
    // NaNs with bit 21 set (2^22 of them: bit 22 is set or set by quieting, 21 low bits free).
    let per_sign = |lo: f32, inclusive: bool| {
        u64::from(f32::INFINITY.to_bits() - lo.to_bits()) + u64::from(inclusive)
    };
    assert_eq!(counts[0], 2 * per_sign(464.0, false));
    assert_eq!(counts[1], 2 * per_sign(61440.0, true));
    assert_eq!(counts[2], 2 * (1 << 22));
}

/// f64 inputs around every rounding boundary of `T` (given as its non-negative finite values
/// in order, with the first value past the largest): each value, each midpoint, the f64s just
/// beside the midpoint, and values 2^-40 beside it (which an f32 cannot hold: rounded to f32
/// they land on the midpoint, so a conversion through f32 would round twice); then zeros,
/// f64 extremes, infinities and NaNs with different payloads; all with both signs.
fn directed_f64(values: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    for pair in values.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let m = (a + b) / 2.0;
        out.extend([a, m, m.next_up(), m.next_down()]);
        out.extend([m + m * 2f64.powi(-40), m - m * 2f64.powi(-40)]);
    }
    out.extend([values[values.len() - 1], 1e300, f64::MAX, f64::INFINITY]);
    out.extend([f64::MIN_POSITIVE, 5e-324, 1e-300, 1e-30]);
    let nans = [
        0x7FF8_0000_0000_0000u64, // the quiet NaN
        0x7FFC_0000_0000_0000,    // quiet, bit 50 set
        0x7FF4_0000_0000_0000,    // signalling, bit 50 set
        0x7FF0_0000_0000_0001,    // signalling, lowest bit
        0x7FFF_FFFF_FFFF_FFFF,    // every payload bit
    ];
    out.extend(nans.map(f64::from_bits));
    let negated: Vec<f64> = out.iter().map(|x| -x).collect();
    out.extend(negated);
    out
}

/// The non-negative finite values of a lowp FP8 type in order, then the next value an
/// unbounded exponent would give (`MAX` plus its ulp).
fn ladder(to_f64: impl Fn(u8) -> f64, max: f64, ulp_of_max: f64) -> Vec<f64> {
    let mut v: Vec<f64> = (0..0x80u8).map(to_f64).filter(|x| x.is_finite()).collect();
    assert_eq!(v.last(), Some(&max));
    v.push(max + ulp_of_max);
    v
}

/// `from_f64` of every input of [`directed_f64`] around `values`: float8's and lowp's results
/// are `expected`, and float8's is lowp's saturating one, NaNs aside.
fn check_from_f64(
    values: &[f64],
    float8: impl Fn(f64) -> u8,
    lowp: impl Fn(f64) -> u8,
    lowp_saturating: impl Fn(f64) -> u8,
    expected: fn(f64, u8) -> (u8, u8),
) {
    for x in directed_f64(values) {
        let got = (float8(x), lowp(x));
        assert_eq!(got, expected(x, got.1), "{x:e} ({:#x})", x.to_bits());
        assert!(
            float8_is_saturating(x.is_nan(), got, lowp_saturating(x)),
            "{x:e}"
        );
    }
}

#[test]
fn from_f64_on_every_rounding_boundary() {
    check_from_f64(
        &ladder(|b| L8E4M3::from_bits(b).to_f64(), 448.0, 32.0),
        |x| F8E4M3::from_f64(x).to_bits(),
        |x| L8E4M3::from_f64(x).to_bits(),
        |x| L8E4M3::from_f64_saturating(x).to_bits(),
        expected_e4m3,
    );
    check_from_f64(
        &ladder(|b| L8E5M2::from_bits(b).to_f64(), 57344.0, 8192.0),
        |x| F8E5M2::from_f64(x).to_bits(),
        |x| L8E5M2::from_f64(x).to_bits(),
        |x| L8E5M2::from_f64_saturating(x).to_bits(),
        expected_e5m2,
    );
    // Neither crate rounds an f64 twice: 1.0625 is the tie between 1 and 1.125 in E4M3, and
    // 1.0625 + 2^-40 rounds up, though through f32 (which cannot hold it) it would be the tie
    // and round to the even 1.
    let x = 1.0625 + 2f64.powi(-40);
    assert_eq!(
        (F8E4M3::from_f64(x).to_bits(), L8E4M3::from_f64(x).to_bits()),
        (0x39, 0x39)
    );
    let through_f32 = x as f32;
    assert_eq!(
        (
            F8E4M3::from_f32(through_f32).to_bits(),
            L8E4M3::from_f32(through_f32).to_bits()
        ),
        (0x38, 0x38)
    );
    // The overflow rules by example: 1000 and infinity.
    for x in [1000.0, f64::INFINITY] {
        assert_eq!(
            (F8E4M3::from_f64(x).to_f32(), L8E4M3::from_f64(x).to_bits()),
            (448.0, 0x7F)
        );
        assert_eq!(
            (
                F8E5M2::from_f64(x * 100.0).to_f32(),
                L8E5M2::from_f64(x * 100.0).to_f32()
            ),
            (57344.0, f32::INFINITY)
        );
    }
    // lowp saturates on request, as float8 always does (to 448 and 57344, its INFINITY).
    assert_eq!(
        L8E4M3::from_f64_saturating(1000.0).to_bits(),
        F8E4M3::INFINITY.to_bits()
    );
    assert_eq!(
        L8E5M2::from_f64_saturating(1e9).to_bits(),
        F8E5M2::INFINITY.to_bits()
    );
}

// ---------------------------------------------------------------------------------------------
// Arithmetic, min/max/clamp/copysign
// ---------------------------------------------------------------------------------------------

/// The five operators on every pair of patterns: both crates compute in f32 and round once, so
/// they agree except where the f32 result overflows (float8 saturates) or an operand is NaN
/// (float8's NaNs widen to the positive NaN 0x7FFF_E000, which the operation passes on and
/// which comes back as 0x7F: in E5M2 a pattern float8's `is_nan` denies).
macro_rules! arithmetic_on_every_pair {
    ($f:ty, $l:ty, $overflows:expr, $float8_overflow:expr, $lowp_overflow:expr) => {{
        let mut differences = 0u32;
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let (fa, fb) = (<$f>::from_bits(a), <$f>::from_bits(b));
                let (la, lb) = (<$l>::from_bits(a), <$l>::from_bits(b));
                let (x, y) = (la.to_f32(), lb.to_f32());
                let results = [
                    ("+", (fa + fb).to_bits(), la + lb, x + y),
                    ("-", (fa - fb).to_bits(), la - lb, x - y),
                    ("*", (fa * fb).to_bits(), la * lb, x * y),
                    ("/", (fa / fb).to_bits(), la / lb, x / y),
                    ("%", (fa % fb).to_bits(), la % lb, x % y),
                ];
                for (op, float8, lowp, exact) in results {
                    let at = format!("{a:#04x} {op} {b:#04x} = {exact}");
                    assert_eq!(lowp.to_bits(), <$l>::from_f32(exact).to_bits(), "{at}");
                    let sign = if exact.is_sign_negative() { SIGN } else { 0 };
                    if la.is_nan() || lb.is_nan() {
                        assert!(lowp.is_nan() && float8 == 0x7F, "{at}: {float8:#04x}");
                    } else if !exact.is_nan() && $overflows(f64::from(exact).abs()) {
                        assert_eq!(float8, $float8_overflow | sign, "{at}");
                        assert_eq!(lowp.to_bits(), $lowp_overflow | sign, "{at}");
                    } else {
                        assert_eq!(float8, lowp.to_bits(), "{at}");
                        continue;
                    }
                    differences += u32::from(float8 != lowp.to_bits());
                }
            }
        }
        differences
    }};
}

#[test]
fn arithmetic_agrees_except_on_overflow_and_nan_operands() {
    let e4m3 = arithmetic_on_every_pair!(F8E4M3, L8E4M3, |m| m > E4M3_OVERFLOW, 0x7E, 0x7F);
    let e5m2 = arithmetic_on_every_pair!(F8E5M2, L8E5M2, |m| m >= E5M2_OVERFLOW, 0x7B, 0x7C);
    println!("results that differ: E4M3 {e4m3}, E5M2 {e5m2} (of 327680 each)");
    // By example: 240 + 240 = 480 overflows E4M3, and float8's NaN plus one is 0x7F, which in
    // E5M2 its own is_nan denies.
    let e4m3_240 = (F8E4M3::from_f32(240.0), L8E4M3::from_f32(240.0));
    assert_eq!(
        (
            (e4m3_240.0 + e4m3_240.0).to_f32(),
            (e4m3_240.1 + e4m3_240.1).to_bits()
        ),
        (448.0, 0x7F)
    );
    let nan_plus_one = F8E5M2::NAN + F8E5M2::ONE;
    assert_eq!(
        (nan_plus_one.to_bits(), nan_plus_one.is_nan()),
        (0x7F, false)
    );
    assert_eq!((L8E5M2::NAN + L8E5M2::ONE).to_bits(), 0x7E);
    let one_plus_negative_nan = (F8E4M3::ONE + -F8E4M3::NAN, L8E4M3::ONE + -L8E4M3::NAN);
    assert_eq!(
        (
            one_plus_negative_nan.0.to_bits(),
            one_plus_negative_nan.1.to_bits()
        ),
        (0x7F, 0xFF)
    );
}

#[test]
fn min_max_copysign_agree_except_float8_keeps_a_nan_self() {
    for a in 0..=255u8 {
        for b in 0..=255u8 {
            let at = format!("{a:#04x} {b:#04x}");
            let (f, g) = (F8E4M3::from_bits(a), F8E4M3::from_bits(b));
            let (l, m) = (L8E4M3::from_bits(a), L8E4M3::from_bits(b));
            assert_eq!(f.copysign(g).to_bits(), l.copysign(m).to_bits(), "{at}");
            // float8's min and max return self when self is NaN; lowp (IEEE minNum/maxNum,
            // f32::min/max, and float8's own docs) returns the other argument.
            let (min, max) = if l.is_nan() {
                (a, a)
            } else {
                (l.min(m).to_bits(), l.max(m).to_bits())
            };
            assert_eq!(
                (f.min(g).to_bits(), f.max(g).to_bits()),
                (min, max),
                "E4M3 {at}"
            );

            let (f, g) = (F8E5M2::from_bits(a), F8E5M2::from_bits(b));
            let (l, m) = (L8E5M2::from_bits(a), L8E5M2::from_bits(b));
            assert_eq!(f.copysign(g).to_bits(), l.copysign(m).to_bits(), "{at}");
            // In E5M2 float8 also takes 0x7D, 0x7F, 0xFD and 0xFF for numbers above infinity.
            let float8_lt = |x: u8, y: u8| {
                let nan = |v: u8| v & 0x7F == 0x7E;
                !nan(x) && !nan(y) && sign_magnitude(x) < sign_magnitude(y)
            };
            let float8_min = if float8_lt(b, a) { b } else { a };
            let float8_max = if float8_lt(a, b) { b } else { a };
            assert_eq!(
                (f.min(g).to_bits(), f.max(g).to_bits()),
                (float8_min, float8_max),
                "E5M2 {at}"
            );
            if !l.is_nan() && !m.is_nan() {
                assert_eq!(
                    (l.min(m).to_bits(), l.max(m).to_bits()),
                    (float8_min, float8_max),
                    "E5M2 {at}"
                );
            }
        }
    }
    let (one, nan) = (L8E4M3::ONE, L8E4M3::NAN);
    assert_eq!((nan.min(one), nan.max(one)), (one, one));
    assert!(F8E4M3::NAN.min(F8E4M3::ONE).is_nan());
}

#[test]
fn clamp_with_bounds_out_of_order_panics_in_float8_and_gives_nan_in_lowp() {
    let (one, two) = (F8E4M3::ONE, F8E4M3::from_f32(2.0));
    assert!(std::panic::catch_unwind(|| one.clamp(two, one)).is_err());
    assert!(std::panic::catch_unwind(|| one.clamp(F8E4M3::NAN, two)).is_err());
    let (one, two) = (L8E4M3::ONE, L8E4M3::from_f32(2.0));
    assert!(one.clamp(two, one).is_nan());
    assert!(one.clamp(L8E4M3::NAN, two).is_nan());
    assert_eq!(L8E4M3::from_f32(3.0).clamp(one, two), two);
}

// ---------------------------------------------------------------------------------------------
// Parsing and formatting
// ---------------------------------------------------------------------------------------------

#[test]
fn parsing_agrees_except_double_rounding_and_overflow() {
    // (input, E4M3 float8, E4M3 lowp, E5M2 float8, E5M2 lowp): float8 parses an f32 and rounds
    // that, so a decimal just beside a tie lands on the tie in f32 and rounds to even; lowp
    // rounds the decimal once. Overflow as in from_f64.
    let cases: [(&str, u8, u8, u8, u8); 14] = [
        ("0.1", 0x1D, 0x1D, 0x2E, 0x2E),
        ("1.0625", 0x38, 0x38, 0x3C, 0x3C),
        ("1.0625000001", 0x38, 0x39, 0x3C, 0x3C), // E4M3: 1.0625 is the tie of 1 and 1.125
        ("1.1250000001", 0x39, 0x39, 0x3C, 0x3D), // E5M2: 1.125 is the tie of 1 and 1.25
        ("0.00097656251", 0x00, 0x01, 0x14, 0x14), // E4M3: 2^-10 is the tie of 0 and 2^-9
        ("464", 0x7E, 0x7E, 0x5F, 0x5F),
        ("464.00001", 0x7E, 0x7F, 0x5F, 0x5F),
        ("61439.99", 0x7E, 0x7F, 0x7B, 0x7B),
        ("61440", 0x7E, 0x7F, 0x7B, 0x7C),
        ("1e9", 0x7E, 0x7F, 0x7B, 0x7C),
        ("inf", 0x7E, 0x7F, 0x7B, 0x7C),
        ("-infinity", 0xFE, 0xFF, 0xFB, 0xFC),
        ("NaN", 0x7F, 0x7F, 0x7E, 0x7E),
        ("-nan", 0xFF, 0xFF, 0xFE, 0xFE),
    ];
    for (s, f4, l4, f5, l5) in cases {
        let e4m3 = (
            s.parse::<F8E4M3>().unwrap().to_bits(),
            s.parse::<L8E4M3>().unwrap().to_bits(),
        );
        let e5m2 = (
            s.parse::<F8E5M2>().unwrap().to_bits(),
            s.parse::<L8E5M2>().unwrap().to_bits(),
        );
        assert_eq!((e4m3, e5m2), ((f4, l4), (f5, l5)), "{s}");
    }
    // The error types differ: float8's is core's ParseFloatError, lowp's its own.
    let float8: core::num::ParseFloatError = "".parse::<F8E4M3>().unwrap_err();
    let lowp: lowp::ParseFloatError = "".parse::<L8E4M3>().unwrap_err();
    assert_eq!(float8.to_string(), "cannot parse float from empty string");
    assert_eq!(
        lowp.to_string(),
        "cannot parse a float from an empty string"
    );
    for s in ["abc", "0x10", "1_0"] {
        assert!(
            s.parse::<F8E4M3>().is_err() && s.parse::<L8E4M3>().is_err(),
            "{s}"
        );
    }
}

/// Formatting of every pattern: both crates format the value's f32 (ignoring precision in
/// `{:e}` and flags in `{:x}`), so they print alike wherever the value is the same; lowp's
/// `shortest` prints the shortest decimal that reads back as the same value.
macro_rules! formatting_of_every_pattern {
    ($f:ty, $l:ty) => {{
        let mut shorter = 0;
        for b in 0..=255u8 {
            let (f, l) = (<$f>::from_bits(b), <$l>::from_bits(b));
            let v = l.to_f32();
            let at = format!("{b:#04x}");
            if !l.is_nan() {
                assert_eq!(f.to_f32().to_bits(), v.to_bits(), "{at}");
                for (ours, theirs) in [
                    (format!("{l}"), format!("{f}")),
                    (format!("{l:?}"), format!("{f:?}")),
                    (format!("{l:e}"), format!("{f:e}")),
                    (format!("{l:E}"), format!("{f:E}")),
                    (format!("{l:.2e}"), format!("{f:.2e}")),
                    (format!("{l:>12}|{l:+}"), format!("{f:>12}|{f:+}")),
                ] {
                    assert_eq!(ours, theirs, "{at}");
                }
                assert_eq!(format!("{l}"), format!("{v}"), "{at}");
                let s = l.shortest();
                for shortest in [format!("{s}"), format!("{s:?}"), format!("{s:e}")] {
                    assert_eq!(
                        shortest.parse::<$l>().unwrap().to_bits(),
                        b,
                        "{at}: {shortest}"
                    );
                }
                shorter += usize::from(format!("{s}") != format!("{f}"));
            } else {
                assert_eq!(
                    (format!("{f}"), format!("{l}")),
                    ("NaN".into(), "NaN".into()),
                    "{at}"
                );
            }
            for p in [0, 1, 3, 16] {
                assert_eq!(format!("{f:.p$}"), format!("{l:.p$}"), "{at} .{p}");
            }
            assert_eq!(format!("{f:x} {f:X}"), format!("{l:x} {l:X}"), "{at}");
            assert_eq!(format!("{f:#x} {f:04X}"), format!("{l:#x} {l:04X}"), "{at}");
        }
        shorter
    }};
}

#[test]
fn formatting_is_float8s_and_shortest_is_shorter() {
    let e4m3 = formatting_of_every_pattern!(F8E4M3, L8E4M3);
    let e5m2 = formatting_of_every_pattern!(F8E5M2, L8E5M2);
    println!("`shortest` prints fewer digits on {e4m3} E4M3 and {e5m2} E5M2 patterns");
    assert!(e4m3 > 0 && e5m2 > 0);
    let show =
        |f: &dyn std::fmt::Display, l: &dyn std::fmt::Display| (f.to_string(), l.to_string());
    assert_eq!(
        show(&F8E4M3::from_bits(0x7E), &L8E4M3::MAX),
        ("448".into(), "448".into())
    );
    assert_eq!(show(&L8E4M3::MAX, &L8E4M3::MAX.shortest()).1, "450");
    assert_eq!(
        show(&F8E4M3::from_f32(0.1), &L8E4M3::from_f32(0.1).shortest()),
        ("0.1015625".into(), "0.1".into())
    );
    assert_eq!(
        show(&F8E5M2::from_bits(0x7B), &L8E5M2::MAX.shortest()),
        ("57344".into(), "60000".into())
    );
    assert_eq!(format!("{:?} {:?}", F8E4M3::ONE, L8E4M3::ONE), "1.0 1.0");
    assert_eq!(
        format!("{:.3e} {:.3e}", F8E4M3::ONE, L8E4M3::ONE.shortest()),
        "1e0 1.000e0"
    );
}
