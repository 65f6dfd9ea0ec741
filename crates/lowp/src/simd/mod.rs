//! The vector conversion paths: the kernels written once over a small lane interface
//! ([`isa::Isa`]), and one implementation of it per instruction set.
//!
//! This is one of the two places in the crate with `unsafe` (the other is [`crate::hw`]):
//! intrinsics, unaligned loads and stores, and calls into `#[target_feature]` functions. Every
//! call into a path goes through [`narrow_f32`] and friends below, which check that the CPU
//! has the path first (a cached bit test), so no instruction the CPU lacks is ever reached.
#![allow(unsafe_code)]

#[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
mod avx2;
// The AVX-512 intrinsics are stable from Rust 1.89 (see `build.rs`).
#[cfg(all(
    feature = "std",
    any(target_arch = "x86", target_arch = "x86_64"),
    lowp_avx512
))]
#[clippy::msrv = "1.89"]
mod avx512;
#[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
mod conversions;
#[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
mod isa;
#[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
mod plan;

pub(crate) mod measure;

use crate::LowpFloat;
use crate::cpu::Path;
use measure::{Lanes, Measure, Plain};

/// Defines, in a module `$name`, the four entry points of a path: the generic kernels
/// compiled with the path's target features, with its token. They are `unsafe fn`s (safe
/// `#[target_feature]` functions need Rust 1.86): the caller promises the CPU has the features.
#[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
macro_rules! entry_points {
    ($name:ident, $features:literal, $token:expr) => {
        pub(crate) mod $name {
            use super::*;

            /// Rounds f32s to nearest even into `dst` (equal lengths).
            #[target_feature(enable = $features)]
            pub(crate) unsafe fn narrow_f32<T: LowpFloat>(
                src: &[f32],
                dst: &mut [T],
                saturate: bool,
            ) {
                // Two calls with constant `saturate`, so each loop is compiled for its own.
                let stream = super::super::streams(dst);
                if saturate {
                    conversions::narrow_f32($token, src, dst, true, stream)
                } else {
                    conversions::narrow_f32($token, src, dst, false, stream)
                }
            }
            /// Rounds f64s to nearest even into `dst` (equal lengths).
            #[target_feature(enable = $features)]
            pub(crate) unsafe fn narrow_f64<T: LowpFloat>(
                src: &[f64],
                dst: &mut [T],
                saturate: bool,
            ) {
                let stream = super::super::streams(dst);
                if saturate {
                    conversions::narrow_f64($token, src, dst, true, stream)
                } else {
                    conversions::narrow_f64($token, src, dst, false, stream)
                }
            }
            /// Widens to f32 (equal lengths).
            #[target_feature(enable = $features)]
            pub(crate) unsafe fn widen_f32<T: LowpFloat>(src: &[T], dst: &mut [f32]) {
                conversions::widen_f32($token, src, dst, super::super::streams(dst))
            }
            /// Widens to f64 (equal lengths).
            #[target_feature(enable = $features)]
            pub(crate) unsafe fn widen_f64<T: LowpFloat>(src: &[T], dst: &mut [f64]) {
                conversions::widen_f64($token, src, dst, super::super::streams(dst))
            }
            /// Runs `f` compiled with this path's features (see [`super::vectorized_on`]).
            #[target_feature(enable = $features)]
            #[allow(dead_code)] // the AVX-512 paths share `avx512::plain`'s (`vectorized_on`)
            pub(crate) unsafe fn run<R>(f: impl FnOnce() -> R) -> R {
                f()
            }
            /// Measures a block of [`crate::fit::FitStats::measure`] in f32: the portable loop
            /// of [`super::super::measure`], compiled for this path's vector width.
            #[target_feature(enable = $features)]
            pub(crate) unsafe fn fit_lanes_f32(
                lanes: &mut crate::simd::measure::Lanes<f32, 8>,
                xs: &[f32],
                ys: &[f32],
                plain: &crate::simd::measure::Plain<f32>,
            ) -> u64 {
                lanes.add(xs, ys, plain)
            }
            /// [`fit_lanes_f32`] in f64.
            #[target_feature(enable = $features)]
            pub(crate) unsafe fn fit_lanes_f64(
                lanes: &mut crate::simd::measure::Lanes<f64, 4>,
                xs: &[f64],
                ys: &[f64],
                plain: &crate::simd::measure::Plain<f64>,
            ) -> u64 {
                lanes.add(xs, ys, plain)
            }
        }
    };
}
#[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
use entry_points;

