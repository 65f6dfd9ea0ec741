//! The slice and vector extension traits: bulk conversion as methods, the way `half` has it.

use super::active_path;
use super::reinterpret::{self, AllBitPatterns};
use crate::LowpFloat;
#[cfg(feature = "alloc")]
use alloc::{vec, vec::Vec};

pub use sealed::{Sealed, SealedBits};

mod sealed {
    /// Only slices (and vectors) of this crate's formats get the methods.
    pub trait Sealed {}
    impl<T: crate::LowpFloat> Sealed for [T] {}
    #[cfg(feature = "alloc")]
    impl<T: crate::LowpFloat> Sealed for alloc::vec::Vec<T> {}

    /// Only slices (and vectors) of the integers that hold the formats' bits.
    pub trait SealedBits {}
    impl SealedBits for [u8] {}
    impl SealedBits for [u16] {}
    #[cfg(feature = "alloc")]
    impl SealedBits for alloc::vec::Vec<u8> {}
    #[cfg(feature = "alloc")]
    impl SealedBits for alloc::vec::Vec<u16> {}
}

/// Bulk conversion methods on `[T]` for every format `T`, on the [`active_path`]; the `half`
/// crate's `HalfFloatSliceExt` (this trait is re-exported under that name as
/// [`crate::slice::HalfFloatSliceExt`]) with the same method names, for every format.
///
/// Rounding is to nearest, ties to even, unless a name says otherwise; overflow, NaN and the
/// other special cases are those of the scalar conversions (`T::from_f32` and friends, and
/// [`crate::Rounding`]), which every element's result equals bit for bit. The methods that fill
/// `self` or `dst` panic when the two lengths differ.
///
/// ```
/// use lowp::prelude::*;
/// use lowp::{f16, f8e5m2};
///
/// let mut h = [f16::ZERO; 3];
/// h.convert_from_f32_slice(&[1.0, 1e-8, 1e5]);
/// let mut back = [0f32; 3];
/// h.convert_to_f32_slice(&mut back);
/// assert_eq!(back, [1.0, 0.0, f32::INFINITY]);
///
/// // Between formats: widened exactly, rounded once.
/// let mut e5 = [f8e5m2::ZERO; 3];
/// e5.convert_from_slice(&h);
/// assert_eq!(e5[0].to_f32(), 1.0);
/// ```
pub trait LowpSliceExt: Sealed {
    /// The format of the elements.
    type Element: LowpFloat;

