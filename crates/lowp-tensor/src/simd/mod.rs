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

    /// Whether this CPU can run the path (asked of [`lowp::cpu`], which detects once).
    pub fn is_supported(self) -> bool {
        match self {
            Path::Portable => true,
            Path::Avx2Fma => {
                cfg!(target_arch = "x86_64")
                    && lowp::cpu::has(lowp::cpu::Feature::Avx2)
                    && lowp::cpu::has(lowp::cpu::Feature::Fma)
            }
        }
    }

    /// The path the kernels run on: [`Path::Avx2Fma`] where the CPU has it and the process
    /// runs a vector path at all ([`lowp::cpu::active_path`] is not portable, so
    /// `LOWP_FORCE_PATH=portable` pins these kernels to the portable loops too), else
    /// [`Path::Portable`].
    pub fn best() -> Path {
        if lowp::cpu::active_path() != lowp::cpu::Path::Portable && Path::Avx2Fma.is_supported() {
            Path::Avx2Fma
        } else {
            Path::Portable
        }
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
