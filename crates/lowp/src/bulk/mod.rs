//! Converting whole slices at memory speed, on the best path the CPU has.
//!
//! The slice methods of [`LowpSliceExt`] (named like the `half` crate's `HalfFloatSliceExt`)
//! and the constructors of [`LowpVecExt`] work for every format; [`crate::prelude`] brings
//! them in. They round to nearest, ties to even, by default, with saturating and stochastic
//! variants; every result is bit-identical to the scalar conversion of the same element
//! (`T::from_f32`, `T::from_f64`, `to_f32`, `to_f64`), NaN payloads included, on every path.
//!
//! ```
//! use lowp::prelude::*;
//! use lowp::{bf16, f8e4m3fn};
//!
//! let weights = [0.1f32, -2.5, 1e-3, 500.0];
//! let mut packed = [bf16::ZERO; 4];
//! packed.convert_from_f32_slice(&weights);
//! assert_eq!(packed.to_f32_vec(), [0.10009765625, -2.5, 0.00099945068359375, 500.0]);
//!
//! // E4M3FN has no infinity: 500 overflows to NaN, or saturates to 448.
//! let fp8 = Vec::<f8e4m3fn>::from_f32_slice(&weights);
//! assert!(fp8[3].is_nan());
//! let fp8 = Vec::<f8e4m3fn>::from_f32_slice_saturating(&weights);
//! assert_eq!(fp8[3].to_f32(), 448.0);
//! ```
//!
//! # Paths
//!
//! The work is done by one of several [`Path`]s: vector code for AVX-512 (with the BF16 and
//! FP16 extensions where present) or AVX2 and F16C, or a portable loop. The best path the CPU
//! has is chosen on first use and kept ([`active_path`], decided in [`crate::cpu`], which the
//! rest of the crate and `lowp-tensor` ask too); the environment variable
//! `LOWP_FORCE_PATH` (`portable`, `f16c`, `avx512`, `avx512bf16`, `avx512fp16`) pins another,
//! and the `Path` methods run a given path directly:
//!
//! ```
//! use lowp::bulk::Path;
//! use lowp::f16;
//!
//! let src = [1.0f32, 65520.0, f32::NAN];
//! let mut a = [f16::ZERO; 3];
//! let mut b = [f16::ZERO; 3];
//! Path::Portable.convert_from_f32_slice(&mut a, &src).unwrap();
//! Path::best().convert_from_f32_slice(&mut b, &src).unwrap();
//! assert_eq!(a.map(f16::to_bits), b.map(f16::to_bits));
//! assert_eq!(a[1], f16::INFINITY);
//! ```
//!
//! FP4 also packs two values to a byte: [`pack_f4`], [`unpack_f4`], [`pack_f4_from_f32`],
//! [`unpack_f4_to_f32`].
//!
//! # Lengths
//!
//! The methods that fill a caller's slice panic when its length differs from the source's, as
//! `half`'s do; the message names both lengths.

mod packed;
#[cfg(feature = "rayon")]
mod parallel;
mod portable;
mod reinterpret;
mod slice;

pub use crate::cpu::{
    FORCE_PATH_VAR, ForcedPathError, Path, UnknownPath, UnsupportedPath, active_path,
    forced_path_error,
};
pub use packed::{pack_f4, pack_f4_from_f32, unpack_f4, unpack_f4_to_f32};
#[cfg(feature = "alloc")]
pub use packed::{pack_f4_vec, unpack_f4_vec};
#[cfg(feature = "rayon")]
pub use parallel::LowpParSliceExt;
pub use portable::random_bits;
pub use reinterpret::AllBitPatterns;
pub use slice::{HalfBitsSliceExt, LowpSliceExt};
#[cfg(feature = "alloc")]
pub use slice::{HalfBitsVecExt, LowpVecExt};

use crate::LowpFloat;
use crate::simd;

/// Panics unless the two lengths are equal, naming both.
#[inline]
#[track_caller]
pub(crate) fn check_lengths(dst: usize, src: usize) {
    if dst != src {
        length_mismatch(dst, src);
    }
}

#[cold]
#[track_caller]
fn length_mismatch(dst: usize, src: usize) -> ! {
    panic!(
        "lowp: destination and source slices have different lengths \
         (destination {dst}, source {src})"
    );
}

/// f32s to `T` on `path` (the portable loop where the CPU lacks it).
#[track_caller]
pub(crate) fn narrow_f32<T: LowpFloat>(path: Path, src: &[f32], dst: &mut [T], saturate: bool) {
    check_lengths(dst.len(), src.len());
    if !simd::narrow_f32(path, src, dst, saturate) {
        portable::narrow_f32(src, dst, saturate);
    }
}