    /// The elements' bits, in place (no copy): `&[u16]` for the 16-bit formats, `&[u8]` for
    /// the rest (FP6 and FP4 in the low bits, the high bits zero).
    ///
    /// ```
    /// use lowp::prelude::*;
    /// use lowp::f16;
    ///
    /// let x = [f16::ONE, f16::NEG_ZERO];
    /// assert_eq!(x.reinterpret_cast(), &[0x3c00u16, 0x8000]);
    /// ```
    #[must_use]
    fn reinterpret_cast(&self) -> &[<Self::Element as LowpFloat>::Bits];
    /// The elements' bits, in place and writable: each integer written is the new value's bits.
    /// Only for the [`AllBitPatterns`] formats (not FP6 or FP4, whose high bits must stay zero).
    ///
    /// ```
    /// use lowp::prelude::*;
    /// use lowp::bf16;
    ///
    /// let mut x = [bf16::ZERO; 2];
    /// x.reinterpret_cast_mut()[1] = 0x3f80;
    /// assert_eq!(x[1], bf16::ONE);
    /// ```
    #[must_use]
    fn reinterpret_cast_mut(&mut self) -> &mut [<Self::Element as LowpFloat>::Bits]
    where
        Self::Element: AllBitPatterns;
    /// Rounds each f32 of `src` into `self`.
    #[track_caller]
    fn convert_from_f32_slice(&mut self, src: &[f32]);
    /// Rounds each f32 of `src` into `self`, saturating overflow and ±infinity to ±MAX (NaN
    /// stays NaN).
    #[track_caller]
    fn convert_from_f32_slice_saturating(&mut self, src: &[f32]);
    /// Rounds each f64 of `src` into `self`, directly (no double rounding through f32).
    #[track_caller]
    fn convert_from_f64_slice(&mut self, src: &[f64]);
    /// Rounds each f64 of `src` into `self`, saturating overflow and ±infinity to ±MAX.
    #[track_caller]
    fn convert_from_f64_slice_saturating(&mut self, src: &[f64]);
    /// Rounds each f32 stochastically (see [`crate::Rounding::Stochastic`]): element `i` uses
    /// the random bits [`super::random_bits`]`(seed, i)`, so a seed gives the same result
    /// every time, on every path and however the work is split.
    #[track_caller]
    fn convert_from_f32_slice_stochastic(&mut self, src: &[f32], seed: u64);
    /// As [`LowpSliceExt::convert_from_f32_slice_stochastic`], saturating overflow to ±MAX.
    #[track_caller]
    fn convert_from_f32_slice_stochastic_saturating(&mut self, src: &[f32], seed: u64);
    /// Rounds each f64 stochastically, directly; random bits as for f32.
    #[track_caller]
    fn convert_from_f64_slice_stochastic(&mut self, src: &[f64], seed: u64);
    /// As [`LowpSliceExt::convert_from_f64_slice_stochastic`], saturating overflow to ±MAX.
    #[track_caller]
    fn convert_from_f64_slice_stochastic_saturating(&mut self, src: &[f64], seed: u64);
    /// Converts each element of another format into `self`: widened exactly, rounded once.
    #[track_caller]
    fn convert_from_slice<U: LowpFloat>(&mut self, src: &[U]);
    /// As [`LowpSliceExt::convert_from_slice`], saturating overflow to ±MAX.
    #[track_caller]
    fn convert_from_slice_saturating<U: LowpFloat>(&mut self, src: &[U]);
    /// Widens each element exactly into `dst`.
    #[track_caller]
    fn convert_to_f32_slice(&self, dst: &mut [f32]);
    /// Widens each element exactly into `dst`.
    #[track_caller]
    fn convert_to_f64_slice(&self, dst: &mut [f64]);
    /// The elements widened exactly to f32, in a new vector.
    #[cfg(feature = "alloc")]
    fn to_f32_vec(&self) -> Vec<f32>;
    /// The elements widened exactly to f64, in a new vector.
    #[cfg(feature = "alloc")]
    fn to_f64_vec(&self) -> Vec<f64>;
    /// The elements converted to another format (rounded once), in a new vector.
    #[cfg(feature = "alloc")]
    fn to_vec_of<U: LowpFloat>(&self) -> Vec<U>;
}

impl<T: LowpFloat> LowpSliceExt for [T] {
    type Element = T;

    #[inline]
    fn reinterpret_cast(&self) -> &[T::Bits] {
        reinterpret::as_bits(self)
    }
    #[inline]
    fn reinterpret_cast_mut(&mut self) -> &mut [T::Bits]
    where
        T: AllBitPatterns,
    {
        reinterpret::as_bits_mut(self)
    }
    #[inline]
    fn convert_from_f32_slice(&mut self, src: &[f32]) {
        super::narrow_f32(active_path(), src, self, false);
    }
    #[inline]
    fn convert_from_f32_slice_saturating(&mut self, src: &[f32]) {
        super::narrow_f32(active_path(), src, self, true);
    }
    #[inline]
    fn convert_from_f64_slice(&mut self, src: &[f64]) {
        super::narrow_f64(active_path(), src, self, false);
    }
    #[inline]
    fn convert_from_f64_slice_saturating(&mut self, src: &[f64]) {
        super::narrow_f64(active_path(), src, self, true);
    }
    #[inline]
    fn convert_from_f32_slice_stochastic(&mut self, src: &[f32], seed: u64) {
        super::stochastic_f32(src, self, seed, 0, false);
    }
    #[inline]
    fn convert_from_f32_slice_stochastic_saturating(&mut self, src: &[f32], seed: u64) {
        super::stochastic_f32(src, self, seed, 0, true);
    }
    #[inline]
    fn convert_from_f64_slice_stochastic(&mut self, src: &[f64], seed: u64) {
        super::stochastic_f64(src, self, seed, 0, false);
    }
    #[inline]
    fn convert_from_f64_slice_stochastic_saturating(&mut self, src: &[f64], seed: u64) {
        super::stochastic_f64(src, self, seed, 0, true);
    }
    #[inline]
    fn convert_from_slice<U: LowpFloat>(&mut self, src: &[U]) {
        super::convert(active_path(), src, self, false);
    }
    #[inline]
    fn convert_from_slice_saturating<U: LowpFloat>(&mut self, src: &[U]) {
        super::convert(active_path(), src, self, true);
    }
    #[inline]
    fn convert_to_f32_slice(&self, dst: &mut [f32]) {
        super::widen_f32(active_path(), self, dst);
    }
    #[inline]
    fn convert_to_f64_slice(&self, dst: &mut [f64]) {
        super::widen_f64(active_path(), self, dst);
    }
    #[cfg(feature = "alloc")]
    fn to_f32_vec(&self) -> Vec<f32> {
        let mut v = vec![0.0; self.len()];
        self.convert_to_f32_slice(&mut v);
        v
    }
    #[cfg(feature = "alloc")]
    fn to_f64_vec(&self) -> Vec<f64> {
        let mut v = vec![0.0; self.len()];
        self.convert_to_f64_slice(&mut v);
        v
    }
    #[cfg(feature = "alloc")]
    fn to_vec_of<U: LowpFloat>(&self) -> Vec<U> {
        let mut v = vec![U::default(); self.len()];
        v.convert_from_slice(self);
        v
    }
}

