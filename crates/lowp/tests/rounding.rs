//! Every rounding mode, from f32 and from f64, against a reference built from the sorted list of
//! each format's values: directed tests at and around every midpoint and every value of every
//! format, a sweep over millions of f32 inputs in every mode, and the cases where today's crates
//! (half 2.7.1, float8 0.7.0, ml_dtypes 0.6.0) are wrong.

// Tests run on the development toolchain; the minimum Rust (`rust-version`) is the
// library's.
#![allow(clippy::incompatible_msrv)]

use lowp::{
    LowpFloat, Rounding, bf16, f4e2m1fn, f6e2m3fn, f6e3m2fn, f8e3m4, f8e4m3, f8e4m3fn, f8e4m3fnuz,
    f8e5m2, f8e5m2fnuz, f8e8m0fnu, f16,
};

/// The finite non-negative values of `T` in increasing order, as (value, bits), with a virtual
/// value one step past the largest whose selection means overflow.
fn values<T: LowpFloat>() -> Vec<(f64, u32)> {
    let fmt = T::FORMAT;
    let mut v: Vec<(f64, u32)> = (0..1u32 << fmt.total_bits())
        .map(|b| (T::from_bits_u32(b).to_f64(), b))
        .filter(|(x, _)| x.is_finite() && x.is_sign_positive())
        .collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (max, max_bits) = *v.last().unwrap();
    v.push((
        max + 2f64.powi(fmt.max_exponent() - fmt.mantissa_bits as i32),
        max_bits + 1,
    ));
    v
}

/// The modes, with what each does to a magnitude strictly between two neighbours.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Nearest,
    TowardZero,
    TowardPositive,
    TowardNegative,
    Stochastic(u32),
}

impl Mode {
    fn rounding(self) -> Rounding {
        match self {
            Mode::Nearest => Rounding::NearestEven,
            Mode::TowardZero => Rounding::TowardZero,
            Mode::TowardPositive => Rounding::TowardPositive,
            Mode::TowardNegative => Rounding::TowardNegative,
            Mode::Stochastic(r) => Rounding::Stochastic(r),
        }
    }
}

/// The reference result of rounding the finite nonzero-or-zero `x` in `mode`: `Some(bits)` or
/// `None` for NaN.
fn reference<T: LowpFloat>(vals: &[(f64, u32)], x: f64, mode: Mode, saturate: bool) -> Option<u32> {
    let fmt = T::FORMAT;
    let neg = x.is_sign_negative();
    let sign = if neg { fmt.sign_mask() } else { 0 };
    if (neg && !fmt.signed) || (x == 0.0 && !fmt.has_zero()) {
        return None;
    }
    let a = x.abs();
    let last = vals.len() - 1;
    // Overflow: IEEE's rule, with NaN standing in for a missing infinity and MAX for both.
    let overflow = |to_infinity: bool| {
        if saturate || !to_infinity || (!fmt.has_infinity() && !fmt.has_nan()) {
            Some(sign | fmt.max_finite_bits())
        } else {
            fmt.infinity_bits().map(|inf| sign | inf)
        }
    };
    let i = vals.partition_point(|v| v.0 <= a);
    if i == 0 {
        return Some(vals[0].1); // below the smallest value of a format without zero
    }
    let lo = i - 1;
    if vals[lo].0 == a && lo < last {
        let mag = vals[lo].1;
        return Some(if mag == 0 && !fmt.has_negative_zero() {
            0
        } else {
            sign | mag
        });
    }
    let up_in_magnitude = if lo == last {
        true
    } else {
        let (l, h) = (vals[lo].0, vals[lo + 1].0);
        match mode {
            Mode::Nearest => {
                let (twice, sum) = (2.0 * a, l + h);
                twice > sum || (twice == sum && (fmt.mantissa_bits == 0 || vals[lo].1 & 1 == 1))
            }
            Mode::TowardZero => false,
            Mode::TowardPositive => !neg,
            Mode::TowardNegative => neg,
            Mode::Stochastic(r) => {
                // a - l and the scaling by 2^32 / (h - l), a power of two, are exact in f64.
                let threshold = ((a - l) / (h - l) * 4294967296.0).floor();
                (r as f64) < threshold
            }
        }
    };
    let j = if lo == last {
        last
    } else {
        lo + up_in_magnitude as usize
    };
    if j == last {
        let to_infinity = match mode {
            Mode::Nearest | Mode::Stochastic(_) => true,
            Mode::TowardZero => false,
            Mode::TowardPositive => !neg,
            Mode::TowardNegative => neg,
        };
        // Beyond the virtual value every mode but toward-zero overflows: the rounded magnitude
        // is past MAX either way.
        return overflow(to_infinity && (lo == last || up_in_magnitude));
    }
    let mag = vals[j].1;
    Some(if mag == 0 && !fmt.has_negative_zero() {
        0
    } else {
        sign | mag
    })
}

