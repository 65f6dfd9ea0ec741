//! Arithmetic is correctly rounded: each operation computed in f32 and rounded once must equal
//! the exact result rounded once, which the reference here computes from an exact f64
//! representation `s + e` of the result (TwoSum, FMA residuals), independent of f32.

use lowp::{
    LowpFloat, Rounding, bf16, f4e2m1fn, f6e2m3fn, f6e3m2fn, f8e3m4, f8e4m3, f8e4m3fn, f8e4m3fnuz,
    f8e5m2, f8e5m2fnuz, f8e8m0fnu, f16,
};

/// A format with the four operators, so the checks below need one bound.
trait Arith:
    LowpFloat
    + core::ops::Add<Output = Self>
    + core::ops::Sub<Output = Self>
    + core::ops::Mul<Output = Self>
    + core::ops::Div<Output = Self>
{
}

impl<T> Arith for T where
    T: LowpFloat
        + core::ops::Add<Output = T>
        + core::ops::Sub<Output = T>
        + core::ops::Mul<Output = T>
        + core::ops::Div<Output = T>
{
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

/// The exact result of `x op y` as `s + e` with `s` the nearest f64 and `e` the exact error.
fn exact(op: Op, x: f64, y: f64) -> (f64, f64) {
    match op {
        Op::Add | Op::Sub => {
            let y = if matches!(op, Op::Sub) { -y } else { y };
            let s = x + y;
            let bb = s - x;
            (s, (x - (s - bb)) + (y - bb))
        }
        Op::Mul => {
            let p = x * y;
            (p, x.mul_add(y, -p))
        }
        Op::Div => {
            let q = x / y;
            if !q.is_finite() || q == 0.0 || !y.is_finite() {
                return (q, 0.0);
            }
            // x - q*y is exact; the true quotient lies on its side of q times sign(y).
            let residual = (-q).mul_add(y, x);
            (q, residual * y.signum())
        }
    }
}

/// Rounds the exact value `s + e` (with `|e|` at most half an f64 ulp of `s`) to nearest even in
/// `T`. Every rounding boundary of `T` is an f64, so only when `s` is itself a boundary does `e`
/// matter, and then its sign picks the side.
fn round_exact<T: LowpFloat>(s: f64, e: f64) -> T {
    // A boundary has at most p + 1 significant bits, so an `s` with any bit below that is not
    // one (the check is only a shortcut: the general path below gives the same answer).
    let below_midpoints = (1u64 << (52 - T::FORMAT.mantissa_bits - 1)) - 1;
    if e == 0.0 || !s.is_finite() || s.to_bits() & below_midpoints != 0 {
        return T::from_f64(s);
    }
    let down = T::from_f64_round(s, Rounding::TowardNegative);
    let up = T::from_f64_round(s, Rounding::TowardPositive);
    let value = |t: T, toward_positive: bool| {
        let v = t.to_f64();
        if v.is_finite() {
            v
        } else {
            // The virtual value one step beyond the largest: its midpoint is the overflow boundary.
            let max = T::from_bits_u32(T::FORMAT.max_finite_bits()).to_f64();
            let next = max + 2f64.powi(T::FORMAT.max_exponent() - T::FORMAT.mantissa_bits as i32);
            if toward_positive { next } else { -next }
        }
    };
    let (lo, hi) = (value(down, false), value(up, true));
    if lo == hi || s != (lo + hi) / 2.0 {
        T::from_f64(s)
    } else if e > 0.0 {
        up
    } else {
        down
    }
}

fn apply<T: Arith>(op: Op, x: T, y: T) -> T {
    match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        Op::Div => x / y,
    }
}

fn same<T: LowpFloat>(a: T, b: T) -> bool {
    a.to_bits_u32() == b.to_bits_u32() || (a.to_f64().is_nan() && b.to_f64().is_nan())
}

