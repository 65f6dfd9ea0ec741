//! Viewing a slice or vector of numbers as their bits and back, without copying: `half`'s
//! `reinterpret_cast`, `reinterpret_cast_mut` and `reinterpret_into`, for every format.
//!
//! These are layout casts, so they need `unsafe`; like the bytemuck impls they rest on one
//! fact, that every type of this crate is a `#[repr(transparent)]` newtype over its
//! [`LowpFloat::Bits`] (`define_format!` declares them so; each function below also checks
//! size and alignment at compile time). Numbers to bits is allowed for every format. Bits to
//! numbers is allowed only for [`AllBitPatterns`] formats: the FP6 and FP4 types keep their
//! value in the low bits of a byte with the high bits zero, an invariant that writing raw
//! bytes could break.

use crate::LowpFloat;
#[cfg(feature = "alloc")]
use alloc::vec::Vec;
use core::mem::{align_of, size_of};

mod sealed {
    /// Only the formats that fill their storage integer.
    pub trait Sealed {}
}

/// A format in which every bit pattern of its storage integer ([`LowpFloat::Bits`]) is a
/// value: the 16-bit and 8-bit formats, but not FP6 and FP4, whose spare high bits must stay
/// zero. Only these can be made from raw bits in place (`HalfBitsSliceExt::reinterpret_cast`,
/// `reinterpret_cast_mut`, `HalfBitsVecExt::reinterpret_into`).
///
/// ```
/// use lowp::prelude::*;
/// use lowp::f8e4m3fn;
///
/// let bytes = [0x38u8, 0x40, 0x7f];
/// let fp8: &[f8e4m3fn] = bytes.reinterpret_cast();
/// assert_eq!(fp8[0].to_f32(), 1.0);
/// assert!(fp8[2].is_nan());
/// ```
///
/// FP4 is not one of them (`0xff` is not a value of it), so this does not compile:
///
/// ```compile_fail
/// use lowp::prelude::*;
/// let bytes = [0xffu8];
/// let fp4: &[lowp::f4e2m1fn] = bytes.reinterpret_cast();
/// ```
pub trait AllBitPatterns: LowpFloat + sealed::Sealed {}

/// [`AllBitPatterns`] for the formats whose row of [`for_each_format!`](crate::for_each_format)
/// says `all_bits`, each checked to fill its storage integer.
macro_rules! all_bit_patterns {
    ($t:ident, $v:ident, $s:ty, $c:ty, $sign:ident, $values:ident, all_bits) => {
        impl sealed::Sealed for crate::$t {}
        impl AllBitPatterns for crate::$t {}
        const _: () = assert!(
            crate::$t::FORMAT.total_bits() as usize
                == 8 * size_of::<<crate::$t as LowpFloat>::Bits>()
        );
    };
    ($t:ident, $v:ident, $s:ty, $c:ty, $sign:ident, $values:ident, low_bits) => {};
}
crate::for_each_format!(all_bit_patterns, rows);

/// Fails to compile unless `T` has exactly the layout of `T::Bits`.
const fn assert_same_layout<T: LowpFloat>() {
    assert!(size_of::<T>() == size_of::<T::Bits>() && align_of::<T>() == align_of::<T::Bits>());
}

/// The bits of every element, in place.
#[inline]
pub(crate) fn as_bits<T: LowpFloat>(s: &[T]) -> &[T::Bits] {
    const { assert_same_layout::<T>() };
    #[allow(unsafe_code)]
    // SAFETY: `T` is `repr(transparent)` over `T::Bits` (same size and alignment, checked
    // above), so the memory of `s.len()` values is that of `s.len()` integers, every one of
    // them initialised; the returned slice borrows `s`, so it cannot outlive it or alias a
    // mutable borrow.
    unsafe {
        core::slice::from_raw_parts(s.as_ptr().cast::<T::Bits>(), s.len())
    }
}

/// The bits of every element, in place and writable: any pattern written is a value of `T`.
#[inline]
pub(crate) fn as_bits_mut<T: AllBitPatterns>(s: &mut [T]) -> &mut [T::Bits] {
    const { assert_same_layout::<T>() };
    #[allow(unsafe_code)]
    // SAFETY: as in `as_bits`, and the exclusive borrow of `s` moves to the result; whatever
    // integer is written is a valid `T`, since every pattern of `T::Bits` is (`AllBitPatterns`).
    unsafe {
        core::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<T::Bits>(), s.len())
    }
}

/// The values with these bits, in place.
#[inline]
pub(crate) fn from_bits<T: AllBitPatterns>(s: &[T::Bits]) -> &[T] {
    const { assert_same_layout::<T>() };
    #[allow(unsafe_code)]
    // SAFETY: `T` is `repr(transparent)` over `T::Bits` (checked above) and every pattern of
    // `T::Bits` is a valid `T` (`AllBitPatterns`); the result borrows `s`.
    unsafe {
        core::slice::from_raw_parts(s.as_ptr().cast::<T>(), s.len())
    }
}

/// The values with these bits, in place and writable.
#[inline]
pub(crate) fn from_bits_mut<T: AllBitPatterns>(s: &mut [T::Bits]) -> &mut [T] {
    const { assert_same_layout::<T>() };
    #[allow(unsafe_code)]
    // SAFETY: as in `from_bits`; the exclusive borrow of `s` moves to the result, and a `T`
    // written through it is an integer of the same layout.
    unsafe {
        core::slice::from_raw_parts_mut(s.as_mut_ptr().cast::<T>(), s.len())
    }
}

/// Moves a vector of `A` into a vector of `B` without copying, where `A` and `B` have the
/// same layout and every `A` is a valid `B` (the callers' obligation, see below).
#[cfg(feature = "alloc")]
#[inline]
fn transmute_vec<A, B>(v: Vec<A>) -> Vec<B> {
    assert!(size_of::<A>() == size_of::<B>() && align_of::<A>() == align_of::<B>());
    let mut v = core::mem::ManuallyDrop::new(v);
    let (ptr, len, capacity) = (v.as_mut_ptr(), v.len(), v.capacity());
    #[allow(unsafe_code)]
    // SAFETY: the allocation was made for `capacity` values of `A`, whose size and alignment
    // are `B`'s (asserted), so it is the allocation `Vec<B>` would make for `capacity` values;
    // the first `len` elements are initialised; `ManuallyDrop` keeps the old vector from
    // freeing it. Callers only pass `A`, `B` pairs where every `A` is a valid `B`.
    unsafe {
        Vec::from_raw_parts(ptr.cast::<B>(), len, capacity)
    }
}

/// The vector's values as their bits, without copying.
#[cfg(feature = "alloc")]
#[inline]
pub(crate) fn into_bits<T: LowpFloat>(v: Vec<T>) -> Vec<T::Bits> {
    // Every `T` is `repr(transparent)` over `T::Bits`, so each value is a valid integer.
    transmute_vec(v)
}

/// The vector's bits as values, without copying.
#[cfg(feature = "alloc")]
#[inline]
pub(crate) fn from_bits_vec<T: AllBitPatterns>(v: Vec<T::Bits>) -> Vec<T> {
    // Every pattern of `T::Bits` is a valid `T` (`AllBitPatterns`).
    transmute_vec(v)
}