/// Constructors of `Vec<T>` from slices of f32, f64 or another format, for every format `T`;
/// the `half` crate's `HalfFloatVecExt` (re-exported under that name as
/// [`crate::vec::HalfFloatVecExt`]) with the same method names, for every format.
///
/// ```
/// use lowp::prelude::*;
/// use lowp::bf16;
///
/// let v = Vec::<bf16>::from_f32_slice(&[1.0, 3.0e38, f32::INFINITY]);
/// assert_eq!(v[2], bf16::INFINITY);
/// ```
#[cfg(feature = "alloc")]
pub trait LowpVecExt<T: LowpFloat>: Sealed + Sized {
    /// The elements' bits, without copying (the allocation is reused).
    ///
    /// ```
    /// use lowp::prelude::*;
    /// use lowp::f8e5m2;
    ///
    /// let v = vec![f8e5m2::ONE, f8e5m2::INFINITY];
    /// assert_eq!(v.reinterpret_into(), vec![0x3cu8, 0x7c]);
    /// ```
    #[must_use]
    fn reinterpret_into(self) -> Vec<T::Bits>;
    /// Each f32 rounded to nearest even (see [`LowpSliceExt::convert_from_f32_slice`]).
    fn from_f32_slice(src: &[f32]) -> Self;
    /// Each f32 rounded to nearest even, saturating overflow and ±infinity to ±MAX.
    fn from_f32_slice_saturating(src: &[f32]) -> Self;
    /// Each f32 rounded stochastically with the random bits of `seed` (see
    /// [`LowpSliceExt::convert_from_f32_slice_stochastic`]).
    fn from_f32_slice_stochastic(src: &[f32], seed: u64) -> Self;
    /// Each f64 rounded to nearest even, directly.
    fn from_f64_slice(src: &[f64]) -> Self;
    /// Each f64 rounded to nearest even, saturating overflow and ±infinity to ±MAX.
    fn from_f64_slice_saturating(src: &[f64]) -> Self;
    /// Each f64 rounded stochastically with the random bits of `seed`.
    fn from_f64_slice_stochastic(src: &[f64], seed: u64) -> Self;
    /// Each element of another format, widened exactly and rounded once.
    fn from_slice_of<U: LowpFloat>(src: &[U]) -> Self;
}

/// Builds a vector of `len` elements and fills it.
#[cfg(feature = "alloc")]
fn filled<T: LowpFloat>(len: usize, fill: impl FnOnce(&mut [T])) -> Vec<T> {
    let mut v = vec![T::default(); len];
    fill(&mut v);
    v
}