/// Checks `x op y` for every `x` of `T` and every `y` in `ys`; returns the number of pairs.
fn check<T: Arith>(op: Op, ys: &[u32]) -> u64 {
    let count = 1u32 << T::FORMAT.total_bits();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u32;
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut pairs = 0u64;
                    for xb in (t..count).step_by(threads as usize) {
                        let x = T::from_bits_u32(xb);
                        for &yb in ys {
                            let y = T::from_bits_u32(yb);
                            let got = apply(op, x, y);
                            let (s, e) = exact(op, x.to_f64(), y.to_f64());
                            let want: T = round_exact(s, e);
                            assert!(
                                same(got, want),
                                "{} {op:?}: {xb:#x} {yb:#x} gave {:#x}, exact rounding {:#x}",
                                T::FORMAT.name,
                                got.to_bits_u32(),
                                want.to_bits_u32()
                            );
                            pairs += 1;
                        }
                    }
                    pairs
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    })
}

fn every_pair<T: Arith>() {
    let ys: Vec<u32> = (0..1u32 << T::FORMAT.total_bits()).collect();
    for op in [Op::Add, Op::Sub, Op::Mul, Op::Div] {
        assert_eq!(check::<T>(op, &ys), (ys.len() * ys.len()) as u64);
    }
}

#[test]
fn every_pair_of_every_narrow_format_is_correctly_rounded() {
    every_pair::<f8e4m3fn>();
    every_pair::<f8e5m2>();
    every_pair::<f8e4m3fnuz>();
    every_pair::<f8e5m2fnuz>();
    every_pair::<f8e4m3>();
    every_pair::<f8e3m4>();
    every_pair::<f8e8m0fnu>();
    every_pair::<f6e2m3fn>();
    every_pair::<f6e3m2fn>();
    every_pair::<f4e2m1fn>();
}

/// Right operands for the 16-bit formats: every sign and exponent with the mantissa patterns
/// that matter most (zero, one, all ones, the top bit, and a spread of others).
fn sixteen_bit_operands<T: LowpFloat>() -> Vec<u32> {
    let man = T::FORMAT.mantissa_bits;
    let mut mantissas: Vec<u32> = vec![0, 1, 2, (1 << man) - 1, (1 << man) - 2, 1 << (man - 1)];
    mantissas.extend((0..12).map(|i| (0x9e37_79b9u32.wrapping_mul(i + 1) >> 7) & ((1 << man) - 1)));
    mantissas.sort_unstable();
    mantissas.dedup();
    let mut ys = Vec::new();
    for sign in [0, T::FORMAT.sign_mask()] {
        for field in 0..1u32 << T::FORMAT.exponent_bits {
            for &m in &mantissas {
                ys.push(sign | field << man | m);
            }
        }
    }
    ys
}

#[test]
fn f16_against_every_exponent_is_correctly_rounded() {
    let ys = sixteen_bit_operands::<f16>();
    for op in [Op::Add, Op::Mul, Op::Div] {
        assert_eq!(check::<f16>(op, &ys), 65536 * ys.len() as u64);
    }
}

#[test]
fn bf16_against_every_exponent_is_correctly_rounded() {
    let ys = sixteen_bit_operands::<bf16>();
    for op in [Op::Add, Op::Mul, Op::Div] {
        assert_eq!(check::<bf16>(op, &ys), 65536 * ys.len() as u64);
    }
}

#[test]
fn remainder_is_exact() {
    for xb in 0..=u8::MAX {
        for yb in 0..=u8::MAX {
            let (x, y) = (f8e4m3fn::from_bits(xb), f8e4m3fn::from_bits(yb));
            let exact = x.to_f64() % y.to_f64();
            let got = (x % y).to_f64();
            assert!(
                got == exact || (got.is_nan() && exact.is_nan()),
                "{xb:#x} % {yb:#x}"
            );
        }
    }
    assert_eq!((f16::from_f32(7.5) % f16::from_f32(2.0)).to_f32(), 1.5);
    assert_eq!((f16::from_f32(-7.5) % f16::from_f32(2.0)).to_f32(), -1.5);
}

