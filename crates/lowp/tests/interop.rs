//! The trait features that make lowp a drop-in for the `half` crate's: `zerocopy` (always on), `rkyv`,
//! `arbitrary` and `rand_distr`, each module gated on its feature; run them all with
//! `cargo test -p lowp --all-features --test interop`. Where `half` has the same trait
//! (`half` is a dev-dependency with these features), the bytes are compared with its.

#![allow(dead_code, unused_imports, unused_macros)]

#[macro_use]
mod common;

use lowp::LowpFloat;

/// Every bit pattern of `T`'s storage integer (all 256 bytes for FP6 and FP4, not only their
/// 64 or 16 patterns), in increasing order.
fn all_storage_patterns<T: LowpFloat>() -> std::ops::Range<u32> {
    0..1 << (8 * std::mem::size_of::<T>())
}

/// The little-endian bytes of every storage pattern of `T`, one after the other.
fn all_storage_bytes_le<T: LowpFloat>() -> Vec<u8> {
    let size = std::mem::size_of::<T>();
    all_storage_patterns::<T>()
        .flat_map(|b| b.to_le_bytes().into_iter().take(size))
        .collect()
}

/// What `from_bits` keeps of a storage pattern: the format's bits.
fn masked<T: LowpFloat>(bits: u32) -> u32 {
    bits & T::FORMAT.bits_mask()
}

// ---------------------------------------------------------------------------------------------
// zerocopy

mod zerocopy_tests {
    use super::*;
    use zerocopy::{FromBytes, FromZeros, Immutable, IntoBytes, KnownLayout, TryFromBytes};

    /// Whether the type implements the trait, decided at compile time: the inherent constant
    /// exists only when the bound holds and then shadows the trait's `false`.
    macro_rules! implements {
        ($t:ty: $trait:path) => {{
            trait No {
                const IMPLEMENTS: bool = false;
            }
            impl<T: ?Sized> No for T {}
            struct Probe<T: ?Sized>(std::marker::PhantomData<T>);
            impl<T: ?Sized + $trait> Probe<T> {
                const IMPLEMENTS: bool = true;
            }
            <Probe<$t>>::IMPLEMENTS
        }};
    }

    /// The native-endian bytes of every pattern of a type that uses all its storage bits.
    fn all_bytes_ne<T: LowpFloat>() -> Vec<u8> {
        let size = std::mem::size_of::<T>();
        all_storage_patterns::<T>()
            .flat_map(|b| match size {
                2 => (b as u16).to_ne_bytes().to_vec(),
                _ => vec![b as u8],
            })
            .collect()
    }

    /// Reads every pattern from bytes (as a slice and one by one) and writes it back.
    fn read_write_every_pattern<T>()
    where
        T: LowpFloat + FromBytes + IntoBytes + Immutable + KnownLayout,
    {
        let name = T::FORMAT.name;
        let bytes = all_bytes_ne::<T>();
        let size = std::mem::size_of::<T>();
        let values = <[T]>::ref_from_bytes(&bytes).expect("every length is a whole number");
        assert_eq!(values.len(), 1 << T::FORMAT.total_bits(), "{name}");
        for (i, x) in values.iter().enumerate() {
            assert_eq!(x.to_bits_u32(), i as u32, "{name}: slice element {i}");
            let chunk = &bytes[i * size..(i + 1) * size];
            let one = T::read_from_bytes(chunk).unwrap();
            assert_eq!(one.to_bits_u32(), i as u32, "{name}: read_from_bytes {i}");
            let tried = T::try_read_from_bytes(chunk).unwrap();
            assert_eq!(
                tried.to_bits_u32(),
                i as u32,
                "{name}: try_read_from_bytes {i}"
            );
            assert_eq!(x.as_bytes(), chunk, "{name}: as_bytes {i}");
        }
        assert_eq!(values.as_bytes(), &bytes[..], "{name}");
        assert_eq!(T::new_zeroed().to_bits_u32(), 0, "{name}");
        // A wrong length is refused, not truncated.
        assert!(T::read_from_bytes(&bytes[..size + 1]).is_err() || size == 0);
    }