fn matches<T: LowpFloat>(got: T, want: Option<u32>) -> bool {
    match want {
        None => T::FORMAT.is_nan_bits(got.to_bits_u32()),
        Some(b) => got.to_bits_u32() == b,
    }
}

const MODES: [Mode; 6] = [
    Mode::Nearest,
    Mode::TowardZero,
    Mode::TowardPositive,
    Mode::TowardNegative,
    Mode::Stochastic(0x9e37_79b9),
    Mode::Stochastic(0x1234_5678),
];

/// f64 inputs at, just inside and just outside every midpoint and every value, both signs:
/// the inputs where a double rounding through f32 goes wrong are among them.
fn f64_probes(vals: &[(f64, u32)]) -> Vec<f64> {
    let mut xs = Vec::new();
    for w in vals.windows(2) {
        let (l, h) = (w[0].0, w[1].0);
        let m = (l + h) / 2.0;
        for base in [l, m, h] {
            let tiny = base.abs().max(f64::MIN_POSITIVE) * 2f64.powi(-40);
            xs.extend([
                base,
                base.next_up(),
                base.next_down(),
                base + tiny,
                base - tiny,
            ]);
        }
        // Quarter points, which no midpoint tie can confuse.
        xs.extend([l + (h - l) / 4.0, l + 3.0 * (h - l) / 4.0]);
    }
    let top = vals.last().unwrap().0;
    xs.extend([top * 4.0, f64::MAX, f64::MIN_POSITIVE, 5e-324, 0.0]);
    let negatives: Vec<f64> = xs.iter().map(|x| -x).collect();
    xs.extend(negatives);
    xs.retain(|x| x.is_finite() && *x >= -f64::MAX);
    xs
}

fn f64_sources<T: LowpFloat>() -> usize {
    let vals = values::<T>();
    let xs = f64_probes(&vals);
    for &x in &xs {
        for mode in MODES {
            for saturate in [false, true] {
                let got = if saturate {
                    T::from_f64_round_saturating(x, mode.rounding())
                } else {
                    T::from_f64_round(x, mode.rounding())
                };
                let want = reference::<T>(&vals, x, mode, saturate);
                assert!(
                    matches(got, want),
                    "{} from f64 {x:e} ({:#018x}) {mode:?} saturate={saturate}: got {:#x}, want {want:x?}",
                    T::FORMAT.name,
                    x.to_bits(),
                    got.to_bits_u32()
                );
            }
        }
        let nearest = T::from_f64(x).to_bits_u32();
        assert_eq!(
            nearest,
            T::from_f64_round(x, Rounding::NearestEven).to_bits_u32()
        );
        assert_eq!(
            T::from_f64_saturating(x).to_bits_u32(),
            T::from_f64_round_saturating(x, Rounding::NearestEven).to_bits_u32()
        );
    }
    xs.len()
}

