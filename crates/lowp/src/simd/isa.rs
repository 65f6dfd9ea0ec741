//! The few lane operations the kernels are written in, one implementation per instruction set,
//! and the lane conversions between f32 bits and a format's codes written once on them (which
//! the instruction sets' own conversions fall back to).

use super::plan::{Below, Method, NanCode, NarrowPlan, Special, WidenPlan};
use crate::format::formats;

/// A vector instruction set, as a zero-sized token that exists only where the CPU has it.
///
/// `V` holds `LANES` 32-bit lanes, `M` a mask of lanes. Arithmetic is on the lanes as `u32`
/// (comparisons as `i32`: every operand the kernels compare is below 2^31). The memory methods
/// read or write exactly `LANES` elements at the pointer, which need not be aligned.
pub(crate) trait Isa: Copy {
    /// `LANES` lanes of 32 bits.
    type V: Copy;
    /// A mask of lanes.
    type M: Copy;
    /// Lanes per vector.
    const LANES: usize;

    /// Every lane `x`.
    fn splat(self, x: u32) -> Self::V;
    /// Bitwise and.
    fn and(self, a: Self::V, b: Self::V) -> Self::V;
    /// Bitwise or.
    fn or(self, a: Self::V, b: Self::V) -> Self::V;
    /// Wrapping addition.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// Wrapping subtraction.
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// Logical shift right by `n` (below 32).
    fn shr(self, a: Self::V, n: u32) -> Self::V;
    /// Shift left by `n` (below 32).
    fn shl(self, a: Self::V, n: u32) -> Self::V;
    /// Lanes where `a > b` as signed integers.
    fn gt(self, a: Self::V, b: Self::V) -> Self::M;
    /// Lanes where `a == b`.
    fn eq(self, a: Self::V, b: Self::V) -> Self::M;
    /// Lanes in `a` or `b`.
    fn either(self, a: Self::M, b: Self::M) -> Self::M;
    /// `t` in the lanes of `m`, `f` elsewhere.
    fn select(self, m: Self::M, t: Self::V, f: Self::V) -> Self::V;
    /// Lanes as f32, added as f32 (rounding to nearest even), as bits.
    fn add_f32(self, a: Self::V, b: Self::V) -> Self::V;
    /// The larger of each pair of lanes, as signed integers.
    fn max(self, a: Self::V, b: Self::V) -> Self::V;
    /// Lanes as integers, converted to f32 and multiplied by `scale`, as bits.
    fn int_to_f32_scaled(self, a: Self::V, scale: f32) -> Self::V;

    /// Loads f32s as bits.
    ///
    /// # Safety
    /// `p` must be valid for reading `LANES` f32s.
    unsafe fn load_f32(self, p: *const f32) -> Self::V;
    /// Loads f64s, rounded to odd at f32's precision (truncated, then the last bit set if that
    /// lost anything), as f32 bits; NaN as the CPU's f64-to-f32 conversion gives it.
    ///
    /// # Safety
    /// `p` must be valid for reading `LANES` f64s.
    unsafe fn load_f64_odd(self, p: *const f64) -> Self::V;
    /// Stores lanes (f32 bits) as f32s; with `STREAM`, non-temporally.
    ///
    /// # Safety
    /// `p` must be valid for writing `LANES` f32s, and aligned to a vector (`4 * LANES`
    /// bytes) if `STREAM`.
    unsafe fn store_f32<const STREAM: bool>(self, p: *mut f32, v: Self::V);
    /// Stores lanes (f32 bits) as f64s, exactly; with `STREAM`, non-temporally.
    ///
    /// # Safety
    /// `p` must be valid for writing `LANES` f64s, and aligned to a vector (`4 * LANES`
    /// bytes) if `STREAM`.
    unsafe fn store_f64<const STREAM: bool>(self, p: *mut f64, v: Self::V);
    /// Orders the non-temporal stores before whatever follows.
    fn fence(self);
    /// Asks for the cache line at `p` to be fetched (a hint: any address is harmless).
    fn prefetch<P>(self, p: *const P);
    /// Loads bytes, zero-extended.
    ///
    /// # Safety
    /// `p` must be valid for reading `LANES` bytes.
    unsafe fn load_u8(self, p: *const u8) -> Self::V;
    /// Loads 16-bit words, zero-extended.
    ///
    /// # Safety
    /// `p` must be valid for reading `LANES` words.
    unsafe fn load_u16(self, p: *const u16) -> Self::V;
    /// Stores four vectors of lanes (each below 256) as `4 * LANES` bytes; with `STREAM`,
    /// non-temporally.
    ///
    /// # Safety
    /// `p` must be valid for writing `4 * LANES` bytes, and aligned to a vector (`4 * LANES`
    /// bytes) if `STREAM`.
    unsafe fn store_u8x4<const STREAM: bool>(self, p: *mut u8, v: [Self::V; 4]);
    /// Stores four vectors of lanes (each below 65536) as `4 * LANES` words; with `STREAM`,
    /// non-temporally.
    ///
    /// # Safety
    /// `p` must be valid for writing `4 * LANES` words, and aligned to a vector (`4 * LANES`
    /// bytes) if `STREAM`.
    unsafe fn store_u16x4<const STREAM: bool>(self, p: *mut u16, v: [Self::V; 4]);

