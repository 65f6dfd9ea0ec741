//! The one conversion of each kind on a chosen [`Path`]: the vector kernels where the CPU has
//! them, the portable loop otherwise. Every slice method, its parallel and packed forms and
//! `fit` run through these.

use super::portable;
use crate::LowpFloat;
use crate::cpu::{Path, UnsupportedPath};
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