/// f32 inputs in every mode: every pattern whose low 12 bits are one of a few shapes (so every
/// exponent, sign and top mantissa bits, with the discarded bits at their extremes and middle).
fn f32_sweep<T: LowpFloat>() -> usize {
    let vals = values::<T>();
    let lows = [0u32, 1, 0x7ff, 0x800, 0x801, 0xfff];
    let mut count = 0;
    for high in 0..1u32 << 20 {
        for low in lows {
            let x = f32::from_bits(high << 12 | low);
            if !x.is_finite() {
                continue;
            }
            for mode in MODES {
                for saturate in [false, true] {
                    let got = if saturate {
                        T::from_f32_round_saturating(x, mode.rounding())
                    } else {
                        T::from_f32_round(x, mode.rounding())
                    };
                    let want = reference::<T>(&vals, x as f64, mode, saturate);
                    assert!(
                        matches(got, want),
                        "{} from f32 {x:e} ({:#010x}) {mode:?} saturate={saturate}: got {:#x}, want {want:x?}",
                        T::FORMAT.name,
                        x.to_bits(),
                        got.to_bits_u32()
                    );
                }
            }
            count += 1;
        }
    }
    count
}

macro_rules! per_format {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            let probes = f64_sources::<$t>();
            let sweep = f32_sweep::<$t>();
            println!("{}: {probes} f64 probes and {sweep} f32 inputs, 6 modes x saturating", stringify!($t));
        }
    )*};
}

per_format! {
    modes_f16: f16, modes_bf16: bf16, modes_f8e4m3fn: f8e4m3fn, modes_f8e5m2: f8e5m2,
    modes_f8e4m3fnuz: f8e4m3fnuz, modes_f8e5m2fnuz: f8e5m2fnuz, modes_f8e4m3: f8e4m3,
    modes_f8e3m4: f8e3m4, modes_f8e8m0fnu: f8e8m0fnu, modes_f6e2m3fn: f6e2m3fn,
    modes_f6e3m2fn: f6e3m2fn, modes_f4e2m1fn: f4e2m1fn,
}

#[test]
fn special_inputs_in_every_mode() {
    fn check<T: LowpFloat>() {
        let fmt = T::FORMAT;
        for mode in MODES {
            let r = mode.rounding();
            for (x, saturate) in [(f64::INFINITY, false), (f64::NEG_INFINITY, false)] {
                let got = T::from_f64_round(x, r).to_bits_u32();
                let neg = x < 0.0;
                let sign = if neg { fmt.sign_mask() } else { 0 };
                let want = if neg && !fmt.signed {
                    fmt.nan_bits()
                } else if let Some(inf) = fmt.infinity_bits() {
                    Some(sign | inf)
                } else if fmt.has_nan() {
                    None
                } else {
                    Some(sign | fmt.max_finite_bits())
                };
                let _ = saturate;
                match want {
                    Some(w) => assert_eq!(got, w, "{} {x} {mode:?}", fmt.name),
                    None => assert!(fmt.is_nan_bits(got), "{} {x} {mode:?}", fmt.name),
                }
                let sat = T::from_f64_round_saturating(x, r).to_bits_u32();
                if neg && !fmt.signed {
                    assert!(fmt.is_nan_bits(sat));
                } else {
                    assert_eq!(
                        sat,
                        sign | fmt.max_finite_bits(),
                        "{} {x} saturating",
                        fmt.name
                    );
                }
            }
            let nan = T::from_f64_round(f64::NAN, r).to_bits_u32();
            let nan_sat = T::from_f32_round_saturating(f32::NAN, r).to_bits_u32();
            if fmt.has_nan() {
                assert!(
                    fmt.is_nan_bits(nan) && fmt.is_nan_bits(nan_sat),
                    "{}",
                    fmt.name
                );
            } else {
                // A zero of the opposite sign, as ml_dtypes gives: +NaN (f64::NAN) gives -0.
                let minus = fmt.sign_mask();
                assert_eq!(
                    (nan, nan_sat),
                    (minus, minus),
                    "{}: +NaN gives -0",
                    fmt.name
                );
                let neg = T::from_f64_round(-f64::NAN, r).to_bits_u32();
                assert_eq!(neg, 0, "{}: -NaN gives +0", fmt.name);
            }
        }
    }
    check::<f16>();
    check::<bf16>();
    check::<f8e4m3fn>();
    check::<f8e5m2>();
    check::<f8e4m3fnuz>();
    check::<f8e5m2fnuz>();
    check::<f8e4m3>();
    check::<f8e3m4>();
    check::<f8e8m0fnu>();
    check::<f6e2m3fn>();
    check::<f6e3m2fn>();
    check::<f4e2m1fn>();
}

