//! The conversion kernels, written once for any [`Isa`], and the loops that run them over
//! slices.

use super::isa::Isa;
use super::plan::{Below, NanCode, NarrowPlan, Special, WidenPlan, same};
use crate::LowpFloat;
use crate::format::formats;

/// Rounds f32 lanes (bits) to nearest even into the plan's format; gives the codes.
///
/// Bit-identical to `round::nearest_even_from_bits` followed by the engine, lane by lane: each
/// lane's candidates (the integer trick for the normal range, the subnormal or clamp rule
/// below it, the overflow code above it, the NaN code) are all computed and the lane's
/// magnitude picks one.
#[inline(always)]
pub(crate) fn narrow<I: Isa>(isa: I, plan: &NarrowPlan, x: I::V, saturate: bool) -> I::V {
    let s = |v| isa.splat(v);
    let abs = isa.and(x, s(0x7fff_ffff));
    // The normal range: add just under half an ulp plus the kept last bit, shift, rebias.
    let parity = if plan.parity {
        isa.and(isa.shr(abs, plan.shift), s(1))
    } else {
        s(1)
    };
    let rounded = isa.shr(
        isa.add(isa.add(abs, s(plan.round_bias)), parity),
        plan.shift,
    );
    let mut code = isa.sub(rounded, s(plan.rebias));
    let below = isa.gt(s(plan.low), abs);
    match plan.below {
        Below::Nothing => {}
        Below::Subnormal { magic } => {
            let sub = isa.sub(isa.add_f32(abs, s(magic)), s(magic));
            code = isa.select(below, sub, code);
        }
        Below::Clamp { up_from } => {
            let up = isa.gt(abs, s(up_from - 1));
            code = isa.select(below, isa.select(up, s(1), s(0)), code);
        }
    }
    let over = isa.gt(abs, s(plan.overflow_after));
    let overflow = if saturate { plan.max } else { plan.overflow };
    code = isa.select(over, s(overflow), code);
    let sign = isa.shr(isa.and(x, s(0x8000_0000)), plan.sign_shift);
    if plan.signed {
        let signed = isa.or(code, sign);
        code = if plan.negative_zero {
            signed
        } else {
            isa.select(isa.eq(code, s(0)), code, signed)
        };
    }
    let nan = match plan.nan {
        NanCode::Ieee {
            canonical,
            shift,
            keep_payload,
        } => {
            let base = isa.or(sign, s(canonical));
            if keep_payload {
                isa.or(base, isa.shr(isa.and(abs, s(0x003f_ffff)), shift))
            } else {
                base
            }
        }
        NanCode::Fixed { code, signed } => {
            if signed {
                isa.or(sign, s(code))
            } else {
                s(code)
            }
        }
    };
    let is_nan = isa.gt(abs, s(0x7f80_0000));
    code = isa.select(is_nan, nan, code);
    if !plan.signed {
        // Every negative input, -0 and -NaN included, is NaN in an unsigned format; so is zero
        // in a format without one.
        let mut bad = isa.gt(s(0), x);
        if !plan.zero {
            bad = isa.either(bad, isa.eq(abs, s(0)));
        }
        code = isa.select(bad, s(plan.unsigned_nan), code);
    }
    code
}

/// Widens lanes of codes to f32 bits, exactly.
#[inline(always)]
pub(crate) fn widen<I: Isa>(isa: I, plan: &WidenPlan, b: I::V) -> I::V {
    let s = |v| isa.splat(v);
    let mag = isa.and(b, s(plan.magnitude_mask));
    let sign = isa.shl(isa.and(b, s(plan.sign_mask)), plan.sign_shift);
    let mut bits = isa.add(isa.shl(mag, plan.shift), s(plan.rebias));
    if let Some((min_normal, quantum)) = plan.subnormal {
        let sub = isa.int_to_f32_scaled(mag, quantum);
        bits = isa.select(isa.gt(s(min_normal), mag), sub, bits);
    }
    match plan.special {
        Special::Nothing => isa.or(sign, bits),
        Special::Ieee { infinity } => {
            let man = isa.shl(isa.and(mag, s(infinity ^ plan.magnitude_mask)), plan.shift);
            let quiet = isa.select(isa.gt(mag, s(infinity)), s(0x0040_0000), s(0));
            let special = isa.or(s(0x7f80_0000), isa.or(man, quiet));
            let bits = isa.select(isa.gt(mag, s(infinity - 1)), special, bits);
            isa.or(sign, bits)
        }
        Special::AllOnes => {
            let nan = isa.eq(mag, s(plan.magnitude_mask));
            isa.or(sign, isa.select(nan, s(0x7fc0_0000), bits))
        }
        Special::NegativeZero => {
            let nan = isa.eq(b, s(plan.sign_mask));
            isa.select(nan, s(0x7fc0_0000), isa.or(sign, bits))
        }
        Special::E8m0 => {
            let bits = isa.shl(b, 23);
            let bits = isa.select(isa.eq(b, s(0)), s(0x0040_0000), bits);
            isa.select(isa.eq(b, s(0xff)), s(0x7fc0_0000), bits)
        }
    }
}

/// The format a slice element is, as far as the kernels care.
#[derive(PartialEq, Eq)]
enum Kind {
    F16,
    Bf16,
    Byte,
}

