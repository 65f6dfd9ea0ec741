//! Bit casts between f32/f64 and the unsigned integers of their widths, usable in `const fn`
//! and compiled to no call at all.
//!
//! `f32::to_bits` and its siblings do the same, but they are `const` only from Rust 1.83, while
//! lowp builds with Rust 1.81 (the `half` crate's minimum); and in an unoptimized build each of
//! them is a function call, which costs as much as a whole f16 conversion there. So this is the
//! one module besides the hardware ones with `unsafe`: a transmute between a float and the
//! integer of its size, sound for every value (both are plain bits of the same size, with no
//! invalid pattern; the standard library writes `to_bits` the same way).
#![allow(unsafe_code)]
// Newer compilers suggest `to_bits`, for the reasons above not taken; older ones do not know
// the lint.
#![allow(unknown_lints, unnecessary_transmutes)]

/// The bits of `x`, as `f32::to_bits`.
#[inline(always)]
pub(crate) const fn f32_to_bits(x: f32) -> u32 {
    // SAFETY: f32 and u32 have the same size, and every bit pattern is valid for both.
    unsafe { core::mem::transmute::<f32, u32>(x) }
}

/// The f32 with bits `b`, as `f32::from_bits`.
#[inline(always)]
pub(crate) const fn f32_from_bits(b: u32) -> f32 {
    // SAFETY: as in `f32_to_bits`.
    unsafe { core::mem::transmute::<u32, f32>(b) }
}

/// The bits of `x`, as `f64::to_bits`.
#[inline(always)]
pub(crate) const fn f64_to_bits(x: f64) -> u64 {
    // SAFETY: f64 and u64 have the same size, and every bit pattern is valid for both.
    unsafe { core::mem::transmute::<f64, u64>(x) }
}

/// The f64 with bits `b`, as `f64::from_bits`.
#[inline(always)]
pub(crate) const fn f64_from_bits(b: u64) -> f64 {
    // SAFETY: as in `f64_to_bits`.
    unsafe { core::mem::transmute::<u64, f64>(b) }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_casts_are_the_standard_ones() {
        for x in [
            0.0f32,
            -0.0,
            1.5,
            f32::MIN_POSITIVE,
            f32::INFINITY,
            f32::from_bits(0x7fa0_0001),
        ] {
            assert_eq!(super::f32_to_bits(x), x.to_bits());
            assert_eq!(super::f32_from_bits(x.to_bits()).to_bits(), x.to_bits());
            let y = x as f64;
            assert_eq!(super::f64_to_bits(y), y.to_bits());
            assert_eq!(super::f64_from_bits(y.to_bits()).to_bits(), y.to_bits());
        }
    }
}