#[test]
fn stochastic_rounding_probability_is_proportional_to_distance() {
    // 1 + k/64 of the way from 1 to 1 + 2^-10 (f16): with the random word swept over every
    // multiple of 2^26, exactly k of the 64 words must round up (the threshold is k * 2^26).
    for k in 0..64u32 {
        let x = 1.0 + (k as f64 / 64.0) * 2f64.powi(-10);
        let ups = (0..64u32)
            .filter(|j| f16::from_f64_stochastic(x, j << 26).to_bits() == 0x3c01)
            .count();
        assert_eq!(ups, k as usize, "k = {k}");
    }
    // The mean of the rounded values over all those random words is the input: unbiased.
    let x = 1.0 + 0.3 * 2f64.powi(-7);
    let n = 1 << 16;
    let mean: f64 = (0..n)
        .map(|j: u32| bf16::from_f64_stochastic(x, j << 16).to_f64())
        .sum::<f64>()
        / n as f64;
    assert!(
        (mean - x).abs() <= 2f64.powi(-7) / n as f64,
        "{mean} vs {x}"
    );
    // Negative values round in magnitude, and exact values never move.
    assert_eq!(f16::from_f32_stochastic(-1.0005, u32::MAX).to_f32(), -1.0);
    assert_eq!(
        f16::from_f32_stochastic(-1.0005, 0).to_f32(),
        -(1.0 + 2f32.powi(-10))
    );
    assert_eq!(f8e4m3fn::from_f32_stochastic(1.125, 0).to_f32(), 1.125);
    assert!(f8e4m3fn::from_f32_stochastic(448.5, 0).is_nan());
    assert_eq!(
        f8e4m3fn::from_f32_stochastic_saturating(448.5, 0).to_bits(),
        0x7e
    );
}

/// The cases the issue lists, where half 2.7.1, float8 0.7.0 or ml_dtypes 0.6.0 go wrong.
#[test]
fn cases_other_crates_get_wrong() {
    // half drops the sticky bits from f64 (and its F16C path rounds through f32).
    assert_eq!(
        f16::from_f64(1.0 + 2f64.powi(-11) + 2f64.powi(-40)).to_bits(),
        0x3c01
    );
    // ml_dtypes rounds f64 through f32 too.
    assert_eq!(
        bf16::from_f64(1.0 + 2f64.powi(-8) + 2f64.powi(-40)).to_bits(),
        0x3f81
    );
    assert_eq!(f8e4m3fn::from_f64(1.0625 + 2f64.powi(-40)).to_bits(), 0x39);
    // The tie between 448 and the NaN slot goes to even (448); beyond it, NaN; saturating: 448.
    assert_eq!(f8e4m3fn::from_f32(464.0).to_f32(), 448.0);
    assert!(f8e4m3fn::from_f32(464.0001).is_nan());
    assert!(f8e4m3fn::from_f32(-465.0).is_nan());
    assert_eq!(f8e4m3fn::from_f32_saturating(464.0001).to_f32(), 448.0);
    assert_eq!(f8e4m3fn::from_f32_saturating(-1e30).to_f32(), -448.0);
    // E5M2's tie at 61440 goes to even, which is past MAX: infinity.
    assert_eq!(f8e5m2::from_f32(61439.0).to_f32(), 57344.0);
    assert!(f8e5m2::from_f32(61440.0).is_infinite());
    assert_eq!(f8e5m2::from_f32_saturating(61440.0).to_f32(), 57344.0);
    // FNUZ: every NaN and infinity to 0x80, -0 to +0.
    assert_eq!(f8e4m3fnuz::from_f32(f32::NEG_INFINITY).to_bits(), 0x80);
    assert_eq!(f8e5m2fnuz::from_f32(-f32::NAN).to_bits(), 0x80);
    assert_eq!(f8e4m3fnuz::from_f32(-0.0).to_bits(), 0);
    assert_eq!(f8e4m3fnuz::from_f32(-1e-30).to_bits(), 0);
    // E8M0: zero, negatives, infinities and NaN are NaN; ties between powers of two go up.
    for x in [
        0.0f32,
        -0.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ] {
        assert!(f8e8m0fnu::from_f32(x).is_nan(), "{x}");
    }
    assert_eq!(f8e8m0fnu::from_f32(1.5).to_f32(), 2.0);
    assert_eq!(f8e8m0fnu::from_f32(3.0).to_f32(), 4.0);
    assert_eq!(f8e8m0fnu::from_f32(1.4999).to_f32(), 1.0);
    assert_eq!(
        f8e8m0fnu::from_f32(1e-45).to_bits(),
        0,
        "tiny positives clamp to 2^-127"
    );
    // FP6/FP4 saturate and take infinities to ±MAX.
    assert_eq!(f4e2m1fn::from_f32(f32::INFINITY).to_f32(), 6.0);
    assert_eq!(f6e2m3fn::from_f32(-100.0).to_f32(), -7.5);
    assert_eq!(f6e3m2fn::from_f32(f32::NEG_INFINITY).to_f32(), -28.0);
    assert_eq!(
        f4e2m1fn::from_f32(5.0).to_f32(),
        4.0,
        "tie between 4 and 6 goes to even 4"
    );
}

