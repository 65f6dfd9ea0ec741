//! The portable path: the scalar software engine in a loop, and the counter-based random bits
//! of stochastic rounding (which every path uses: it has no vector code).

use crate::{LowpFloat, Rounding};

/// Rounds f32s to nearest even, in software (never a CPU conversion instruction).
pub(crate) fn narrow_f32<T: LowpFloat>(src: &[f32], dst: &mut [T], saturate: bool) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = if saturate {
            T::from_f32_saturating(s)
        } else {
            T::from_f32_const(s)
        };
    }
}

/// Rounds f64s to nearest even, in software, directly from each f64.
pub(crate) fn narrow_f64<T: LowpFloat>(src: &[f64], dst: &mut [T], saturate: bool) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = if saturate {
            T::from_f64_saturating(s)
        } else {
            T::from_f64_const(s)
        };
    }
}

/// Widens to f32 in software (the 8-bit formats and narrower by table).
pub(crate) fn widen_f32<T: LowpFloat>(src: &[T], dst: &mut [f32]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = widen_one(s);
    }
}

/// Widens to f64 in software, through the exact f32.
pub(crate) fn widen_f64<T: LowpFloat>(src: &[T], dst: &mut [f64]) {
    for (d, &s) in dst.iter_mut().zip(src) {
        *d = widen_one(s) as f64;
    }
}

#[inline(always)]
fn widen_one<T: LowpFloat>(x: T) -> f32 {
    // `to_f32` may use F16C for f16; the 8-bit types' `to_f32` is a table lookup.
    if T::FORMAT.total_bits() > 8 {
        x.to_f32_const()
    } else {
        x.to_f32()
    }
}

/// Stochastic rounding of each element with `round`: element `i` takes the random bits
/// [`random_bits`]`(seed, first + i)`, so the result does not depend on how the work is split.
pub(crate) fn stochastic<S: Copy, T: LowpFloat>(
    src: &[S],
    dst: &mut [T],
    seed: u64,
    first: u64,
    round: impl Fn(S, Rounding) -> T,
) {
    for (i, (d, &s)) in dst.iter_mut().zip(src).enumerate() {
        *d = round(s, Rounding::Stochastic(random_bits(seed, first + i as u64)));
    }
}

/// The 32 random bits element `index` gets under `seed`: the high half of SplitMix64's output
/// for the state `seed + (index + 1) * golden`, a bijective mix that passes BigCrush, so
/// the bits of distinct elements are independent for practical purposes and any element's
/// bits can be computed without the others'.
#[inline]
pub const fn random_bits(seed: u64, index: u64) -> u32 {
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 32) as u32
}
