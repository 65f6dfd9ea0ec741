//! The parts of the `half` crate's API that lowp adds under half's names, checked on every bit
//! pattern of every format: in-place reinterpretation of slices and vectors, `MAX_SUBNORMAL`,
//! the bit formatting traits (`{:x}` and friends, without flags, as in half) and num-traits' byte conversions.

use lowp::prelude::*;
use lowp::slice::AllBitPatterns;

#[macro_use]
mod common;

/// Every value of the format, in bit order.
fn every_value<T: LowpFloat>() -> Vec<T> {
    (0..1u32 << T::FORMAT.total_bits())
        .map(T::from_bits_u32)
        .collect()
}

#[test]
fn the_prelude_names_f16_and_bf16_as_halfs_does() {
    // `f16` here must be lowp's type, not Rust's unstable primitive, or this does not compile.
    let x: f16 = f16::from_f32(1.5);
    let y: bf16 = bf16::from_f32(1.5);
    assert_eq!((x.to_bits(), y.to_bits()), (0x3e00, 0x3fc0));
}

#[test]
fn reinterpret_cast_views_the_bits_of_every_value_in_place() {
    for_all_formats!(T => {
        let values = every_value::<T>();
        let bits = values.reinterpret_cast();
        assert_eq!(bits.as_ptr().cast::<u8>(), values.as_ptr().cast::<u8>(), "{}", T::FORMAT.name);
        for (v, b) in values.iter().zip(bits) {
            assert!(v.to_bits() == *b, "{}: {:?}", T::FORMAT.name, v);
        }
        let expected: Vec<_> = values.iter().map(|v| v.to_bits()).collect();
        let ptr = values.as_ptr().cast::<u8>();
        let moved = values.reinterpret_into();
        assert_eq!(moved.as_ptr().cast::<u8>(), ptr, "{}: the allocation is reused", T::FORMAT.name);
        assert!(moved == expected, "{}", T::FORMAT.name);
    });
}

/// Bits to values and back in place, for a format where every pattern of its integer is one.
fn bits_round_trip<T: AllBitPatterns>()
where
    [T::Bits]: HalfBitsSliceExt<Bits = T::Bits>,
    Vec<T::Bits>: HalfBitsVecExt<Bits = T::Bits>,
{
    let expected = every_value::<T>();
    let mut bits: Vec<T::Bits> = expected.iter().map(|v| v.to_bits()).collect();
    assert_eq!(
        bits.len(),
        1 << (8 * size_of::<T::Bits>()),
        "{}: all patterns",
        T::FORMAT.name
    );

    let viewed: &[T] = bits.reinterpret_cast();
    assert!(
        viewed
            .iter()
            .zip(&expected)
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );

    // Writing numbers through the view sets the integers, and writing integers through a view
    // of the numbers sets the numbers.
    let negated: Vec<T::Bits> = expected.iter().map(|v| v.to_bits()).rev().collect();
    for (slot, v) in bits
        .reinterpret_cast_mut::<T>()
        .iter_mut()
        .zip(expected.iter().rev())
    {
        *slot = *v;
    }
    assert!(bits == negated, "{}", T::FORMAT.name);
    let mut values = expected.clone();
    for (slot, b) in values.reinterpret_cast_mut().iter_mut().zip(&negated) {
        *slot = *b;
    }
    assert!(
        values
            .iter()
            .zip(expected.iter().rev())
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );

    let moved: Vec<T> = negated.reinterpret_into();
    assert!(
        moved
            .iter()
            .zip(expected.iter().rev())
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );
}

#[test]
fn integers_become_values_in_place_in_every_full_width_format() {
    bits_round_trip::<lowp::f16>();
    bits_round_trip::<lowp::bf16>();
    bits_round_trip::<lowp::f8e4m3fn>();
    bits_round_trip::<lowp::f8e5m2>();
    bits_round_trip::<lowp::f8e4m3fnuz>();
    bits_round_trip::<lowp::f8e5m2fnuz>();
    bits_round_trip::<lowp::f8e4m3>();
    bits_round_trip::<lowp::f8e3m4>();
    bits_round_trip::<lowp::f8e8m0fnu>();
}

#[test]
fn max_subnormal_is_the_value_just_below_min_positive() {
    for_all_formats!(T => {
        let name = T::FORMAT.name;
        let (max_sub, min_pos, min_sub) =
            (T::MAX_SUBNORMAL.to_f64(), T::MIN_POSITIVE.to_f64(), T::MIN_POSITIVE_SUBNORMAL.to_f64());
        if T::FORMAT.subnormals {
            assert_eq!(T::MAX_SUBNORMAL.next_up().to_f64(), min_pos, "{name}");
            assert!(T::MAX_SUBNORMAL.is_subnormal(), "{name}");
            // The subnormals are the multiples of the smallest one below MIN_POSITIVE.
            assert_eq!(max_sub, min_pos - min_sub, "{name}");
        } else {
            assert_eq!(max_sub, min_sub, "{name}: no subnormals, so the smallest value");
        }
    });
    // The values half documents, from the formats' definitions.
    assert_eq!(lowp::f16::MAX_SUBNORMAL.to_f64(), 1023.0 * 2f64.powi(-24));
    assert_eq!(lowp::bf16::MAX_SUBNORMAL.to_f64(), 127.0 * 2f64.powi(-133));
    assert_eq!(lowp::f8e4m3fn::MAX_SUBNORMAL.to_f64(), 7.0 * 2f64.powi(-9));
    assert_eq!(lowp::f4e2m1fn::MAX_SUBNORMAL.to_f64(), 0.5);
}

#[test]
fn hex_binary_and_octal_format_the_bits_without_the_flags() {
    for_all_formats!(T => {
        for v in every_value::<T>() {
            let b: u32 = v.to_bits_u32();
            assert_eq!(format!("{v:x}|{v:X}|{v:b}|{v:o}"), format!("{b:x}|{b:X}|{b:b}|{b:o}"));
            // The flags are dropped, as half drops them.
            assert_eq!(format!("{v:#06x}|{v:>8b}"), format!("{b:x}|{b:b}"));
        }
    });
    assert_eq!(
        format!("{:x} {:#X}", lowp::f16::ONE, lowp::bf16::NEG_ONE),
        "3c00 BF80"
    );
}

#[cfg(feature = "num-traits")]
#[test]
fn num_traits_bytes_are_the_inherent_bytes_of_every_value() {
    use num_traits::{FromBytes, ToBytes};
    fn check<T>()
    where
        T: LowpFloat + ToBytes<Bytes = <T as FromBytes>::Bytes> + FromBytes,
        <T as FromBytes>::Bytes: Sized + AsRef<[u8]>,
    {
        for v in every_value::<T>() {
            let (le, be) = (ToBytes::to_le_bytes(&v), ToBytes::to_be_bytes(&v));
            let bits = v.to_bits_u32();
            let width = le.as_ref().len();
            let expected_le: Vec<u8> = (0..width).map(|i| (bits >> (8 * i)) as u8).collect();
            assert_eq!(
                le.as_ref(),
                &expected_le[..],
                "{} {bits:#x}",
                T::FORMAT.name
            );
            assert_eq!(
                be.as_ref(),
                &expected_le.iter().rev().copied().collect::<Vec<_>>()[..]
            );
            assert_eq!(<T as FromBytes>::from_le_bytes(&le).to_bits_u32(), bits);
            assert_eq!(<T as FromBytes>::from_be_bytes(&be).to_bits_u32(), bits);
        }
    }
    for_all_formats!(T => { check::<T>(); });
}