    /// FP6 and FP4 are viewable as bytes (every value, their own bits) but cannot be made from
    /// bytes, which could set their high bits.
    fn view_only<T: LowpFloat + IntoBytes + Immutable>() {
        for bits in 0..1u32 << T::FORMAT.total_bits() {
            let x = T::from_bits_u32(bits);
            assert_eq!(x.as_bytes(), [bits as u8], "{}", T::FORMAT.name);
        }
    }

    macro_rules! zerocopy_row {
        ($t:ident, $v:ident, $s:ty, $c:ty, $sign:ident, $values:ident, all_bits) => {
            read_write_every_pattern::<lowp::$t>();
            assert!(implements!(lowp::$t: FromBytes));
            assert!(implements!(lowp::$t: FromZeros));
            assert!(implements!(lowp::$t: TryFromBytes));
            assert!(implements!(lowp::$t: IntoBytes));
            assert!(implements!(lowp::$t: Immutable));
            assert!(implements!(lowp::$t: KnownLayout));
        };
        ($t:ident, $v:ident, $s:ty, $c:ty, $sign:ident, $values:ident, low_bits) => {
            view_only::<lowp::$t>();
            assert!(!implements!(lowp::$t: FromBytes), "{}", stringify!($t));
            assert!(!implements!(lowp::$t: FromZeros), "{}", stringify!($t));
            assert!(!implements!(lowp::$t: TryFromBytes), "{}", stringify!($t));
            assert!(implements!(lowp::$t: IntoBytes));
            assert!(implements!(lowp::$t: Immutable));
            assert!(implements!(lowp::$t: KnownLayout));
        };
    }

    #[test]
    fn zerocopy_reads_and_writes_every_pattern_and_refuses_fp6_fp4_from_bytes() {
        lowp::for_each_format!(zerocopy_row, rows);
        // The probe itself can say no and yes.
        assert!(!implements!(bool: FromBytes) && implements!(u8: FromBytes));
    }