#[inline(always)]
fn kind<T: LowpFloat>() -> Kind {
    if same(&T::FORMAT, &formats::F16) {
        Kind::F16
    } else if same(&T::FORMAT, &formats::BF16) {
        Kind::Bf16
    } else {
        Kind::Byte
    }
}

/// The widest vector of any instruction set, for the tail buffers.
const MAX_LANES: usize = 16;

/// Rounds `LANES` source values at `src` (loaded by `load`) and stores them at `dst`.
///
/// # Safety
/// `dst` must be valid for writing `I::LANES` elements.
#[inline(always)]
unsafe fn narrow_store<I: Isa, T: LowpFloat>(isa: I, x: I::V, dst: *mut T, saturate: bool) {
    const { assert!(size_of::<T>() == size_of::<T::Bits>()) };
    // SAFETY: every format type is a `repr(transparent)` newtype over its `Bits`, `u16` for
    // the 16-bit formats and `u8` for the rest, so the pointer casts keep the layout; the
    // caller guarantees room for `LANES` elements.
    unsafe {
        match kind::<T>() {
            Kind::F16 => isa.store_f16(dst.cast(), x, saturate),
            Kind::Bf16 => isa.store_bf16(dst.cast(), x, saturate),
            Kind::Byte => {
                let plan = const { NarrowPlan::of(&T::FORMAT) };
                isa.store_u8(dst.cast(), narrow(isa, &plan, x, saturate))
            }
        }
    }
}

/// Loads `LANES` elements at `src` and widens them to f32 bits.
///
/// # Safety
/// `src` must be valid for reading `I::LANES` elements.
#[inline(always)]
unsafe fn load_widen<I: Isa, T: LowpFloat>(isa: I, src: *const T) -> I::V {
    let plan = const { WidenPlan::of(&T::FORMAT) };
    // SAFETY: as in `narrow_store`.
    unsafe {
        match kind::<T>() {
            Kind::F16 => isa.load_f16(src.cast()),
            Kind::Bf16 => widen(isa, &plan, isa.load_u16(src.cast())),
            Kind::Byte => widen(isa, &plan, isa.load_u8(src.cast())),
        }
    }
}

/// Runs `$step` with element pointers `$s`, `$d` at every full vector of the slices, then once
/// more on copies of the tail padded to a full vector.
macro_rules! convert_slice {
    ($src:expr, $dst:expr, $S:ty, $D:ty, |$s:ident, $d:ident| $step:expr) => {{
        let (src, dst): (&[$S], &mut [$D]) = ($src, $dst);
        debug_assert_eq!(src.len(), dst.len());
        debug_assert!(I::LANES <= MAX_LANES);
        let len = src.len().min(dst.len());
        let mut i = 0;
        while i + I::LANES <= len {
            // SAFETY: `i + LANES <= len`: the vector lies within both slices.
            unsafe {
                let ($s, $d) = (src.as_ptr().add(i), dst.as_mut_ptr().add(i));
                $step
            }
            i += I::LANES;
        }
        if i < len {
            let rem = len - i;
            let mut a = [<$S>::default(); MAX_LANES];
            let mut b = [<$D>::default(); MAX_LANES];
            a[..rem].copy_from_slice(&src[i..len]);
            // SAFETY: both buffers hold `MAX_LANES >= LANES` elements.
            unsafe {
                let ($s, $d) = (a.as_ptr(), b.as_mut_ptr());
                $step
            }
            dst[i..len].copy_from_slice(&b[..rem]);
        }
    }};
}

/// Rounds f32s to nearest even (saturating overflow when asked) into `dst`.
#[inline(always)]
pub(crate) fn narrow_f32<I: Isa, T: LowpFloat>(isa: I, src: &[f32], dst: &mut [T], saturate: bool) {
    convert_slice!(src, dst, f32, T, |s, d| narrow_store(
        isa,
        isa.load_f32(s),
        d,
        saturate
    ));
}

/// Rounds f64s to nearest even (saturating overflow when asked) into `dst`: rounded to odd at
/// f32's precision first, which keeps all the second rounding needs (Boldo and Melquiond: f32
/// carries at least two more bits than any target at every magnitude, subnormals included).
#[inline(always)]
pub(crate) fn narrow_f64<I: Isa, T: LowpFloat>(isa: I, src: &[f64], dst: &mut [T], saturate: bool) {
    convert_slice!(src, dst, f64, T, |s, d| narrow_store(
        isa,
        isa.load_f64_odd(s),
        d,
        saturate
    ));
}

/// Widens to f32, exactly.
#[inline(always)]
pub(crate) fn widen_f32<I: Isa, T: LowpFloat>(isa: I, src: &[T], dst: &mut [f32]) {
    convert_slice!(src, dst, T, f32, |s, d| isa
        .store_f32(d, load_widen(isa, s)));
}

/// Widens to f64, exactly (through the exact f32).
#[inline(always)]
pub(crate) fn widen_f64<I: Isa, T: LowpFloat>(isa: I, src: &[T], dst: &mut [f64]) {
    convert_slice!(src, dst, T, f64, |s, d| isa
        .store_f64(d, load_widen(isa, s)));
}