/// f64s to `T` on `path`.
#[track_caller]
pub(crate) fn narrow_f64<T: LowpFloat>(path: Path, src: &[f64], dst: &mut [T], saturate: bool) {
    check_lengths(dst.len(), src.len());
    if !simd::narrow_f64(path, src, dst, saturate) {
        portable::narrow_f64(src, dst, saturate);
    }
}

/// `T` to f32s on `path`.
#[track_caller]
pub(crate) fn widen_f32<T: LowpFloat>(path: Path, src: &[T], dst: &mut [f32]) {
    check_lengths(dst.len(), src.len());
    if !simd::widen_f32(path, src, dst) {
        portable::widen_f32(src, dst);
    }
}

/// `T` to f64s on `path`.
#[track_caller]
pub(crate) fn widen_f64<T: LowpFloat>(path: Path, src: &[T], dst: &mut [f64]) {
    check_lengths(dst.len(), src.len());
    if !simd::widen_f64(path, src, dst) {
        portable::widen_f64(src, dst);
    }
}

/// `U` to `T` on `path`: each block widened exactly to f32, then rounded once.
#[track_caller]
pub(crate) fn convert<U: LowpFloat, T: LowpFloat>(
    path: Path,
    src: &[U],
    dst: &mut [T],
    saturate: bool,
) {
    check_lengths(dst.len(), src.len());
    let mut wide = [0f32; 512];
    for (s, d) in src.chunks(wide.len()).zip(dst.chunks_mut(wide.len())) {
        let wide = &mut wide[..s.len()];
        widen_f32(path, s, wide);
        narrow_f32(path, wide, d, saturate);
    }
}

/// Stochastic rounding of f32s, element `i` of the whole slice starting at index `first`.
pub(crate) fn stochastic_f32<T: LowpFloat>(
    src: &[f32],
    dst: &mut [T],
    seed: u64,
    first: u64,
    saturate: bool,
) {
    check_lengths(dst.len(), src.len());
    if saturate {
        portable::stochastic(src, dst, seed, first, T::from_f32_round_saturating);
    } else {
        portable::stochastic(src, dst, seed, first, T::from_f32_round);
    }
}

/// Stochastic rounding of f64s, as for f32s.
pub(crate) fn stochastic_f64<T: LowpFloat>(
    src: &[f64],
    dst: &mut [T],
    seed: u64,
    first: u64,
    saturate: bool,
) {
    check_lengths(dst.len(), src.len());
    if saturate {
        portable::stochastic(src, dst, seed, first, T::from_f64_round_saturating);
    } else {
        portable::stochastic(src, dst, seed, first, T::from_f64_round);
    }
}

/// Generates the `Path` methods that run one conversion on a chosen path.
macro_rules! path_methods {
    ($(
        $(#[$doc:meta])*
        $name:ident($a:ident: $aty:ty, $b:ident: $bty:ty) => $imp:ident($($call:expr),*);
    )*) => {
        impl Path {
            $(
                $(#[$doc])*
                ///
                /// Gives [`UnsupportedPath`] (and does nothing) when the CPU cannot run this
                /// path; panics when the lengths differ.
                #[track_caller]
                pub fn $name<T: LowpFloat>(self, $a: $aty, $b: $bty) -> Result<(), UnsupportedPath> {
                    if !self.is_supported() {
                        return Err(UnsupportedPath(self));
                    }
                    $imp(self, $($call),*);
                    Ok(())
                }
            )*
        }
    };
}

path_methods! {
    /// Rounds f32s to nearest even into `dst` on this path.
    convert_from_f32_slice(dst: &mut [T], src: &[f32]) => narrow_f32(src, dst, false);
    /// Rounds f32s to nearest even into `dst` on this path, saturating overflow to ±MAX.
    convert_from_f32_slice_saturating(dst: &mut [T], src: &[f32]) => narrow_f32(src, dst, true);
    /// Rounds f64s to nearest even (directly, no double rounding) into `dst` on this path.
    convert_from_f64_slice(dst: &mut [T], src: &[f64]) => narrow_f64(src, dst, false);
    /// Rounds f64s to nearest even into `dst` on this path, saturating overflow to ±MAX.
    convert_from_f64_slice_saturating(dst: &mut [T], src: &[f64]) => narrow_f64(src, dst, true);
    /// Widens `src` exactly into f32s on this path.
    convert_to_f32_slice(src: &[T], dst: &mut [f32]) => widen_f32(src, dst);
    /// Widens `src` exactly into f64s on this path.
    convert_to_f64_slice(src: &[T], dst: &mut [f64]) => widen_f64(src, dst);
}
