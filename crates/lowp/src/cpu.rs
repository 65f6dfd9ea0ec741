//! The one place that decides which instructions lowp runs: the CPU's features, detected once
//! and cached, and the [`Path`] the process uses, chosen once from them and from the
//! `LOWP_FORCE_PATH` environment variable.
//!
//! Everything with a hardware variant asks here: the slice conversions of [`crate::bulk`]
//! run on [`active_path`]; `f16::from_f64` uses F16C's `vcvtps2ph` exactly when
//! [`scalar_f16c`] says so (that is, unless `LOWP_FORCE_PATH=portable`); and
//! other crates (`lowp-tensor`'s kernels) ask [`has`] and [`active_path`] rather than
//! detecting for themselves, so that one variable pins every vector path of the process to
//! the portable code. Every path gives the same bits as the portable one on every input.
//!
//! ```
//! use lowp::cpu::{self, Feature, Path};
//!
//! // What this machine has, and what the process runs.
//! for f in Feature::ALL {
//!     println!("{f}: {}", cpu::has(f));
//! }
//! let path = cpu::active_path();
//! assert!(path.is_supported());
//! assert!(Path::Portable.is_supported());
//! // F16C is one of a vector path's instructions: `f16::from_f64` uses it exactly when the
//! // process runs a vector path.
//! assert_eq!(cpu::scalar_f16c(), path >= Path::F16c);
//! ```

use core::fmt;
use core::sync::atomic::{AtomicU8, AtomicU16, Ordering};

/// An instruction-set extension some code of lowp (or of the crates built on it) uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Feature {
    /// x86 AVX2 (256-bit integer vectors).
    Avx2,
    /// x86 FMA3 (fused multiply-add on vectors).
    Fma,
    /// x86 F16C (`vcvtps2ph`, `vcvtph2ps`: f32 <-> f16).
    F16c,
    /// x86 AVX-512 Foundation.
    Avx512F,
    /// x86 AVX-512 Byte and Word instructions.
    Avx512Bw,
    /// x86 AVX512-BF16 (`vcvtneps2bf16`, `vdpbf16ps`).
    Avx512Bf16,
    /// x86 AVX512-FP16 (`vcvtps2phx`, `vcvtph2psx`, f16 arithmetic).
    Avx512Fp16,
}

impl Feature {
    /// Every feature, in the order of the enum.
    pub const ALL: [Feature; 7] = [
        Feature::Avx2,
        Feature::Fma,
        Feature::F16c,
        Feature::Avx512F,
        Feature::Avx512Bw,
        Feature::Avx512Bf16,
        Feature::Avx512Fp16,
    ];