#[test]
fn f16_nan_payloads_survive_the_round_trip() {
    // A signaling f16 NaN widens to a quiet f32 NaN with the payload shifted up...
    let snan = f16::from_bits(0x7c01);
    let wide = snan.to_f32();
    assert!(wide.is_nan());
    assert_eq!(wide.to_bits(), 0x7fc0_2000);
    assert_eq!(snan.to_f32_const().to_bits(), 0x7fc0_2000);
    // ...and comes back a NaN with the payload kept (and quiet).
    assert_eq!(f16::from_f32(wide).to_bits(), 0x7e01);
    assert_eq!(f16::from_f32_const(wide).to_bits(), 0x7e01);
    assert_eq!(f16::from_f64(snan.to_f64()).to_bits(), 0x7e01);
    assert_eq!(
        f16::from_bits(0xfd55).to_f64().to_bits() >> 63,
        1,
        "the sign survives"
    );
    // bf16 and FP8 give the canonical NaN of the sign, payload dropped, as ml_dtypes does
    // (tests/nan_inputs.rs has the whole table)...
    assert_eq!(
        bf16::from_f32(f32::from_bits(0x7f80_0001)).to_bits(),
        0x7fc0,
        "quiet, not inf"
    );
    assert_eq!(
        f8e5m2::from_f32(f32::from_bits(0xffa0_0000)).to_bits(),
        0xfe
    );
    // ...and bf16 widens by a shift, which keeps a signalling NaN as it is.
    assert_eq!(bf16::from_bits(0x7f81).to_f32().to_bits(), 0x7f81_0000);
}

/// `f16::from_f64` may round to odd through an f32 and use F16C; the software engine is the
/// reference. Every f64 exponent that matters, with mantissas full of sticky bits and exact
/// midpoints, plus a long pseudo-random stream of bit patterns.
#[test]
fn f16_from_f64_hardware_path_matches_the_engine() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut checked = 0u64;
    let mut check = |x: f64| {
        let (hw, sw) = (f16::from_f64(x).to_bits(), f16::from_f64_const(x).to_bits());
        assert_eq!(hw, sw, "{x:e} ({:#018x})", x.to_bits());
        checked += 1;
    };
    for exponent in 0..0x7ffu64 {
        for _ in 0..2000 {
            let r = next();
            let bits = exponent << 52 | (r & ((1 << 52) - 1)) | (r & (1 << 63));
            check(f64::from_bits(bits));
            // The same with the bits below f16's midpoint grid cleared: exact ties and near-ties.
            check(f64::from_bits(bits & !((1 << 40) - 1)));
            check(f64::from_bits((bits & !((1 << 40) - 1)) | 1));
        }
    }
    for _ in 0..10_000_000 {
        check(f64::from_bits(next()));
    }
    for x in [
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        f64::MAX,
        f64::MIN_POSITIVE,
    ] {
        check(x);
    }
    assert!(checked > 20_000_000);
}
