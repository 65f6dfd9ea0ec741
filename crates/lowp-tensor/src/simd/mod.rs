//! The only place this crate uses `unsafe`: running code compiled for CPU features the
//! machine was checked to have.
//!
//! Each kernel here is written once, in safe generic Rust, and compiled twice: for the
//! baseline CPU and with AVX2 and FMA enabled (`#[target_feature]`), the second called only
//! after the CPU was checked to have them. The operations and their order are the same, so
//! both give the same bits.
#![allow(unsafe_code)]

pub mod gemm;
pub mod reduce;

use std::sync::OnceLock;

/// A way to run the kernels' inner loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Plain Rust for any CPU.
    Portable,
    /// AVX2 with FMA (x86-64).
    Avx2Fma,
}

impl Path {
    /// Every path, portable first.
    pub const ALL: [Path; 2] = [Path::Portable, Path::Avx2Fma];

    /// The path's name.
    pub fn name(self) -> &'static str {
        match self {
            Path::Portable => "portable",
            Path::Avx2Fma => "avx2-fma",
        }
    }

    /// Whether this CPU can run the path.
    pub fn is_supported(self) -> bool {
        match self {
            Path::Portable => true,
            #[cfg(target_arch = "x86_64")]
            Path::Avx2Fma => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(not(target_arch = "x86_64"))]
            Path::Avx2Fma => false,
        }
    }

    /// The fastest path this CPU supports, detected once; the portable one when
    /// `LOWP_FORCE_PATH=portable` pins lowp's conversions to it too.
    pub fn best() -> Path {
        static BEST: OnceLock<Path> = OnceLock::new();
        *BEST.get_or_init(|| {
            let pinned = lowp::bulk::active_path() == lowp::bulk::Path::Portable
                && std::env::var_os(lowp::bulk::FORCE_PATH_VAR).is_some();
            if !pinned && Path::Avx2Fma.is_supported() {
                Path::Avx2Fma
            } else {
                Path::Portable
            }
        })
    }
}

/// Runs `$body` (an expression of safe code) compiled with AVX2 and FMA when `$path` asks for
/// them and the CPU has them, compiled for the baseline CPU otherwise.
macro_rules! dispatch {
    (
        $path:expr,
        fn $name:ident<$($g:ident: $b:path),*>($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block
    ) => {{
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $name<$($g: $b),*>($($arg: $ty),*) -> $ret $body
        #[cfg(target_arch = "x86_64")]
        if $path == $crate::simd::Path::Avx2Fma && $path.is_supported() {
            // SAFETY: the CPU was just checked to have AVX2 and FMA, all the function
            // needs; its body is safe code.
            return unsafe { $name($($arg),*) };
        }
        let _ = $path;
        $body
    }};
}
pub(crate) use dispatch;