    /// The feature's name as `/proc/cpuinfo` and `is_x86_feature_detected!` spell it.
    pub const fn name(self) -> &'static str {
        match self {
            Feature::Avx2 => "avx2",
            Feature::Fma => "fma",
            Feature::F16c => "f16c",
            Feature::Avx512F => "avx512f",
            Feature::Avx512Bw => "avx512bw",
            Feature::Avx512Bf16 => "avx512bf16",
            Feature::Avx512Fp16 => "avx512fp16",
        }
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Whether this CPU has `feature`: detected on the first call, then a cached bit test.
/// Without the `std` feature, or off x86, always false (detection needs the standard library).
pub fn has(feature: Feature) -> bool {
    detected() & (1 << feature as u16) != 0
}

/// Bit `f as u16` set for each feature the CPU has; bit 15 marks the set as computed.
static DETECTED: AtomicU16 = AtomicU16::new(0);

fn detected() -> u16 {
    let bits = DETECTED.load(Ordering::Relaxed);
    if bits != 0 {
        return bits;
    }
    let mut bits = 1 << 15;
    for f in Feature::ALL {
        if detect(f) {
            bits |= 1 << f as u16;
        }
    }
    DETECTED.store(bits, Ordering::Relaxed);
    bits
}

/// Asks the CPU (through std's detection, which also checks that the OS saves the registers).
#[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
fn detect(feature: Feature) -> bool {
    match feature {
        Feature::Avx2 => std::is_x86_feature_detected!("avx2"),
        Feature::Fma => std::is_x86_feature_detected!("fma"),
        Feature::F16c => std::is_x86_feature_detected!("f16c"),
        Feature::Avx512F => std::is_x86_feature_detected!("avx512f"),
        Feature::Avx512Bw => std::is_x86_feature_detected!("avx512bw"),
        Feature::Avx512Bf16 => std::is_x86_feature_detected!("avx512bf16"),
        Feature::Avx512Fp16 => std::is_x86_feature_detected!("avx512fp16"),
    }
}

#[cfg(not(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64"))))]
fn detect(_: Feature) -> bool {
    false
}

/// Whether `f16::from_f64` uses the F16C instruction `vcvtps2ph`: exactly when [`active_path`]
/// is a vector path (every vector path includes F16C), so `LOWP_FORCE_PATH=portable` pins it
/// to the software engine too. Both give the same bits on every input. (`f16::from_f32` and
/// `to_f32` are a few integer operations on every path, faster than a call to the
/// instruction.)
#[inline]
pub fn scalar_f16c() -> bool {
    active_path() != Path::Portable
}

/// A way of converting whole slices, from the portable loop to the widest vector instructions.
///
/// Every path gives the same bits as the scalar conversions on every input (NaN payloads
/// included); they differ only in speed. [`active_path`] is the one the slice methods use:
/// the best this CPU has, unless the `LOWP_FORCE_PATH` environment variable names another.
/// The paths form a ladder; each one uses, for each format:
///
/// | path | f16 | bf16 | FP8, FP6, FP4 |
/// |---|---|---|---|
/// | `portable` | software engine | software engine | software engine (a table to widen) |
/// | `f16c` | `vcvtps2ph`/`vcvtph2ps`, 8 lanes | integer rounding, 8 lanes (AVX2) | integer rounding, 8 lanes (AVX2) |
/// | `avx512` | `vcvtps2ph`/`vcvtph2ps`, 16 lanes | integer rounding, 16 lanes | integer rounding, 16 lanes |
/// | `avx512bf16` | as `avx512` | `vcvtneps2bf16`, subnormal and NaN lanes fixed | as `avx512` |
/// | `avx512fp16` | `vcvtps2phx`/`vcvtph2psx` | as `avx512bf16` | as `avx512` |
///
/// From f64, the vector paths first round each value to odd at f32's precision (inexact
/// results get their last bit set), which carries enough to round once more, correctly, into
/// any format of the crate; widening to f64 goes exactly through f32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Path {
    /// Plain Rust, every CPU: the scalar software engine in a loop.
    Portable,
    /// x86 AVX2 and F16C.
    F16c,
    /// x86 AVX-512 F and BW (with F16C).
    Avx512,
    /// [`Path::Avx512`] plus AVX512-BF16's `vcvtneps2bf16`.
    Avx512Bf16,
    /// [`Path::Avx512Bf16`] plus AVX512-FP16's `vcvtps2phx` and `vcvtph2psx`.
    Avx512Fp16,
}

impl Path {
    /// Every path, slowest first.
    pub const ALL: [Path; 5] = [
        Path::Portable,
        Path::F16c,
        Path::Avx512,
        Path::Avx512Bf16,
        Path::Avx512Fp16,
    ];

    /// The path's name, as `LOWP_FORCE_PATH` and [`Path::from_name`] take it.
    pub const fn name(self) -> &'static str {
        match self {
            Path::Portable => "portable",
            Path::F16c => "f16c",
            Path::Avx512 => "avx512",
            Path::Avx512Bf16 => "avx512bf16",
            Path::Avx512Fp16 => "avx512fp16",
        }
    }

    /// The path with the given name (ASCII case ignored), if there is one.
    pub fn from_name(name: &str) -> Option<Path> {
        Path::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The CPU features the path needs (each path needs those of the path below it too).
    pub const fn features(self) -> &'static [Feature] {
        use Feature::*;
        match self {
            Path::Portable => &[],
            Path::F16c => &[Avx2, F16c],
            Path::Avx512 => &[Avx2, F16c, Avx512F, Avx512Bw],
            Path::Avx512Bf16 => &[Avx2, F16c, Avx512F, Avx512Bw, Avx512Bf16],
            Path::Avx512Fp16 => &[Avx2, F16c, Avx512F, Avx512Bw, Avx512Bf16, Avx512Fp16],
        }
    }

    /// Whether this CPU can run the path: it has every one of [`Path::features`] (detected
    /// once, then cached: one load and a comparison, as the dispatchers ask on every call).
    /// Without the `std` feature, or off x86, only [`Path::Portable`]; built by a Rust older
    /// than 1.89, not the AVX-512 paths, and older than 1.94, not [`Path::Avx512Fp16`].
    pub fn is_supported(self) -> bool {
        // Compiled without the AVX-512 paths (Rust before 1.89; before 1.94 the AVX512-FP16
        // one; see `build.rs`), the CPU's AVX-512 is not used.
        if (cfg!(not(lowp_avx512)) && self > Path::F16c)
            || (cfg!(not(lowp_avx512fp16)) && self == Path::Avx512Fp16)
        {
            return false;
        }
        let needed = self.feature_bits();
        detected() & needed == needed
    }

    /// [`Path::features`] as bits of the detected set.
    const fn feature_bits(self) -> u16 {
        let features = self.features();
        let mut bits = 0;
        let mut i = 0;
        while i < features.len() {
            bits |= 1 << features[i] as u16;
            i += 1;
        }
        bits
    }

    /// The paths this CPU can run, slowest first.
    pub fn supported() -> impl Iterator<Item = Path> {
        Path::ALL.into_iter().filter(|p| p.is_supported())
    }

    /// The fastest path this CPU can run.
    pub fn best() -> Path {
        Path::supported().last().unwrap_or(Path::Portable)
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl core::str::FromStr for Path {
    type Err = UnknownPath;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Path::from_name(s).ok_or(UnknownPath)
    }
}