    /// Rounds four vectors of f32 lanes to f16 and stores them; an instruction set with a
    /// conversion instruction overrides this.
    ///
    /// # Safety
    /// As for [`Isa::store_u16x4`].
    #[inline(always)]
    unsafe fn store_f16x4<const STREAM: bool>(self, p: *mut u16, x: [Self::V; 4], saturate: bool) {
        const PLAN: NarrowPlan = NarrowPlan::of(&formats::F16);
        // SAFETY: the caller's guarantee is this method's.
        unsafe { self.store_u16x4::<STREAM>(p, narrow4(self, &PLAN, x, saturate)) }
    }
    /// Rounds four vectors of f32 lanes to bf16 and stores them; overridden where there is an
    /// instruction.
    ///
    /// # Safety
    /// As for [`Isa::store_u16x4`].
    #[inline(always)]
    unsafe fn store_bf16x4<const STREAM: bool>(self, p: *mut u16, x: [Self::V; 4], saturate: bool) {
        const PLAN: NarrowPlan = NarrowPlan::of(&formats::BF16);
        // SAFETY: the caller's guarantee is this method's.
        unsafe { self.store_u16x4::<STREAM>(p, narrow4(self, &PLAN, x, saturate)) }
    }
    /// Loads f16s and widens them to f32 bits; overridden where there is an instruction.
    ///
    /// # Safety
    /// `p` must be valid for reading `LANES` words.
    #[inline(always)]
    unsafe fn load_f16(self, p: *const u16) -> Self::V {
        const PLAN: WidenPlan = WidenPlan::of(&formats::F16);
        // SAFETY: the caller's guarantee is this method's.
        widen(self, &PLAN, unsafe { self.load_u16(p) })
    }
}