#[cfg(feature = "alloc")]
impl<T: LowpFloat> LowpVecExt<T> for Vec<T> {
    #[inline]
    fn reinterpret_into(self) -> Vec<T::Bits> {
        reinterpret::into_bits(self)
    }
    fn from_f32_slice(src: &[f32]) -> Self {
        filled(src.len(), |d| d.convert_from_f32_slice(src))
    }
    fn from_f32_slice_saturating(src: &[f32]) -> Self {
        filled(src.len(), |d| d.convert_from_f32_slice_saturating(src))
    }
    fn from_f32_slice_stochastic(src: &[f32], seed: u64) -> Self {
        filled(src.len(), |d| {
            d.convert_from_f32_slice_stochastic(src, seed)
        })
    }
    fn from_f64_slice(src: &[f64]) -> Self {
        filled(src.len(), |d| d.convert_from_f64_slice(src))
    }
    fn from_f64_slice_saturating(src: &[f64]) -> Self {
        filled(src.len(), |d| d.convert_from_f64_slice_saturating(src))
    }
    fn from_f64_slice_stochastic(src: &[f64], seed: u64) -> Self {
        filled(src.len(), |d| {
            d.convert_from_f64_slice_stochastic(src, seed)
        })
    }
    fn from_slice_of<U: LowpFloat>(src: &[U]) -> Self {
        filled(src.len(), |d| d.convert_from_slice(src))
    }
}

/// Views integers as the numbers with those bits, in place: the `half` crate's
/// `HalfBitsSliceExt`, on `[u16]` (for [`f16`](crate::f16) and [`bf16`](crate::bf16)) and on
/// `[u8]` (for the FP8 formats and [`f8e8m0fnu`](crate::f8e8m0fnu)). The target is any
/// [`AllBitPatterns`] format whose bits are the slice's integer; FP6 and FP4 are excluded, since
/// a byte with high bits set is not one of their values (use `from_bits`, which masks).
///
/// ```
/// use lowp::prelude::*;
/// use lowp::{bf16, f16};
///
/// let bits = [0x3c00u16, 0x4000];
/// let halves: &[f16] = bits.reinterpret_cast();
/// assert_eq!(halves[1].to_f32(), 2.0);
/// // The same bits read as bfloat16 are other numbers: 0x3c00 is 2^-7 there.
/// assert_eq!(bits.reinterpret_cast::<bf16>()[0].to_f32(), 0.0078125);
///
/// let mut raw = [0u16; 2];
/// raw.reinterpret_cast_mut::<f16>()[0] = f16::ONE;
/// assert_eq!(raw, [0x3c00, 0]);
/// ```
pub trait HalfBitsSliceExt: SealedBits {
    /// The integer type of the elements (`u16` or `u8`).
    type Bits;

    /// The numbers with these bits, in place.
    #[must_use]
    fn reinterpret_cast<H: AllBitPatterns<Bits = Self::Bits>>(&self) -> &[H];
    /// The numbers with these bits, in place and writable: each number written sets its bits.
    #[must_use]
    fn reinterpret_cast_mut<H: AllBitPatterns<Bits = Self::Bits>>(&mut self) -> &mut [H];
}

/// Moves a vector of integers into a vector of the numbers with those bits, without copying:
/// the `half` crate's `HalfBitsVecExt`, on `Vec<u16>` and `Vec<u8>`, for the same formats as
/// [`HalfBitsSliceExt`].
///
/// ```
/// use lowp::prelude::*;
/// use lowp::f8e4m3fn;
///
/// let v: Vec<f8e4m3fn> = vec![0x38u8, 0xb8].reinterpret_into();
/// assert_eq!(v.to_f32_vec(), [1.0, -1.0]);
/// ```
#[cfg(feature = "alloc")]
pub trait HalfBitsVecExt: SealedBits {
    /// The integer type of the elements (`u16` or `u8`).
    type Bits;

    /// The numbers with these bits, reusing the allocation.
    #[must_use]
    fn reinterpret_into<H: AllBitPatterns<Bits = Self::Bits>>(self) -> Vec<H>;
}

macro_rules! bits_ext {
    ($($bits:ty),*) => {$(
        impl HalfBitsSliceExt for [$bits] {
            type Bits = $bits;

            #[inline]
            fn reinterpret_cast<H: AllBitPatterns<Bits = $bits>>(&self) -> &[H] {
                reinterpret::from_bits(self)
            }
            #[inline]
            fn reinterpret_cast_mut<H: AllBitPatterns<Bits = $bits>>(&mut self) -> &mut [H] {
                reinterpret::from_bits_mut(self)
            }
        }

        #[cfg(feature = "alloc")]
        impl HalfBitsVecExt for Vec<$bits> {
            type Bits = $bits;

            #[inline]
            fn reinterpret_into<H: AllBitPatterns<Bits = $bits>>(self) -> Vec<H> {
                reinterpret::from_bits_vec(self)
            }
        }
    )*};
}
bits_ext!(u8, u16);