#[test]
#[allow(clippy::op_ref)] // the impls on references are what is under test
fn operators_on_references_and_assignment_agree() {
    let (a, b) = (bf16::from_f32(1.5), bf16::from_f32(-0.375));
    assert_eq!((a + b).to_bits(), (&a + &b).to_bits());
    assert_eq!((a * b).to_bits(), (a * &b).to_bits());
    assert_eq!((a / b).to_bits(), (&a / b).to_bits());
    let mut c = a;
    c -= b;
    assert_eq!(c.to_f32(), 1.875);
    c *= &b;
    assert_eq!(c.to_bits(), bf16::from_f32(1.875 * -0.375).to_bits());
    c /= bf16::from_f32(0.0);
    assert_eq!(c.infinite_sign(), -1);
    c %= a;
    assert!(c.is_nan());
}

#[test]
fn overflow_and_special_values_follow_the_format() {
    assert_eq!((f16::MAX + f16::MAX).infinite_sign(), 1);
    assert!((f8e4m3fn::MAX * f8e4m3fn::from_f32(2.0)).is_nan());
    assert_eq!(
        (f4e2m1fn::MAX + f4e2m1fn::MAX).to_bits(),
        f4e2m1fn::MAX.to_bits()
    );
    assert!((f8e4m3fnuz::ONE / f8e4m3fnuz::ZERO).is_nan());
    assert!(
        (f8e8m0fnu::ONE - f8e8m0fnu::ONE).is_nan(),
        "E8M0 has no zero"
    );
    assert_eq!((f8e8m0fnu::ONE + f8e8m0fnu::ONE).to_f32(), 2.0);
    let z = f16::from_f32(1.0) - f16::from_f32(1.0);
    assert!(z == f16::ZERO && z.is_sign_positive());
    assert!((f16::NEG_ZERO + f16::NEG_ZERO).is_sign_negative());
}

#[test]
fn negation_is_exact_and_respects_unsigned_zero() {
    for bits in 0..=u16::MAX {
        let x = f16::from_bits(bits);
        assert_eq!((-x).to_bits(), bits ^ 0x8000);
    }
    for bits in 0..=u8::MAX {
        let x = f8e4m3fnuz::from_bits(bits);
        let n = -x;
        if x.is_nan() {
            assert!(n.is_nan());
        } else {
            assert_eq!(n.to_f64(), -x.to_f64());
            assert!(n.to_bits() != 0x80);
        }
    }
    assert_eq!((-f8e4m3fnuz::ZERO).to_bits(), 0);
}

#[test]
fn sum_and_product_accumulate_in_f32() {
    // 4096 ones: adding in f16 would stall at 2048; in f32 the sum is exact.
    let ones = vec![f16::ONE; 4096];
    assert_eq!(ones.iter().sum::<f16>().to_f32(), 4096.0);
    let mut folded = f16::ZERO;
    for x in &ones {
        folded += *x;
    }
    assert_eq!(folded.to_f32(), 2048.0);
    let halves = [bf16::from_f32(0.5); 10];
    assert_eq!(halves.iter().product::<bf16>().to_f32(), 2f32.powi(-10));
    assert_eq!(
        halves.into_iter().product::<bf16>().to_f32(),
        2f32.powi(-10)
    );
    // Like f32's (the IEEE additive identity), an empty sum is -0.
    assert_eq!(
        core::iter::empty::<f8e4m3fn>().sum::<f8e4m3fn>().to_bits(),
        0x80
    );
    assert_eq!(
        core::iter::empty::<f8e4m3fnuz>()
            .sum::<f8e4m3fnuz>()
            .to_bits(),
        0
    );
    assert_eq!(
        core::iter::empty::<f8e4m3fn>()
            .product::<f8e4m3fn>()
            .to_bits(),
        f8e4m3fn::ONE.to_bits()
    );
}