/// Outputs from this many bytes on are written with non-temporal stores: they would not stay
/// in the caches anyway, and skipping the read of each destination line before writing it
/// saves a third of the memory traffic. Smaller outputs are likely to be read again soon, and
/// ordinary stores leave them in cache for that.
#[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
pub(crate) const STREAM_FROM_BYTES: usize = 8 << 20;

/// Whether to write `dst` with non-temporal stores.
#[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
fn streams<D>(dst: &[D]) -> bool {
    core::mem::size_of_val(dst) >= STREAM_FROM_BYTES
}

/// Generates a dispatcher: runs the entry point of a supported vector `path` and answers
/// true, or answers false (for the portable path, or one the CPU lacks) having done nothing.
macro_rules! dispatch {
    ($(#[$doc:meta])* $fn:ident<$T:ident>($($arg:ident: $ty:ty),*)) => {
        $(#[$doc])*
        #[allow(unused_variables)]
        pub(crate) fn $fn<$T: LowpFloat>(path: Path, $($arg: $ty),*) -> bool {
            if path == Path::Portable || !path.is_supported() {
                return false;
            }
            #[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
            // SAFETY: the CPU has every feature of `path`, checked just above, and each entry
            // point is compiled for exactly the features of its path.
            unsafe {
                match path {
                    Path::Portable => return false,
                    Path::F16c => avx2::path::$fn($($arg),*),
                    #[cfg(lowp_avx512)]
                    Path::Avx512 => avx512::plain::$fn($($arg),*),
                    #[cfg(lowp_avx512)]
                    Path::Avx512Bf16 => avx512::with_bf16::$fn($($arg),*),
                    #[cfg(lowp_avx512fp16)]
                    Path::Avx512Fp16 => avx512::with_fp16::$fn($($arg),*),
                    // Never supported without their paths compiled in.
                    #[cfg(not(lowp_avx512fp16))]
                    _ => return false,
                }
                return true;
            }
            #[allow(unreachable_code)]
            false
        }
    };
}

/// Generates a dispatcher for a block of [`crate::fit::FitStats::measure`] (the loop of
/// [`measure`]): runs the entry point of a supported vector `path` and gives its answer, or
/// gives `None` (the portable path, or one the CPU lacks) having done nothing.
macro_rules! fit_dispatch {
    ($(#[$doc:meta])* $fn:ident($f:ty, $n:literal)) => {
        $(#[$doc])*
        #[allow(unused_variables)]
        pub(crate) fn $fn(
            path: Path,
            lanes: &mut crate::simd::measure::Lanes<$f, $n>,
            xs: &[$f],
            ys: &[$f],
            plain: &crate::simd::measure::Plain<$f>,
        ) -> Option<u64> {
            if path == Path::Portable || !path.is_supported() {
                return None;
            }
            #[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
            // SAFETY: the CPU has every feature of `path`, checked just above, and each entry
            // point is compiled for exactly the features of its path.
            unsafe {
                return Some(match path {
                    Path::Portable => return None,
                    Path::F16c => avx2::path::$fn(lanes, xs, ys, plain),
                    #[cfg(lowp_avx512)]
                    Path::Avx512 => avx512::plain::$fn(lanes, xs, ys, plain),
                    #[cfg(lowp_avx512)]
                    Path::Avx512Bf16 => avx512::with_bf16::$fn(lanes, xs, ys, plain),
                    #[cfg(lowp_avx512fp16)]
                    Path::Avx512Fp16 => avx512::with_fp16::$fn(lanes, xs, ys, plain),
                    // Never supported without their paths compiled in.
                    #[cfg(not(lowp_avx512fp16))]
                    _ => return None,
                });
            }
            #[allow(unreachable_code)]
            None
        }
    };
}

/// Runs `f` compiled for the vector instructions of [`crate::cpu::active_path`] (see
/// [`vectorized_on`]), so that a crate built on lowp gets its own loops vectorized as widely
/// as lowp's conversions are, without `unsafe` or a `#[target_feature]` of its own.
///
/// ```
/// let xs: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5 - 100.0).collect();
/// // `#[inline(always)]` puts the closure's body into the function compiled for the path.
/// let amax = lowp::vectorized(
///     #[inline(always)]
///     || xs.iter().fold(0u32, |m, x| m.max(x.to_bits() & 0x7fff_ffff)),
/// );
/// assert_eq!(f32::from_bits(amax), 399.5);
/// ```
#[inline]
pub fn vectorized<R>(f: impl FnOnce() -> R) -> R {
    vectorized_on(crate::cpu::active_path(), f)
}

/// Runs `f` compiled for `path`'s vector instructions where this CPU can run `path`, else for
/// the baseline CPU: `avx2` (and `f16c`) for [`Path::F16c`], AVX-512 F and BW besides for the
/// `avx512*` paths (which share one compilation: their further instructions,
/// `vcvtneps2bf16` and `vcvtps2phx`, are not ones the compiler picks for plain Rust), nothing
/// more for [`Path::Portable`].
///
/// Only code inlined into `f` is compiled so: give the closure `#[inline(always)]`, and the
/// functions it calls in its loops `#[inline]` or `#[inline(always)]` (a call the compiler
/// leaves out of line runs as compiled for the baseline CPU, correctly but without the wider
/// vectors). The result is the same on every path: Rust's integer and floating-point
/// operations mean the same whatever the instruction set (the compiler never fuses a multiply
/// and an add on its own, and `mul_add` is correctly rounded everywhere); only the speed
/// differs.
#[inline]
#[allow(unused_variables)] // `path`, where no vector path is compiled in
pub fn vectorized_on<R>(path: Path, f: impl FnOnce() -> R) -> R {
    #[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
    if path != Path::Portable && path.is_supported() {
        // SAFETY: the CPU has every feature of `path`, checked just above; `avx2::path` needs
        // only those of `Path::F16c` and `avx512::plain` only those of `Path::Avx512`, which
        // every path above `Path::F16c` includes. `f` itself is safe code.
        return unsafe {
            match path {
                #[cfg(lowp_avx512)]
                Path::F16c => avx2::path::run(f),
                #[cfg(lowp_avx512)]
                _ => avx512::plain::run(f),
                #[cfg(not(lowp_avx512))]
                _ => avx2::path::run(f),
            }
        };
    }
    f()
}

fit_dispatch!(
    /// Measures a block in f32 lanes on `path`.
    fit_lanes_f32(f32, 8)
);
fit_dispatch!(
    /// Measures a block in f64 lanes on `path`.
    fit_lanes_f64(f64, 4)
);

// The lane loop runs through these dispatchers, so its vector paths are named here, above it.
impl Measure<f32> for Lanes<f32, 8> {
    fn on_path(
        path: Path,
        lanes: &mut Self,
        xs: &[f32],
        ys: &[f32],
        plain: &Plain<f32>,
    ) -> Option<u64> {
        fit_lanes_f32(path, lanes, xs, ys, plain)
    }
}

impl Measure<f64> for Lanes<f64, 4> {
    fn on_path(
        path: Path,
        lanes: &mut Self,
        xs: &[f64],
        ys: &[f64],
        plain: &Plain<f64>,
    ) -> Option<u64> {
        fit_lanes_f64(path, lanes, xs, ys, plain)
    }
}

dispatch!(
    /// Rounds f32s into `dst` on `path` (equal lengths).
    narrow_f32<T>(src: &[f32], dst: &mut [T], saturate: bool)
);
dispatch!(
    /// Rounds f64s into `dst` on `path` (equal lengths).
    narrow_f64<T>(src: &[f64], dst: &mut [T], saturate: bool)
);
dispatch!(
    /// Widens into f32s on `path` (equal lengths).
    widen_f32<T>(src: &[T], dst: &mut [f32])
);
dispatch!(
    /// Widens into f64s on `path` (equal lengths).
    widen_f64<T>(src: &[T], dst: &mut [f64])
);