    #[test]
    fn zerocopy_bytes_are_halfs() {
        for bits in 0..=u16::MAX {
            let (ours, theirs) = (lowp::f16::from_bits(bits), half::f16::from_bits(bits));
            assert_eq!(ours.as_bytes(), theirs.as_bytes());
            let back = half::f16::read_from_bytes(ours.as_bytes()).unwrap();
            assert_eq!(back.to_bits(), bits);
            let (ours, theirs) = (lowp::bf16::from_bits(bits), half::bf16::from_bits(bits));
            assert_eq!(ours.as_bytes(), theirs.as_bytes());
            let back = lowp::bf16::read_from_bytes(theirs.as_bytes()).unwrap();
            assert_eq!(back.to_bits(), bits);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// rkyv

#[cfg(feature = "rkyv")]
mod rkyv_tests {
    use super::*;
    use rkyv::rancor::Error;
    use rkyv::vec::ArchivedVec;
    use rkyv::{Archived, access, deserialize, to_bytes};

    #[test]
    fn rkyv_archives_every_pattern_and_reads_it_back() {
        for_all_formats!(T => {
            let name = T::FORMAT.name;
            let values: Vec<T> = (0..1u32 << T::FORMAT.total_bits())
                .map(T::from_bits_u32)
                .collect();
            // All values in one archive: read in place and deserialized.
            let bytes = to_bytes::<Error>(&values).unwrap();
            let archived = access::<ArchivedVec<Archived<T>>, Error>(&bytes).unwrap();
            assert_eq!(archived.len(), values.len(), "{name}");
            for (i, a) in archived.iter().enumerate() {
                let x: T = deserialize::<T, Error>(a).unwrap();
                assert_eq!(x.to_bits_u32(), i as u32, "{name}: element {i}");
            }
            let back: Vec<T> = deserialize::<Vec<T>, Error>(archived).unwrap();
            let back_bits: Vec<u32> = back.iter().map(|x| x.to_bits_u32()).collect();
            let bits: Vec<u32> = values.iter().map(|x| x.to_bits_u32()).collect();
            assert_eq!(back_bits, bits, "{name}");
            // Each value alone: its archive is its storage integer's.
            for &x in &values {
                let one = to_bytes::<Error>(&x).unwrap();
                assert_eq!(one.len(), std::mem::size_of::<T>(), "{name}");
                let bits = x.to_bits_u32();
                assert_eq!(&one[..], &bits.to_le_bytes()[..one.len()], "{name}: {bits:#x}");
                let a = access::<Archived<T>, Error>(&one).unwrap();
                let y: T = deserialize::<T, Error>(a).unwrap();
                assert_eq!(y.to_bits_u32(), bits, "{name}: {bits:#x}");
            }
        });
    }

    #[test]
    fn rkyv_fp6_fp4_archives_with_high_bits_deserialize_masked() {
        for_all_formats!(T => {
            if T::FORMAT.total_bits() < 8 {
                let name = T::FORMAT.name;
                // Every byte, written by other code as a u8 and read as T.
                let raw: Vec<u8> = (0..=255).collect();
                let bytes = to_bytes::<Error>(&raw).unwrap();
                let archived = access::<ArchivedVec<Archived<T>>, Error>(&bytes).unwrap();
                let values: Vec<T> = deserialize::<Vec<T>, Error>(archived).unwrap();
                for (b, x) in values.iter().enumerate() {
                    assert_eq!(x.to_bits_u32(), masked::<T>(b as u32), "{name}: byte {b:#x}");
                    assert!(x.to_bits_u32() < 1 << T::FORMAT.total_bits());
                }
                let one = to_bytes::<Error>(&0xffu8).unwrap();
                let x = deserialize::<T, Error>(access::<Archived<T>, Error>(&one).unwrap());
                assert_eq!(x.unwrap().to_bits_u32(), T::FORMAT.bits_mask(), "{name}");
            }
        });
    }

    #[test]
    fn rkyv_bytes_are_halfs_both_ways() {
        let ours: Vec<lowp::f16> = (0..=u16::MAX).map(lowp::f16::from_bits).collect();
        let theirs: Vec<half::f16> = (0..=u16::MAX).map(half::f16::from_bits).collect();
        let (ours_bytes, theirs_bytes) = (
            to_bytes::<Error>(&ours).unwrap(),
            to_bytes::<Error>(&theirs).unwrap(),
        );
        assert_eq!(&ours_bytes[..], &theirs_bytes[..]);
        // half reads lowp's archive, and lowp half's.
        let a = access::<ArchivedVec<Archived<half::f16>>, Error>(&ours_bytes).unwrap();
        let read: Vec<half::f16> = deserialize::<Vec<half::f16>, Error>(a).unwrap();
        assert!(read.iter().zip(0..=u16::MAX).all(|(x, b)| x.to_bits() == b));
        let a = access::<ArchivedVec<Archived<lowp::f16>>, Error>(&theirs_bytes).unwrap();
        let read: Vec<lowp::f16> = deserialize::<Vec<lowp::f16>, Error>(a).unwrap();
        assert!(read.iter().zip(0..=u16::MAX).all(|(x, b)| x.to_bits() == b));

        let ours: Vec<lowp::bf16> = (0..=u16::MAX).map(lowp::bf16::from_bits).collect();
        let theirs: Vec<half::bf16> = (0..=u16::MAX).map(half::bf16::from_bits).collect();
        let ours_bytes = to_bytes::<Error>(&ours).unwrap();
        assert_eq!(&ours_bytes[..], &to_bytes::<Error>(&theirs).unwrap()[..]);
        let a = access::<ArchivedVec<Archived<half::bf16>>, Error>(&ours_bytes).unwrap();
        let read: Vec<half::bf16> = deserialize::<Vec<half::bf16>, Error>(a).unwrap();
        assert!(read.iter().zip(0..=u16::MAX).all(|(x, b)| x.to_bits() == b));
    }
}

// ---------------------------------------------------------------------------------------------
// arbitrary

#[cfg(feature = "arbitrary")]
mod arbitrary_tests {
    use super::*;
    use arbitrary::{Arbitrary, Unstructured};

    #[test]
    fn arbitrary_covers_every_pattern_from_a_buffer_of_every_storage_pattern() {
        for_all_formats!(T => {
            let name = T::FORMAT.name;
            let size = std::mem::size_of::<T>();
            assert_eq!(T::size_hint(0), (size, Some(size)), "{name}");
            let bytes = all_storage_bytes_le::<T>();
            let mut u = Unstructured::new(&bytes);
            let mut seen = vec![false; 1 << T::FORMAT.total_bits()];
            for pattern in all_storage_patterns::<T>() {
                let x = T::arbitrary(&mut u).unwrap();
                assert_eq!(x.to_bits_u32(), masked::<T>(pattern), "{name}: {pattern:#x}");
                seen[x.to_bits_u32() as usize] = true;
            }
            assert!(u.is_empty(), "{name}: {} bytes left", u.len());
            assert!(seen.iter().all(|&s| s), "{name}: a pattern never came");
            // An exhausted input gives zero bytes, as for the integers.
            let x = T::arbitrary(&mut Unstructured::new(&[])).unwrap();
            assert_eq!(x.to_bits_u32(), 0, "{name}");
            let x = T::arbitrary_take_rest(Unstructured::new(&bytes[bytes.len() - size..]));
            assert_eq!(x.unwrap().to_bits_u32(), T::FORMAT.bits_mask(), "{name}");
        });
    }

    #[test]
    fn arbitrary_f16_is_halfs() {
        let bytes = all_storage_bytes_le::<lowp::f16>();
        let (mut ours, mut theirs) = (Unstructured::new(&bytes), Unstructured::new(&bytes));
        for _ in 0..=u16::MAX {
            let x = lowp::f16::arbitrary(&mut ours).unwrap();
            let y = half::f16::arbitrary(&mut theirs).unwrap();
            assert_eq!(x.to_bits(), y.to_bits());
        }
        assert_eq!(
            lowp::f16::size_hint(0),
            <half::f16 as Arbitrary>::size_hint(0)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// rand_distr

#[cfg(feature = "rand_distr")]
mod rand_distr_tests {
    use super::*;
    use lowp::{bf16, f4e2m1fn, f8e3m4, f8e8m0fnu, f16};
    use rand_09::distr::uniform::{Error as UniformError, SampleUniform};
    use rand_09::distr::{Distribution, Open01, OpenClosed01, StandardUniform, Uniform};
    use rand_09::rngs::SmallRng;
    use rand_09::{Rng, SeedableRng};
    use rand_distr::{Exp1, StandardNormal};

    fn rng(seed: u64) -> SmallRng {
        SmallRng::seed_from_u64(seed)
    }

    const N: usize = 1 << 20;

    /// Draws `n` samples of `dist` as f64 and checks each with `ok`.
    fn draw<T: LowpFloat, D: Distribution<T>>(
        dist: D,
        seed: u64,
        n: usize,
        ok: impl Fn(f64) -> bool,
    ) -> Vec<f64> {
        let mut r = rng(seed);
        (0..n)
            .map(|_| {
                let x: T = r.sample(&dist);
                let v = x.to_f64();
                assert!(ok(v), "{}: {v} ({:#x})", T::FORMAT.name, x.to_bits_u32());
                v
            })
            .collect()
    }

    fn mean_var(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().sum::<f64>() / n;
        (mean, xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n)
    }

    #[test]
    fn rand_distr_unit_intervals_never_give_their_excluded_ends() {
        for_all_formats!(T => {
            let n = N / 16;
            draw::<T, _>(StandardUniform, 1, n, |v| (0.0..1.0).contains(&v) && v.is_sign_positive());
            draw::<T, _>(Open01, 2, n, |v| v > 0.0 && v < 1.0);
            draw::<T, _>(OpenClosed01, 3, n, |v| v > 0.0 && v <= 1.0);
        });
        // half's rounding to nearest gives 1.0 once in 4096 f16 samples; never here.
        let xs = draw::<f16, _>(StandardUniform, 4, N, |v| v < 1.0);
        assert!((mean_var(&xs).0 - 0.5).abs() < 0.002);
        let xs = draw::<f16, _>(Open01, 5, N, |v| v > 0.0 && v < 1.0);
        assert!((mean_var(&xs).0 - 0.5).abs() < 0.002);
        // FP4's only value in (0, 1) is 0.5; in [0, 1) it has 0 and 0.5, equally likely.
        draw::<f4e2m1fn, _>(Open01, 6, 1000, |v| v == 0.5);
        let xs = draw::<f4e2m1fn, _>(StandardUniform, 7, N, |v| v == 0.0 || v == 0.5);
        assert!((mean_var(&xs).0 - 0.25).abs() < 0.002);
        let xs = draw::<f4e2m1fn, _>(OpenClosed01, 8, N, |v| v == 0.5 || v == 1.0);
        assert!((mean_var(&xs).0 - 0.75).abs() < 0.002);
    }

    /// Open01 is StandardUniform with its zeros drawn again, word for word.
    #[test]
    fn rand_distr_open01_is_standard_uniform_without_zeros() {
        for_all_formats!(T => {
            let mut a = rng(9);
            let mut b = rng(9);
            let nonzero = std::iter::from_fn(|| Some(a.sample::<T, _>(StandardUniform)))
                .filter(|x| x.to_f64() != 0.0);
            for (i, x) in nonzero.take(N / 64).enumerate() {
                let y: T = b.sample(Open01);
                assert_eq!(x.to_bits_u32(), y.to_bits_u32(), "{} sample {i}", T::FORMAT.name);
            }
        });
    }

    /// rand 0.9 (`rand_distr` feature) and rand 0.10 (`rand` feature) give the same samples
    /// from the same random words: one model, two versions of the traits.
    #[cfg(feature = "rand")]
    #[test]
    fn rand_distr_samples_are_the_rand_features() {
        use rand::{RngExt, SeedableRng as _};
        let seed = [7u8; 32];
        for_all_formats!(T => {
            let name = T::FORMAT.name;
            let mut old = SmallRng::from_seed(seed);
            let mut new = rand::rngs::Xoshiro256PlusPlus::from_seed(seed);
            let lo = T::from_f64(if T::FORMAT.signed { -1.0 } else { 0.25 });
            let hi = T::from_f64(2.0);
            let old_range = Uniform::new_inclusive(lo, hi).unwrap();
            let new_range = rand::distr::Uniform::new_inclusive(lo, hi).unwrap();
            for i in 0..N / 64 {
                let x: T = old.sample(StandardUniform);
                let y: T = new.sample(rand::distr::StandardUniform);
                assert_eq!(x.to_bits_u32(), y.to_bits_u32(), "{name} StandardUniform {i}");
                let x: T = old.sample(Open01);
                let y: T = new.sample(rand::distr::Open01);
                assert_eq!(x.to_bits_u32(), y.to_bits_u32(), "{name} Open01 {i}");
                let x: T = old.sample(OpenClosed01);
                let y: T = new.sample(rand::distr::OpenClosed01);
                assert_eq!(x.to_bits_u32(), y.to_bits_u32(), "{name} OpenClosed01 {i}");
                let (x, y) = (old.sample(old_range), new.sample(new_range));
                assert_eq!(x.to_bits_u32(), y.to_bits_u32(), "{name} Uniform {i}");
            }
        });
    }

    #[test]
    fn rand_distr_standard_normal_has_mean_0_and_variance_1() {
        for (name, xs) in [
            ("f16", draw::<f16, _>(StandardNormal, 10, N, f64::is_finite)),
            (
                "bf16",
                draw::<bf16, _>(StandardNormal, 11, N, f64::is_finite),
            ),
        ] {
            let (mean, var) = mean_var(&xs);
            // Standard errors: 1/sqrt(N) = 0.001 for the mean, sqrt(2/N) = 0.0014 for the
            // variance; bf16's rounding adds about 2^-18 to it.
            assert!(mean.abs() < 0.005, "{name}: mean {mean}");
            assert!((var - 1.0).abs() < 0.007, "{name}: variance {var}");
            // The histogram: 68.27% within one standard deviation, 95.45% within two.
            let within = |k: f64| xs.iter().filter(|x| x.abs() <= k).count() as f64 / N as f64;
            assert!(
                (within(1.0) - 0.6827).abs() < 0.003,
                "{name}: {}",
                within(1.0)
            );
            assert!(
                (within(2.0) - 0.9545).abs() < 0.002,
                "{name}: {}",
                within(2.0)
            );
            let negative = xs.iter().filter(|x| **x < 0.0).count() as f64 / N as f64;
            assert!(
                (negative - 0.5).abs() < 0.003,
                "{name}: {negative} negative"
            );
        }
        // Every signed format (E8M0 has no StandardNormal): a number, within ±MAX (FP4
        // saturates beyond 6), roughly standard.
        macro_rules! normal_row {
            ($t:ident, $v:ident, $s:ty, $c:ty, signed, $($rest:tt)*) => {{
                type T = lowp::$t;
                let max = T::MAX.to_f64();
                let xs = draw::<T, _>(StandardNormal, 12, N / 16, |v| v.abs() <= max);
                let (mean, var) = mean_var(&xs);
                let name = T::FORMAT.name;
                assert!(
                    mean.abs() < 0.02 && (var - 1.0).abs() < 0.3,
                    "{name}: {mean} {var}"
                );
            }};
            ($t:ident, $v:ident, $s:ty, $c:ty, unsigned, $($rest:tt)*) => {};
        }
        lowp::for_each_format!(normal_row, rows);
    }

    #[test]
    fn rand_distr_exp1_has_mean_1_and_variance_1() {
        let xs = draw::<f16, _>(Exp1, 13, N, |v| v >= 0.0 && v.is_finite());
        let (mean, var) = mean_var(&xs);
        assert!(
            (mean - 1.0).abs() < 0.005 && (var - 1.0).abs() < 0.02,
            "{mean} {var}"
        );
        for_all_formats!(T => {
            let name = T::FORMAT.name;
            // f8e3m4 overflows to infinity above 15.75, with probability 1.4e-7.
            let inf_ok = name == "f8e3m4";
            let xs = draw::<T, _>(Exp1, 14, N / 16, |v| v >= 0.0 && (v.is_finite() || inf_ok));
            let (mean, _) = mean_var(&xs);
            assert!((mean - 1.0).abs() < 0.2, "{name}: mean {mean}");
        });
        // E8M0 has no zero: a zero sample gives 2^-127, never NaN (checked above); its values
        // are powers of two.
        draw::<f8e8m0fnu, _>(Exp1, 15, 1000, |v| v.log2().fract() == 0.0);
    }

    #[test]
    fn rand_distr_uniform_respects_its_bounds() {
        for_all_formats!(T => {
            let name = T::FORMAT.name;
            let (lo, hi) = if T::FORMAT.signed {
                (T::from_f64(-2.0), T::from_f64(3.0))
            } else {
                (T::from_f64(0.25), T::from_f64(8.0))
            };
            let half_open = Uniform::new(lo, hi).unwrap();
            let closed = Uniform::new_inclusive(lo, hi).unwrap();
            let (mut r, mut top) = (rng(16), 0);
            for _ in 0..N / 16 {
                let x: T = r.sample(half_open);
                assert!(x >= lo && x < hi, "{name}: {}", x.to_f64());
                let y: T = r.sample(closed);
                assert!(y >= lo && y <= hi, "{name}: {}", y.to_f64());
                top += (y == hi) as usize;
                let z: T = r.random_range(lo..hi);
                assert!(z >= lo && z < hi, "{name}: {}", z.to_f64());
            }
            assert!(top > 0, "{name}: the inclusive bound never came");
            assert_eq!(Uniform::new(hi, lo).unwrap_err(), UniformError::EmptyRange, "{name}");
            assert_eq!(Uniform::new(lo, lo).unwrap_err(), UniformError::EmptyRange, "{name}");
            assert!(Uniform::new_inclusive(lo, lo).is_ok(), "{name}");
        });
        // half rounds an f32 to nearest and gives 1.0 about once in 4096 samples; never here.
        let unit = Uniform::new(f16::from_f32(0.0), f16::from_f32(1.0)).unwrap();
        let mut r = rng(17);
        assert!((0..N).all(|_| r.sample(unit) < f16::ONE));
        for bad in [f16::NAN, f16::INFINITY] {
            assert_eq!(
                Uniform::new(f16::ZERO, bad).unwrap_err(),
                UniformError::NonFinite
            );
        }
    }

    /// `half`'s own `rand_distr` tests, with lowp's types.
    #[test]
    fn rand_distr_halfs_usage_compiles_and_runs() {
        let mut rng = rand_09::rng();
        let _: f16 = rng.sample(StandardUniform);
        let _: f16 = rng.sample(StandardNormal);
        let _: f16 = rng.sample(Uniform::new(f16::from_f32(0.0), f16::from_f32(1.0)).unwrap());
        let _: bf16 = rng.sample(StandardUniform);
        let _: bf16 = rng.sample(StandardNormal);
        let _: bf16 = rng.sample(Uniform::new(bf16::from_f32(0.0), bf16::from_f32(1.0)).unwrap());
        #[cfg(feature = "num-traits")]
        {
            let _: f16 = rng
                .sample(rand_distr::Normal::new(f16::from_f32(0.0), f16::from_f32(1.0)).unwrap());
            let _: bf16 = rng
                .sample(rand_distr::Normal::new(bf16::from_f32(0.0), bf16::from_f32(1.0)).unwrap());
        }
    }

    /// `Normal::new` for every type with `num_traits::Float` (the IEEE-like ones).
    #[cfg(feature = "num-traits")]
    #[test]
    fn rand_distr_normal_new_samples_its_mean_and_deviation() {
        fn check<T>(seed: u64)
        where
            T: LowpFloat + num_traits::Float,
            StandardNormal: Distribution<T>,
        {
            let two = T::from_f64(2.0);
            let normal = rand_distr::Normal::new(two, T::from_f64(0.5)).unwrap();
            let xs = draw::<T, _>(normal, seed, N / 4, f64::is_finite);
            let (mean, var) = mean_var(&xs);
            let name = T::FORMAT.name;
            // The 8-bit formats round samples near 2 to steps of 1/4 or 1/8.
            assert!((mean - 2.0).abs() < 0.01, "{name}: mean {mean}");
            assert!((var - 0.25).abs() < 0.02, "{name}: variance {var}");
        }
        check::<f16>(18);
        check::<bf16>(19);
        check::<lowp::f8e5m2>(20);
        check::<lowp::f8e4m3>(21);
        check::<f8e3m4>(22);
        assert!(rand_distr::Normal::new(f16::ZERO, f16::ONE).is_ok());
        assert!(rand_distr::Normal::new(f16::ZERO, f16::NAN).is_err());
    }

    #[cfg(feature = "std")]
    #[test]
    fn rand_distr_weighted_index_sums_weights_and_reports_overflow() {
        use rand_09::distr::weighted::{Error, WeightedIndex};
        let w = |xs: &[f32]| xs.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>();
        let index = WeightedIndex::new(w(&[1.0, 2.0, 3.0, 0.0])).unwrap();
        let mut counts = [0usize; 4];
        let mut r = rng(23);
        for _ in 0..N {
            counts[index.sample(&mut r)] += 1;
        }
        for (i, p) in [1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0, 0.0]
            .into_iter()
            .enumerate()
        {
            let got = counts[i] as f64 / N as f64;
            assert!((got - p).abs() < 0.003, "index {i}: {got}, expected {p}");
        }
        // f16's sum overflows past 65504: an error, not an infinite total that would panic.
        assert_eq!(
            WeightedIndex::new(w(&[65504.0, 65504.0])).unwrap_err(),
            Error::Overflow
        );
        assert_eq!(
            WeightedIndex::new(w(&[1.0, f32::NAN])).unwrap_err(),
            Error::InvalidWeight
        );
        assert_eq!(
            WeightedIndex::new(w(&[0.0, -0.0])).unwrap_err(),
            Error::InsufficientNonZero
        );
        // FP4 saturates 6 + 6 to 6, which would never pick the second: an overflow.
        let fp4 = |xs: &[f32]| {
            xs.iter()
                .map(|&x| f4e2m1fn::from_f32(x))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            WeightedIndex::new(fp4(&[6.0, 6.0])).unwrap_err(),
            Error::Overflow
        );
        // 4 + 3 = 7 rounds to 6 (half an ulp away, the nearest value): a sum, not an overflow.
        assert!(WeightedIndex::new(fp4(&[4.0, 3.0])).is_ok());
        let index = WeightedIndex::new(fp4(&[1.0, 1.0])).unwrap();
        let ones = (0..N).filter(|_| index.sample(&mut r) == 1).count() as f64 / N as f64;
        assert!((ones - 0.5).abs() < 0.003, "{ones}");
        // Every signed format has a Weight (E8M0, without zero, has none).
        macro_rules! weight_row {
            ($t:ident, $v:ident, $s:ty, $c:ty, signed, $($rest:tt)*) => {
                let one = lowp::$t::ONE;
                assert!(WeightedIndex::new([one, one]).is_ok(), "{}", stringify!($t));
                let max = lowp::$t::MAX;
                let sum = WeightedIndex::new([max, max]);
                assert_eq!(sum.unwrap_err(), Error::Overflow, "{}", stringify!($t));
            };
            ($t:ident, $v:ident, $s:ty, $c:ty, unsigned, $($rest:tt)*) => {};
        }
        lowp::for_each_format!(weight_row, rows);
    }
}
