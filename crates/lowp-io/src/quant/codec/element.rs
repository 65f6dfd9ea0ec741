//! The element formats of the schemes, E4M3 and E2M1: overflow thresholds, byte layout, and
//! the encoding of a segment by the fastest exact route.

use super::options::ElementRounding;
use super::round::{padded, widen};
use super::source::{QuantSource, Scratch};
use crate::quant::divisor::{Divisor, SEG, pow2_f64};
use crate::quant::nearest_f32;
use lowp::bulk::{pack_f4, unpack_f4};
use lowp::prelude::*;
use lowp::{f4e2m1fn, f8e4m3fn};

/// An element format of the schemes: E4M3 or E2M1.
pub(super) trait Elem: LowpFloat {
    /// The exponent of the largest binade (`floor(log2(MAX))`), MX's `emax_elem`.
    const EMAX: i32;
    /// Whether a magnitude `a` divided by `step` (positive) overflows under rounding to
    /// nearest with an unbounded exponent. Compared as `a` against the threshold times `step`,
    /// a product exact in f64 (a threshold of at most 5 bits, a step of at most 28), so no
    /// quotient is rounded.
    fn overflows(a: f64, step: f64) -> bool;
    /// Whether a magnitude `a` divided by `step` (positive) lies beyond the top binade, at
    /// least `2^(EMAX + 1)` ([`QuantStats::saturated`](super::QuantStats::saturated)). The product is exact in f64 (a power
    /// of two times a step of at most 28 bits, within f64's range).
    #[inline(always)]
    fn beyond_top(a: f64, step: f64) -> bool {
        a >= pow2_f64(Self::EMAX + 1) * step
    }
    /// Writes the elements of one segment into its bytes of a data row (`out` holds exactly
    /// their bytes).
    fn store(elems: &[Self], out: &mut [u8]);
    /// The data bytes of `n` elements.
    fn bytes(n: usize) -> usize;
    /// The `elems.len()` elements stored in `bytes` (exactly their bytes).
    fn load(bytes: &[u8], elems: &mut [Self]);
    /// [`sealed::Sealed::encode`] to nearest for f32 sources by a route of [`nearest_f32`],
    /// with no f64 quotients, and what it wrote into `widened` besides (see [`encode`]);
    /// `None`, writing nothing, where it has no route for these divisors.
    fn nearest_from_f32(
        src: &[f32],
        divs: &[Divisor],
        block: usize,
        scratch: &mut Scratch,
        dst: &mut [Self],
        widened: &mut [f32],
    ) -> Option<Encoded>;
}

/// What [`encode`] wrote besides the elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Encoded {
    /// Nothing: the caller widens the elements if it needs them ([`widen`]).
    Elements,
    /// The elements widened, as [`widen`] gives them (a route that decodes them anyway).
    AndWidened,
}

/// [`sealed::Sealed::encode`] for element type `T`: by a route of [`nearest_f32`] where one
/// applies (f32 sources rounded to nearest under fp8-block's and nvfp4's scales), else by the
/// source type's own. `widened` (as long as `dst`) receives the elements widened to f32 where
/// the answer says so.
#[allow(clippy::too_many_arguments)] // as Sealed::encode
#[inline(always)]
pub(super) fn encode<S: QuantSource, T: Elem>(
    src: &[S],
    divs: &[Divisor],
    block: usize,
    rounding: ElementRounding,
    first: u64,
    scratch: &mut Scratch,
    dst: &mut [T],
    widened: &mut [f32],
) -> Encoded {
    if rounding == ElementRounding::Nearest
        && let Some(x) = S::as_f32s(src)
        && let Some(encoded) = T::nearest_from_f32(x, divs, block, scratch, dst, widened)
    {
        return encoded;
    }
    S::encode(src, divs, block, rounding, first, scratch, dst);
    Encoded::Elements
}

impl Elem for f8e4m3fn {
    const EMAX: i32 = 8;
    fn overflows(a: f64, step: f64) -> bool {
        // 448 = 1.110b * 2^8 has an even mantissa, so the tie 464 with the missing 480 rounds
        // down to it: only beyond 464 does saturation decide.
        a > 464.0 * step
    }
    fn store(elems: &[Self], out: &mut [u8]) {
        out.iter_mut()
            .zip(elems)
            .for_each(|(b, e)| *b = e.to_bits());
    }
    fn bytes(n: usize) -> usize {
        n
    }
    fn load(bytes: &[u8], elems: &mut [Self]) {
        elems.copy_from_slice(bytemuck::cast_slice(bytes));
    }
    #[inline(always)]
    fn nearest_from_f32(
        src: &[f32],
        divs: &[Divisor],
        block: usize,
        scratch: &mut Scratch,
        dst: &mut [Self],
        _: &mut [f32],
    ) -> Option<Encoded> {
        let padded = padded(src.len());
        nearest_f32::e4m3(src, divs, block, padded, &mut scratch.f32s, dst)
            .then_some(Encoded::Elements)
    }
}

impl Elem for f4e2m1fn {
    const EMAX: i32 = 2;
    fn overflows(a: f64, step: f64) -> bool {
        // 6 = 1.1b * 2^2 has an odd mantissa, so the tie 7 rounds up to the missing 8.
        a >= 7.0 * step
    }
    fn store(elems: &[Self], out: &mut [u8]) {
        pack_f4(elems, out);
    }
    fn bytes(n: usize) -> usize {
        n.div_ceil(2)
    }
    fn load(bytes: &[u8], elems: &mut [Self]) {
        unpack_f4(bytes, elems);
    }
    #[inline(always)]
    fn nearest_from_f32(
        src: &[f32],
        divs: &[Divisor],
        block: usize,
        scratch: &mut Scratch,
        dst: &mut [Self],
        widened: &mut [f32],
    ) -> Option<Encoded> {
        let padded = padded(src.len());
        let quotients = &mut scratch.f32s;
        nearest_f32::e2m1(src, divs, block, padded, quotients, dst, widened)
            .then_some(Encoded::AndWidened)
    }
}

/// A call's buffers: quotients, rounded elements, and the elements widened back; made once
/// per call of [`quantize`](super::quantize).
pub(super) struct Work<T> {
    pub(super) scratch: Scratch,
    pub(super) elems: [T; SEG],
    pub(super) q: [f32; SEG],
}

impl<T: Elem> Work<T> {
    pub(super) fn new() -> Work<T> {
        Work {
            scratch: Scratch::new(),
            elems: [T::default(); SEG],
            q: [0.0; SEG],
        }
    }

    /// Rounds `x` (blocks of `block` values under `divs`) to nearest and widens the elements
    /// back into `self.q[..x.len()]`.
    pub(super) fn trial<S: QuantSource>(&mut self, x: &[S], divs: &[Divisor], block: usize) {
        let encoded = encode(
            x,
            divs,
            block,
            ElementRounding::Nearest,
            0,
            &mut self.scratch,
            &mut self.elems,
            &mut self.q,
        );
        if encoded == Encoded::Elements {
            widen(&self.elems, x.len(), &mut self.q);
        }
    }
}
