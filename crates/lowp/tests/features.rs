//! The optional features: `bytemuck`, `half` and `rand` (`serde` has its own file, `serde.rs`).
//! Each test is gated on its feature; run them all with
//! `cargo test -p lowp --all-features --test features`.

#![allow(dead_code, unused_imports, unused_macros)]

use lowp::format::NanEncoding;
use lowp::{
    LowpFloat, bf16, f4e2m1fn, f6e2m3fn, f6e3m2fn, f8e3m4, f8e4m3, f8e4m3fn, f8e4m3fnuz, f8e5m2,
    f8e5m2fnuz, f8e8m0fnu, f16,
};

/// Every bit pattern of a type, as values.
trait AllValues: LowpFloat {
    fn all() -> Vec<Self>;
}

macro_rules! impl_all_values {
    ($($t:ident: $bits:ty),*) => {$(
        impl AllValues for $t {
            fn all() -> Vec<Self> {
                (0..1u32 << $t::FORMAT.total_bits()).map(|b| $t::from_bits(b as $bits)).collect()
            }
        }
    )*};
}

impl_all_values!(
    f16: u16, bf16: u16, f8e4m3fn: u8, f8e5m2: u8, f8e4m3fnuz: u8, f8e5m2fnuz: u8, f8e4m3: u8,
    f8e3m4: u8, f8e8m0fnu: u8, f6e2m3fn: u8, f6e3m2fn: u8, f4e2m1fn: u8
);

/// Runs `$check::<T>()` for every type.
macro_rules! each_type {
    ($check:ident) => {
        $check::<f16>();
        $check::<bf16>();
        $check::<f8e4m3fn>();
        $check::<f8e5m2>();
        $check::<f8e4m3fnuz>();
        $check::<f8e5m2fnuz>();
        $check::<f8e4m3>();
        $check::<f8e3m4>();
        $check::<f8e8m0fnu>();
        $check::<f6e2m3fn>();
        $check::<f6e3m2fn>();
        $check::<f4e2m1fn>();
    };
}

fn is_nan<T: LowpFloat>(x: T) -> bool {
    x.to_f64().is_nan()
}

// ---------------------------------------------------------------------------------------------
// bytemuck

#[cfg(feature = "bytemuck")]
mod bytemuck_tests {
    use super::*;
    use core::marker::PhantomData;

    /// Tells at compile time, for a concrete type, whether it is `Pod` (autoref specialisation:
    /// the by-value impl wins when it applies).
    struct Probe<T>(PhantomData<T>);
    trait ViaPod {
        fn is_pod(&self) -> bool {
            true
        }
    }
    impl<T: bytemuck::Pod> ViaPod for Probe<T> {}
    trait ViaAny {
        fn is_pod(&self) -> bool {
            false
        }
    }
    impl<T> ViaAny for &Probe<T> {}
    macro_rules! is_pod {
        ($t:ty) => {
            (&Probe::<$t>(PhantomData)).is_pod()
        };
    }

