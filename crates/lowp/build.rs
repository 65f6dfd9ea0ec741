//! Tells the compiler which vector paths it can build. lowp builds with Rust 1.81 (the `half`
//! crate's minimum), but the AVX-512 intrinsics and target features it uses are stable only
//! from Rust 1.89: with an older compiler the AVX-512 paths are left out (`cfg(lowp_avx512)`
//! unset) and the CPU's best path is AVX2 with F16C; the AVX512-FP16 intrinsics are stable from
//! Rust 1.94 (`cfg(lowp_avx512fp16)`). Results are the same on every path.

use std::process::Command;

/// The first Rust with the AVX-512 intrinsics and target features stable.
const AVX512_MINOR: u32 = 89;
/// The first Rust with the AVX512-FP16 intrinsics stable.
const AVX512FP16_MINOR: u32 = 94;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-check-cfg=cfg(lowp_avx512)");
    println!("cargo:rustc-check-cfg=cfg(lowp_avx512fp16)");
    // A compiler whose version cannot be read is taken as an old one: the paths left out cost
    // speed on the CPUs that have AVX-512, where a failed build would cost everything.
    let minor = rustc_minor().unwrap_or(0);
    if minor >= AVX512_MINOR {
        println!("cargo:rustc-cfg=lowp_avx512");
    }
    if minor >= AVX512FP16_MINOR {
        println!("cargo:rustc-cfg=lowp_avx512fp16");
    }
}

/// The minor version of the compiler cargo runs (`1.MINOR.patch`).
fn rustc_minor() -> Option<u32> {
    let rustc = std::env::var_os("RUSTC")?;
    let out = Command::new(rustc).arg("--version").output().ok()?;
    let version = String::from_utf8(out.stdout).ok()?;
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    version
        .split_whitespace()
        .nth(1)?
        .split('.')
        .nth(1)?
        .parse()
        .ok()
}
