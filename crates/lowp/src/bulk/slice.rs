//! The slice and vector extension traits: bulk conversion as methods, the way `half` has it.

use super::active_path;
use crate::LowpFloat;

pub use sealed::Sealed;

mod sealed {
    /// Only slices (and vectors) of this crate's formats get the methods.
    pub trait Sealed {}
    impl<T: crate::LowpFloat> Sealed for [T] {}
    #[cfg(feature = "std")]
    impl<T: crate::LowpFloat> Sealed for Vec<T> {}
}

/// Bulk conversion methods on `[T]` for every format `T`, on the [`active_path`].
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
    #[cfg(feature = "std")]
    fn to_f32_vec(&self) -> Vec<f32>;
    /// The elements widened exactly to f64, in a new vector.
    #[cfg(feature = "std")]
    fn to_f64_vec(&self) -> Vec<f64>;
    /// The elements converted to another format (rounded once), in a new vector.
    #[cfg(feature = "std")]
    fn to_vec_of<U: LowpFloat>(&self) -> Vec<U>;
}

impl<T: LowpFloat> LowpSliceExt for [T] {
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
    #[cfg(feature = "std")]
    fn to_f32_vec(&self) -> Vec<f32> {
        let mut v = vec![0.0; self.len()];
        self.convert_to_f32_slice(&mut v);
        v
    }
    #[cfg(feature = "std")]
    fn to_f64_vec(&self) -> Vec<f64> {
        let mut v = vec![0.0; self.len()];
        self.convert_to_f64_slice(&mut v);
        v
    }
    #[cfg(feature = "std")]
    fn to_vec_of<U: LowpFloat>(&self) -> Vec<U> {
        let mut v = vec![U::default(); self.len()];
        v.convert_from_slice(self);
        v
    }
}

/// Constructors of `Vec<T>` from slices of f32, f64 or another format, for every format `T`.
///
/// ```
/// use lowp::prelude::*;
/// use lowp::bf16;
///
/// let v = Vec::<bf16>::from_f32_slice(&[1.0, 3.0e38, f32::INFINITY]);
/// assert_eq!(v[2], bf16::INFINITY);
/// ```
#[cfg(feature = "std")]
pub trait LowpVecExt<T>: Sealed + Sized {
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
#[cfg(feature = "std")]
fn filled<T: LowpFloat>(len: usize, fill: impl FnOnce(&mut [T])) -> Vec<T> {
    let mut v = vec![T::default(); len];
    fill(&mut v);
    v
}

#[cfg(feature = "std")]
impl<T: LowpFloat> LowpVecExt<T> for Vec<T> {
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
