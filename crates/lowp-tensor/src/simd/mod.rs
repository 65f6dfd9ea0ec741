//! The only place this crate uses `unsafe`: running code compiled for CPU features the
//! machine was checked to have.
//!
//! Each kernel here is written once, in safe generic Rust, and compiled three times: for the
//! baseline CPU, with AVX2 and FMA enabled, and with AVX-512 Foundation enabled too
//! (`#[target_feature]`), the last two called only after the CPU was checked to have those
//! features. The operations and their order are the same, so every path gives the same bits.
//! Three are written with intrinsics instead, since no compiler turns plain Rust into their
//! instructions: [`dot_bf16`] (`vdpbf16ps`), which the engine uses only where it gives the
//! same bits, [`sum_f16`] (`vcvtph2ps`), which widens every f16 exactly as the portable code
//! does, and [`transpose`] (SSE shuffles), which moves values without changing them.
#![allow(unsafe_code)]

pub mod dot_bf16;
pub mod gemm;
mod lanes;
pub mod reduce;
pub mod sum_f16;
pub mod transpose;

/// A way to run the kernels' inner loops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// Plain Rust for any CPU.
    Portable,
    /// AVX2 with FMA (x86-64).
    Avx2Fma,
    /// AVX-512 Foundation with AVX2 and FMA (x86-64): 32 vector registers of 512 bits, so
    /// wider register tiles.
    Avx512,
    /// [`Path::Avx512`] plus AVX512-BF16: bf16 matrix products take `vdpbf16ps` (two
    /// multiply-adds per lane and instruction) on the blocks where it gives the FMA chain's
    /// bits, and [`Path::Avx512`]'s kernel elsewhere.
    Avx512Bf16,
}

impl Path {
    /// Every path, portable first.
    pub const ALL: [Path; 4] = [
        Path::Portable,
        Path::Avx2Fma,
        Path::Avx512,
        Path::Avx512Bf16,
    ];

    /// The path's name.
    pub fn name(self) -> &'static str {
        match self {
            Path::Portable => "portable",
            Path::Avx2Fma => "avx2-fma",
            Path::Avx512 => "avx512",
            Path::Avx512Bf16 => "avx512bf16",
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
            Path::Avx512 => {
                Path::Avx2Fma.is_supported() && lowp::cpu::has(lowp::cpu::Feature::Avx512F)
            }
            Path::Avx512Bf16 => {
                Path::Avx512.is_supported() && lowp::cpu::has(lowp::cpu::Feature::Avx512Bf16)
            }
        }
    }

    /// Whether the path's vector registers are AVX-512's (the wider tiles).
    pub fn is_avx512(self) -> bool {
        matches!(self, Path::Avx512 | Path::Avx512Bf16)
    }

    /// The path the kernels run on: the widest this CPU has ([`Path::Avx512Bf16`] where it is
    /// the faster, [`Path::Avx512`], then [`Path::Avx2Fma`]) where the process runs a vector
    /// path at all, else [`Path::Portable`]. The conversions' choice in
    /// [`lowp::cpu::active_path`] steers it: `LOWP_FORCE_PATH=portable` pins these kernels to
    /// the portable loops, a forced `f16c` (lowp's AVX2 path) keeps them off AVX-512, and a
    /// forced `avx512` off `vdpbf16ps`.
    ///
    /// Every path gives the same bits, so the choice is speed alone. [`Path::Avx512Bf16`]'s
    /// bf16 products ran at 1.6 times [`Path::Avx512`]'s on an AMD Zen 4 (2026-11-28) and at
    /// 0.5 to 0.75 times on an Intel Sapphire Rapids (2026-11-27; see
    /// `docs/performance.md`). It is chosen where AVX512-BF16 comes without AVX512-FP16, as
    /// on AMD's Zen 4 and 5, and not beside AVX512-FP16, as on Intel's Sapphire Rapids and its
    /// successors; [`crate::matmul_on`] runs either anywhere it is supported.
    pub fn best() -> Path {
        use lowp::cpu::Path as Conversions;
        match lowp::cpu::active_path() {
            Conversions::Portable => Path::Portable,
            Conversions::F16c => Self::widest(&[Path::Avx2Fma]),
            // The conversions' path already says the CPU has AVX512-BF16.
            Conversions::Avx512Bf16 if !lowp::cpu::has(lowp::cpu::Feature::Avx512Fp16) => {
                Self::widest(&[Path::Avx512Bf16, Path::Avx512, Path::Avx2Fma])
            }
            _ => Self::widest(&[Path::Avx512, Path::Avx2Fma]),
        }
    }

    /// The first of `paths` this CPU runs, else [`Path::Portable`].
    fn widest(paths: &[Path]) -> Path {
        paths
            .iter()
            .copied()
            .find(|p| p.is_supported())
            .unwrap_or(Path::Portable)
    }
}

/// Runs `$body` (an expression of safe code) compiled with the features `$path` names when
/// the CPU has them (AVX2 and FMA, or AVX-512 F with them), compiled for the baseline CPU
/// otherwise.
macro_rules! dispatch {
    (
        $path:expr,
        fn $name:ident$(<$($g:ident: $b:path),*>)?($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty $body:block
    ) => {{
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $name$(<$($g: $b),*>)?($($arg: $ty),*) -> $ret $body
        #[cfg(target_arch = "x86_64")]
        if $path == $crate::simd::Path::Avx2Fma && $path.is_supported() {
            // SAFETY: the CPU was just checked to have AVX2 and FMA, all the function
            // needs; its body is safe code.
            return unsafe { $name($($arg),*) };
        }
        #[cfg(target_arch = "x86_64")]
        if $path.is_avx512() && $path.is_supported() {
            #[target_feature(enable = "avx512f,avx2,fma")]
            unsafe fn $name$(<$($g: $b),*>)?($($arg: $ty),*) -> $ret $body
            // SAFETY: the CPU was just checked to have AVX-512 F, AVX2 and FMA, all the
            // function needs; its body is safe code.
            return unsafe { $name($($arg),*) };
        }
        let _ = $path;
        $body
    }};
}
pub(crate) use dispatch;