    #[test]
    fn pod_exactly_for_the_full_width_types() {
        assert!(is_pod!(f16));
        assert!(is_pod!(bf16));
        assert!(is_pod!(f8e4m3fn));
        assert!(is_pod!(f8e5m2));
        assert!(is_pod!(f8e4m3fnuz));
        assert!(is_pod!(f8e5m2fnuz));
        assert!(is_pod!(f8e4m3));
        assert!(is_pod!(f8e3m4));
        assert!(is_pod!(f8e8m0fnu));
        assert!(!is_pod!(f6e2m3fn));
        assert!(!is_pod!(f6e3m2fn));
        assert!(!is_pod!(f4e2m1fn));
        // The probe itself works.
        assert!(is_pod!(u8));
        assert!(!is_pod!(&'static u8));
    }

    #[test]
    fn zeroed() {
        use bytemuck::Zeroable;
        assert_eq!(f16::zeroed().to_bits(), 0);
        assert_eq!(bf16::zeroed().to_bits(), 0);
        assert_eq!(f8e4m3fnuz::zeroed().to_f32(), 0.0);
        // No zero in E8M0: the zero pattern is its smallest value.
        assert_eq!(f8e8m0fnu::zeroed().to_f32(), 2f32.powi(-127));
        assert_eq!(f6e2m3fn::zeroed().to_bits(), 0);
        assert_eq!(f6e3m2fn::zeroed().to_bits(), 0);
        assert_eq!(f4e2m1fn::zeroed().to_bits(), 0);
        assert_eq!(f4e2m1fn::zeroed().to_f32(), 0.0);
        let zeros = <[f4e2m1fn; 4]>::zeroed();
        assert!(zeros.iter().all(|z| z.to_bits() == 0));
    }

    fn cast_16<T: LowpFloat<Bits = u16> + bytemuck::Pod>() {
        let ints: Vec<u16> = (0..=u16::MAX).collect();
        let values: &[T] = bytemuck::cast_slice(&ints);
        assert_eq!(values.len(), 65536);
        for (v, &b) in values.iter().zip(&ints) {
            assert_eq!(v.to_bits(), b);
            assert_eq!(v.to_bits(), T::from_bits(b).to_bits());
        }
        let back: &[u16] = bytemuck::cast_slice(values);
        assert_eq!(back, &ints[..]);
        let bytes: &[u8] = bytemuck::cast_slice(values);
        assert_eq!(bytes.len(), 2 * 65536);
        for (pair, &b) in bytes.chunks(2).zip(&ints) {
            assert_eq!(pair, b.to_ne_bytes());
        }
        // Owned values and mutable slices.
        let mut owned: Vec<T> = ints.iter().map(|&b| T::from_bits(b)).collect();
        bytemuck::cast_slice_mut::<T, u16>(&mut owned)[7] = 0x1234;
        assert_eq!(owned[7].to_bits(), 0x1234);
        assert_eq!(bytemuck::cast::<u16, T>(0x3c00).to_bits(), 0x3c00);
        assert_eq!(
            bytemuck::bytes_of(&T::from_bits(0xabcd)),
            0xabcdu16.to_ne_bytes()
        );
        // Size and alignment are checked.
        assert!(bytemuck::try_cast_slice::<u8, T>(&[0u8; 3]).is_err());
        let words = [0u16; 4];
        let odd = &bytemuck::cast_slice::<u16, u8>(&words)[1..5];
        assert!(bytemuck::try_cast_slice::<u8, T>(odd).is_err());
    }

    fn cast_8<T: LowpFloat<Bits = u8> + bytemuck::Pod>() {
        let ints: Vec<u8> = (0..=u8::MAX).collect();
        let values: &[T] = bytemuck::cast_slice(&ints);
        assert_eq!(values.len(), 256);
        for (v, &b) in values.iter().zip(&ints) {
            assert_eq!(v.to_bits(), b);
            assert_eq!(
                v.to_f32().to_bits(),
                T::from_bits(b).to_f32().to_bits(),
                "{} {b:#x}",
                T::FORMAT.name
            );
        }
        let back: &[u8] = bytemuck::cast_slice(values);
        assert_eq!(back, &ints[..]);
        // Wider integers split into values in memory order.
        let word = u32::from_ne_bytes([1, 2, 3, 4]);
        let four: [T; 4] = bytemuck::cast(word);
        assert_eq!(four.map(|v| v.to_bits()), [1, 2, 3, 4]);
        assert_eq!(bytemuck::cast::<[T; 4], u32>(four), word);
    }

    #[test]
    fn cast_slices_both_ways() {
        cast_16::<f16>();
        cast_16::<bf16>();
        cast_8::<f8e4m3fn>();
        cast_8::<f8e5m2>();
        cast_8::<f8e4m3fnuz>();
        cast_8::<f8e5m2fnuz>();
        cast_8::<f8e4m3>();
        cast_8::<f8e3m4>();
        cast_8::<f8e8m0fnu>();
    }
}

// ---------------------------------------------------------------------------------------------
// half

#[cfg(feature = "half")]
mod half_tests {
    use super::*;

    #[test]
    fn f16_from_and_into_half_every_pattern() {
        for b in 0..=u16::MAX {
            let ours = f16::from_bits(b);
            let theirs = half::f16::from_bits(b);
            assert_eq!(half::f16::from(ours).to_bits(), b);
            assert_eq!(f16::from(theirs).to_bits(), b);
            let into: half::f16 = ours.into();
            assert_eq!(into.to_bits(), b);
            let into: f16 = theirs.into();
            assert_eq!(into.to_bits(), b);
            // The same value on both sides.
            if theirs.is_nan() {
                assert!(is_nan(ours));
            } else {
                assert_eq!(ours.to_f32().to_bits(), theirs.to_f32().to_bits(), "{b:#x}");
            }
        }
    }

    #[test]
    fn bf16_from_and_into_half_every_pattern() {
        for b in 0..=u16::MAX {
            let ours = bf16::from_bits(b);
            let theirs = half::bf16::from_bits(b);
            assert_eq!(half::bf16::from(ours).to_bits(), b);
            assert_eq!(bf16::from(theirs).to_bits(), b);
            let into: half::bf16 = ours.into();
            assert_eq!(into.to_bits(), b);
            let into: bf16 = theirs.into();
            assert_eq!(into.to_bits(), b);
            if theirs.is_nan() {
                assert!(is_nan(ours));
            } else {
                assert_eq!(ours.to_f32().to_bits(), theirs.to_f32().to_bits(), "{b:#x}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// rand

#[cfg(feature = "rand")]
mod rand_tests {
    use super::*;
    use rand::distr::uniform::Error;
    use rand::distr::{Distribution, OpenClosed01, StandardUniform, Uniform};
    use rand::rngs::Xoshiro256PlusPlus;
    use rand::{RngExt, SeedableRng};
    use std::collections::BTreeMap;

    fn rng(seed: u64) -> Xoshiro256PlusPlus {
        Xoshiro256PlusPlus::seed_from_u64(seed)
    }

    /// The distinct non-NaN values of `T` in increasing order (one zero, +0).
    fn sorted_values<T: AllValues>() -> Vec<T> {
        let mut v: Vec<T> = T::all()
            .into_iter()
            .filter(|&x| !is_nan(x) && (x.to_f64() != 0.0 || x.to_f64().is_sign_positive()))
            .collect();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v.dedup_by(|a, b| a.to_f64() == b.to_f64());
        v
    }

    /// Draws `n` samples, checks that each is one of `expected` (value -> probability), that the
    /// count of each value is within 5 standard deviations (plus 3) of `n * p`, that every value
    /// with `n * p >= 10` occurs, and that the mean is within 5 standard deviations of the
    /// exact mean. Returns the counts.
    fn check_distribution<T: LowpFloat>(
        what: &str,
        expected: &[(T, f64)],
        n: usize,
        mut draw: impl FnMut() -> T,
    ) -> BTreeMap<u32, usize> {
        let total: f64 = expected.iter().map(|e| e.1).sum();
        assert!(
            (total - 1.0).abs() < 1e-12,
            "{what}: probabilities sum to {total}"
        );
        let mut counts = BTreeMap::new();
        let mut sum = 0.0;
        for _ in 0..n {
            let x = draw();
            *counts.entry(x.to_bits_u32()).or_insert(0) += 1;
            sum += x.to_f64();
        }
        let mut seen = 0;
        for &(v, p) in expected {
            let c = counts.get(&v.to_bits_u32()).copied().unwrap_or(0);
            seen += c;
            let mu = n as f64 * p;
            let sigma = (mu * (1.0 - p)).sqrt();
            assert!(
                (c as f64 - mu).abs() <= 5.0 * sigma + 3.0,
                "{what}: {} came {c} times, expected {mu:.1}",
                v.to_f64()
            );
            if mu >= 10.0 {
                assert!(c > 0, "{what}: {} never came", v.to_f64());
            }
        }
        assert_eq!(seen, n, "{what}: a value outside the expected set came out");
        let mean: f64 = expected.iter().map(|&(v, p)| v.to_f64() * p).sum();
        let var: f64 = expected
            .iter()
            .map(|&(v, p)| (v.to_f64() - mean).powi(2) * p)
            .sum();
        let got = sum / n as f64;
        assert!(
            (got - mean).abs() <= 5.0 * (var / n as f64).sqrt() + 1e-12,
            "{what}: mean {got}, expected {mean}"
        );
        counts
    }

    /// Cell probabilities of the values in `[lo_value, ...)` given their cells' ends.
    fn cells<T: LowpFloat>(values: &[T], start: f64, end: f64) -> Vec<(T, f64)> {
        let width = end - start;
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let next = values.get(i + 1).map_or(end, |w| w.to_f64());
                // The first cell also takes the reals between `start` and the first value.
                let from = if i == 0 { start } else { v.to_f64() };
                (v, (next - from) / width)
            })
            .collect()
    }

    const N: usize = 1 << 21;

    fn standard<T: AllValues>()
    where
        StandardUniform: Distribution<T>,
    {
        let below_one: Vec<T> = sorted_values::<T>()
            .into_iter()
            .filter(|v| v.to_f64() >= 0.0 && v.to_f64() < 1.0)
            .collect();
        let expected = cells(&below_one, 0.0, 1.0);
        let mut r = rng(1);
        let what = format!("StandardUniform {}", T::FORMAT.name);
        let counts = check_distribution(&what, &expected, N, || {
            let x: T = r.random();
            let v = x.to_f64();
            assert!((0.0..1.0).contains(&v), "{what}: {v}");
            assert!(!v.is_sign_negative(), "{what}: -0");
            x
        });
        // All reachable values appear: every value below 1 in the small formats, and in E8M0
        // (where 2^-k has probability 2^-k) every power of two down to 2^-15.
        if T::FORMAT.name == "f8e8m0fnu" {
            for k in 1..=15 {
                let bits = T::from_f64((-(k as f64)).exp2()).to_bits_u32();
                assert!(counts.contains_key(&bits), "{what}: 2^-{k} never came");
            }
        } else if T::FORMAT.total_bits() <= 8 {
            assert_eq!(
                counts.len(),
                below_one.len(),
                "{what}: not every value came"
            );
        }
    }

    #[test]
    fn standard_uniform_rounds_down_with_exact_cell_probabilities() {
        each_type!(standard);
    }

    #[test]
    fn standard_uniform_means() {
        // Near 1/2 for the wide formats; exactly 1/4 for FP4 (0 and 0.5 equally likely).
        let mut r = rng(2);
        let mean = |r: &mut Xoshiro256PlusPlus, f: &dyn Fn(&mut Xoshiro256PlusPlus) -> f64| {
            (0..N).map(|_| f(r)).sum::<f64>() / N as f64
        };
        let m = mean(&mut r, &|r| r.random::<f16>().to_f64());
        assert!((m - 0.5).abs() < 0.002, "{m}");
        let m = mean(&mut r, &|r| r.random::<bf16>().to_f64());
        assert!((m - 0.5).abs() < 0.004, "{m}");
        let m = mean(&mut r, &|r| r.random::<f4e2m1fn>().to_f64());
        assert!((m - 0.25).abs() < 0.002, "{m}");
        // Small values come with their true probability, far below rand's 2^-24 grid for bf16.
        let tiny = (0..N)
            .filter(|_| r.random::<bf16>().to_f64() < 2f64.powi(-10))
            .count();
        let mu = N as f64 / 1024.0;
        assert!((tiny as f64 - mu).abs() < 5.0 * mu.sqrt(), "{tiny}");
    }

    fn open_closed<T: AllValues>()
    where
        OpenClosed01: Distribution<T>,
    {
        let values: Vec<T> = sorted_values::<T>()
            .into_iter()
            .filter(|v| v.to_f64() > 0.0 && v.to_f64() <= 1.0)
            .collect();
        // Each value v takes (v⁻, v]; the smallest takes (0, v].
        let expected: Vec<(T, f64)> = values
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let prev = if i == 0 { 0.0 } else { values[i - 1].to_f64() };
                (v, v.to_f64() - prev)
            })
            .collect();
        let mut r = rng(3);
        let what = format!("OpenClosed01 {}", T::FORMAT.name);
        let counts = check_distribution(&what, &expected, N / 2, || {
            let x: T = r.sample(OpenClosed01);
            let v = x.to_f64();
            assert!(v > 0.0 && v <= 1.0, "{what}: {v}");
            x
        });
        assert!(counts.contains_key(&T::from_f64(1.0).to_bits_u32()));
    }

    #[test]
    fn open_closed_01_rounds_up() {
        each_type!(open_closed);
    }

    /// `Uniform` over `[low, high)` or `[low, high]`; `end` is the end of the reals (`high`, or
    /// the end of `high`'s cell).
    fn range<T>(low: f64, high: f64, inclusive: bool, end: f64, n: usize)
    where
        T: AllValues + rand::distr::uniform::SampleUniform,
    {
        let (lo, hi) = (T::from_f64(low), T::from_f64(high));
        assert_eq!(
            (lo.to_f64(), hi.to_f64()),
            (low, high),
            "bounds must be exact"
        );
        let values: Vec<T> = sorted_values::<T>()
            .into_iter()
            .filter(|v| {
                let v = v.to_f64();
                v >= low && (v < high || inclusive && v == high)
            })
            .collect();
        let expected = cells(&values, low, end);
        let dist = if inclusive {
            Uniform::new_inclusive(lo, hi).unwrap()
        } else {
            Uniform::new(lo, hi).unwrap()
        };
        let mut r = rng(4);
        let what = format!(
            "Uniform {} [{low}, {high}{}",
            T::FORMAT.name,
            if inclusive { "]" } else { ")" }
        );
        // Every value whose cell is not tiny comes (checked inside), none outside the range.
        check_distribution(&what, &expected, n, || dist.sample(&mut r));
        // `random_range` is the same distribution.
        for _ in 0..1000 {
            let x: T = if inclusive {
                r.random_range(lo..=hi)
            } else {
                r.random_range(lo..hi)
            };
            assert!(x >= lo && (x < hi || inclusive && x == hi));
        }
    }

    #[test]
    fn uniform_ranges() {
        // 3⁺ = 3.25 in E4M3.
        range::<f8e4m3fn>(-2.0, 3.0, false, 3.0, N);
        range::<f8e4m3fn>(-2.0, 3.0, true, 3.25, N);
        range::<f8e4m3fn>(-448.0, 448.0, true, 480.0, N);
        range::<f8e4m3fnuz>(-240.0, 240.0, true, 256.0, N);
        range::<f8e5m2>(0.0, 57344.0, true, 65536.0, N);
        // FP4's largest value 6 has ulp 2: 6⁺ = 8.
        range::<f4e2m1fn>(-6.0, 6.0, true, 8.0, N);
        range::<f4e2m1fn>(-6.0, 6.0, false, 6.0, N);
        let all = Uniform::new_inclusive(f4e2m1fn::from_f32(-6.0), f4e2m1fn::from_f32(6.0))
            .unwrap()
            .sample_iter(rng(6))
            .take(10_000)
            .map(|x: f4e2m1fn| x.to_bits())
            .collect::<std::collections::BTreeSet<_>>();
        assert_eq!(all.len(), 15); // every value but -0
        range::<f6e3m2fn>(-1.0, 28.0, true, 32.0, N);
        range::<f6e2m3fn>(0.5, 0.625, false, 0.625, N / 16);
        // E8M0: powers of two, 2^127's ulp is 2^127.
        range::<f8e8m0fnu>(0.25, 4.0, true, 8.0, N);
        range::<f8e8m0fnu>(2f64.powi(127), 2f64.powi(127), true, 2f64.powi(128), 1000);
        range::<f8e8m0fnu>(
            2f64.powi(-127),
            2f64.powi(-120),
            false,
            2f64.powi(-120),
            N / 16,
        );
        // 16-bit formats.
        range::<f16>(-1.0, 1.0, false, 1.0, N);
        range::<f16>(1.0, 1.0 + 2f64.powi(-10), false, 1.0 + 2f64.powi(-10), 1000);
        range::<f16>(-65504.0, 65504.0, true, 65536.0, N);
        range::<bf16>(-3.0, 2.0, false, 2.0, N);
        // A degenerate inclusive range always gives its bound.
        range::<f16>(-0.5, -0.5, true, -0.5 + 2f64.powi(-12), 1000);
    }

    #[test]
    fn uniform_matches_standard_on_unit_interval() {
        // [0, 1) as a range is StandardUniform's distribution (both round down).
        let values: Vec<f8e4m3fn> = sorted_values::<f8e4m3fn>()
            .into_iter()
            .filter(|v| (0.0..1.0).contains(&v.to_f64()))
            .collect();
        range::<f8e4m3fn>(0.0, 1.0, false, 1.0, N);
        assert_eq!(values.len(), 1 + 7 + 6 * 8);
    }

    #[test]
    fn uniform_errors() {
        let one = f16::from_f32(1.0);
        let nan = f16::from_f32(f32::NAN);
        let inf = f16::from_f32(f32::INFINITY);
        assert_eq!(Uniform::new(one, one).unwrap_err(), Error::EmptyRange);
        assert_eq!(
            Uniform::new(one, f16::from_f32(0.5)).unwrap_err(),
            Error::EmptyRange
        );
        assert!(Uniform::new_inclusive(one, one).is_ok());
        assert_eq!(
            Uniform::new_inclusive(one, f16::from_f32(0.5)).unwrap_err(),
            Error::EmptyRange
        );
        assert_eq!(Uniform::new(nan, one).unwrap_err(), Error::NonFinite);
        assert_eq!(Uniform::new(one, nan).unwrap_err(), Error::NonFinite);
        assert_eq!(Uniform::new(-inf, one).unwrap_err(), Error::NonFinite);
        assert_eq!(
            Uniform::new_inclusive(one, inf).unwrap_err(),
            Error::NonFinite
        );
        // -0 and +0 are the same bound.
        let (nz, pz) = (f16::from_f32(-0.0), f16::from_f32(0.0));
        assert_eq!(Uniform::new(nz, pz).unwrap_err(), Error::EmptyRange);
        let z = Uniform::new_inclusive(nz, pz).unwrap().sample(&mut rng(5));
        assert_eq!(z.to_bits(), 0); // zero comes out as +0
        let e = f8e8m0fnu::from_f32(f32::NAN);
        assert_eq!(
            Uniform::new(e, f8e8m0fnu::from_f32(1.0)).unwrap_err(),
            Error::NonFinite
        );
    }

    #[test]
    fn seeded_streams_are_reproducible() {
        let a: Vec<u16> = (0..64)
            .scan(rng(9), |r, _| Some(r.random::<f16>().to_bits()))
            .collect();
        let b: Vec<u16> = (0..64)
            .scan(rng(9), |r, _| Some(r.random::<f16>().to_bits()))
            .collect();
        assert_eq!(a, b);
        assert!(a.iter().any(|&x| x != a[0]));
    }
}

// ---------------------------------------------------------------------------------------------
// Feature names

/// The names of lowp's cargo features, read from its manifest's `[features]` table.
fn own_feature_names() -> Vec<String> {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .expect("lowp's Cargo.toml");
    let table = manifest
        .split("\n[features]\n")
        .nth(1)
        .expect("a [features] table");
    let table = table.split("\n[").next().unwrap_or(table);
    table
        .lines()
        .filter(|line| !line.starts_with('#') && line.contains(" = "))
        .map(|line| line.split(" = ").next().unwrap().trim().to_string())
        .collect()
}

/// A crate that turns on any feature of `half` 2.7 keeps building when `half` is lowp renamed:
/// cargo refuses a dependency that asks for a feature the package lacks. These are the names of
/// half 2.7.1's `[features]` table and of its optional dependencies (each of which is a feature
/// of its own); `tools/half_dependents` checks the same against half's real manifest.
#[test]
fn every_feature_name_of_half_is_a_feature_of_lowp() {
    let own = own_feature_names();
    assert!(own.contains(&"rayon".to_string()), "parsed {own:?}");
    for name in [
        "alloc",
        "arbitrary",
        "bytemuck",
        "default",
        "nightly",
        "num-traits",
        "rand_distr",
        "rkyv",
        "serde",
        "std",
        "use-intrinsics",
        "zerocopy",
    ] {
        assert!(
            own.iter().any(|f| f == name),
            "half's feature {name} is missing"
        );
    }
}