/// Rounds f32 lanes (bits) to nearest even into the plan's format; gives the codes.
///
/// Bit-identical to the scalar `round::from_f32_nearest`, lane by lane: each lane's
/// candidates (the magnitude rounded within the format's range as [`Method`] says, the
/// overflow code above it, the NaN code) are all computed and the lane's magnitude picks one;
/// then the sign goes on.
#[inline(always)]
pub(crate) fn narrow<I: Isa>(isa: I, plan: &NarrowPlan, x: I::V, saturate: bool) -> I::V {
    let s = |v| isa.splat(v);
    let abs = isa.and(x, s(0x7fff_ffff));
    let mut code = match plan.method {
        Method::TopHalf => return narrow_top_half(isa, plan, x, abs, saturate),
        Method::Float {
            emin_field,
            c_add,
            code_bias,
        } => {
            let c = isa.add(
                isa.max(isa.and(abs, s(0x7f80_0000)), s(emin_field)),
                s(c_add),
            );
            // `|x| + c` is rounded by the FPU onto the format's grid, and its bits above c's
            // count the format's quanta: the code, once the exponent is put back (see
            // `Method::Float`). Integer steps from there on: no f32 subnormal is ever made.
            let quanta = isa.sub(isa.add_f32(abs, c), c);
            isa.add(quanta, isa.sub(isa.shr(c, plan.shift), s(code_bias)))
        }
        Method::Integer => {
            let parity = if plan.parity {
                isa.and(isa.shr(abs, plan.shift), s(1))
            } else {
                s(1)
            };
            let sum = isa.add(isa.add(abs, s(plan.round_bias)), parity);
            let code = isa.sub(isa.shr(sum, plan.shift), s(plan.rebias));
            let below = isa.gt(s(plan.low), abs);
            match plan.below {
                Below::Nothing => code,
                Below::Subnormal { magic } => {
                    let sub = isa.sub(isa.add_f32(abs, s(magic)), s(magic));
                    isa.select(below, sub, code)
                }
                Below::Clamp { up_from } => {
                    let up = isa.gt(abs, s(up_from - 1));
                    isa.select(below, isa.select(up, s(1), s(0)), code)
                }
            }
        }
    };
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
        // `sign` is 0 or the sign bit, so subtracting it from the sign bit flips it.
        NanCode::OppositeZero => isa.sub(s(0x8000_0000 >> plan.sign_shift), sign),
    };
    if saturate || !plan.nan_is_overflow {
        code = isa.select(isa.gt(abs, s(0x7f80_0000)), nan, code);
    }
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

/// [`narrow`] for bf16, the top half of an f32: the integer trick on the whole word, sign
/// included (a carry out of the magnitude lands in the exponent, never in the sign).
#[inline(always)]
fn narrow_top_half<I: Isa>(isa: I, plan: &NarrowPlan, x: I::V, abs: I::V, saturate: bool) -> I::V {
    let s = |v| isa.splat(v);
    let parity = isa.and(isa.shr(x, 16), s(1));
    let mut code = isa.shr(isa.add(isa.add(x, s(0x7fff)), parity), 16);
    if saturate {
        let sign = isa.shr(isa.and(x, s(0x8000_0000)), 16);
        code = isa.select(
            isa.gt(abs, s(plan.overflow_after)),
            isa.or(sign, s(plan.max)),
            code,
        );
    }
    // NaN: the canonical one with the input's sign, payload dropped, as ml_dtypes has it.
    let nan = isa.or(isa.and(isa.shr(x, 16), s(0x8000)), s(0x7fc0));
    isa.select(isa.gt(abs, s(0x7f80_0000)), nan, code)
}

/// [`narrow`] on each of four vectors.
#[inline(always)]
pub(crate) fn narrow4<I: Isa>(
    isa: I,
    plan: &NarrowPlan,
    x: [I::V; 4],
    saturate: bool,
) -> [I::V; 4] {
    [
        narrow(isa, plan, x[0], saturate),
        narrow(isa, plan, x[1], saturate),
        narrow(isa, plan, x[2], saturate),
        narrow(isa, plan, x[3], saturate),
    ]
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
        Special::Ieee { infinity, payload } => {
            let quiet = isa.select(isa.gt(mag, s(infinity)), s(0x0040_0000), s(0));
            let special = if payload {
                let man = isa.shl(isa.and(mag, s(infinity ^ plan.magnitude_mask)), plan.shift);
                isa.or(s(0x7f80_0000), isa.or(man, quiet))
            } else {
                isa.or(s(0x7f80_0000), quiet)
            };
            let bits = isa.select(isa.gt(mag, s(infinity - 1)), special, bits);
            isa.or(sign, bits)
        }
        Special::AllOnes => {
            let nan = isa.eq(mag, s(plan.magnitude_mask));
            isa.or(sign, isa.select(nan, s(0x7fc0_0000), bits))
        }
        Special::NegativeZero => {
            let nan = isa.eq(b, s(plan.sign_mask));
            isa.select(nan, s(0xffc0_0000), isa.or(sign, bits))
        }
        Special::E8m0 => {
            let bits = isa.shl(b, 23);
            let bits = isa.select(isa.eq(b, s(0)), s(0x0040_0000), bits);
            isa.select(isa.eq(b, s(0xff)), s(0x7fc0_0000), bits)
        }
    }
}
