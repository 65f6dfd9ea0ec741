//! The conversion paths, which of them this CPU has, and the one chosen for the process.

use core::fmt;
use core::sync::atomic::{AtomicU8, Ordering};

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

    /// Whether this CPU can run the path (checked once, then cached). Without the `std`
    /// feature, or off x86, only [`Path::Portable`].
    pub fn is_supported(self) -> bool {
        supported_mask() & (1 << self as u8) != 0
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

/// The environment variable that pins [`active_path`].
pub const FORCE_PATH_VAR: &str = "LOWP_FORCE_PATH";

/// The path the slice conversions use: the one `LOWP_FORCE_PATH` names when it is set to a path
/// this CPU can run, else [`Path::best`]. Decided on the first call and kept for the life of
/// the process; a `LOWP_FORCE_PATH` that cannot be followed is ignored, and
/// [`forced_path_error`] says why.
pub fn active_path() -> Path {
    match ACTIVE.load(Ordering::Relaxed) {
        0 => {
            let path = choose().0;
            ACTIVE.store(path as u8 + 1, Ordering::Relaxed);
            path
        }
        n => Path::ALL[n as usize - 1],
    }
}

/// Why `LOWP_FORCE_PATH` is being ignored, if it is set and is.
pub fn forced_path_error() -> Option<ForcedPathError> {
    choose().1
}

static ACTIVE: AtomicU8 = AtomicU8::new(0);
static SUPPORTED: AtomicU8 = AtomicU8::new(0);

/// The active path and why the forced one was refused.
fn choose() -> (Path, Option<ForcedPathError>) {
    #[cfg(feature = "std")]
    if let Ok(name) = std::env::var(FORCE_PATH_VAR) {
        return match Path::from_name(&name) {
            Some(p) if p.is_supported() => (p, None),
            Some(p) => (Path::best(), Some(ForcedPathError::Unsupported(p))),
            None => (Path::best(), Some(ForcedPathError::Unknown)),
        };
    }
    (Path::best(), None)
}

/// Bit `p as u8` set for each supported path; bit 7 marks the mask as computed.
fn supported_mask() -> u8 {
    let mask = SUPPORTED.load(Ordering::Relaxed);
    if mask != 0 {
        return mask;
    }
    let mut mask = 0x80 | 1 << Path::Portable as u8;
    for p in Path::ALL {
        if crate::simd::cpu_has(p) {
            mask |= 1 << p as u8;
        }
    }
    SUPPORTED.store(mask, Ordering::Relaxed);
    mask
}