/// A name that is not one of [`Path::ALL`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownPath;

impl fmt::Display for UnknownPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown conversion path; the paths are ")?;
        for (i, p) in Path::ALL.iter().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{p}")?;
        }
        Ok(())
    }
}

/// A path was asked for that this CPU cannot run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnsupportedPath(pub Path);

impl fmt::Display for UnsupportedPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "this CPU cannot run the {} conversion path; it can run ",
            self.0
        )?;
        for (i, p) in Path::supported().enumerate() {
            let sep = if i == 0 { "" } else { ", " };
            write!(f, "{sep}{p}")?;
        }
        Ok(())
    }
}

#[cfg(feature = "std")]
impl std::error::Error for UnknownPath {}
#[cfg(feature = "std")]
impl std::error::Error for UnsupportedPath {}

/// Why `LOWP_FORCE_PATH` was not followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForcedPathError {
    /// It names no path.
    Unknown,
    /// It names a path this CPU cannot run.
    Unsupported(Path),
}

impl fmt::Display for ForcedPathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("LOWP_FORCE_PATH: ")?;
        match *self {
            ForcedPathError::Unknown => UnknownPath.fmt(f),
            ForcedPathError::Unsupported(p) => UnsupportedPath(p).fmt(f),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for ForcedPathError {}

/// The environment variable that pins [`active_path`] (set but empty, it is as if unset).
pub const FORCE_PATH_VAR: &str = "LOWP_FORCE_PATH";

/// The path the process uses (the slice conversions, and through [`scalar_f16c`] the scalar
/// `f16` conversions): the one `LOWP_FORCE_PATH` names when it is set to a path
/// this CPU can run, else [`Path::best`]. Decided on the first call and kept for the life of
/// the process; a `LOWP_FORCE_PATH` that cannot be followed is ignored, and
/// [`forced_path_error`] says why.
#[inline]
pub fn active_path() -> Path {
    // Inlined into every scalar f16 conversion, which asks each time: one load and a compare,
    // with the first call's detection out of line.
    match ACTIVE.load(Ordering::Relaxed) {
        0 => first_active_path(),
        n => Path::ALL[n as usize - 1],
    }
}

/// [`active_path`] on its first call: detects and stores it.
#[cold]
#[inline(never)]
fn first_active_path() -> Path {
    let path = choose().0;
    ACTIVE.store(path as u8 + 1, Ordering::Relaxed);
    path
}

/// Why `LOWP_FORCE_PATH` is being ignored, if it is set and is.
pub fn forced_path_error() -> Option<ForcedPathError> {
    choose().1
}

static ACTIVE: AtomicU8 = AtomicU8::new(0);

/// The active path and why the forced one was refused.
fn choose() -> (Path, Option<ForcedPathError>) {
    #[cfg(feature = "std")]
    if let Ok(name) = std::env::var(FORCE_PATH_VAR) {
        if !name.trim().is_empty() {
            return match Path::from_name(&name) {
                Some(p) if p.is_supported() => (p, None),
                Some(p) => (Path::best(), Some(ForcedPathError::Unsupported(p))),
                None => (Path::best(), Some(ForcedPathError::Unknown)),
            };
        }
    }
    (Path::best(), None)
}
