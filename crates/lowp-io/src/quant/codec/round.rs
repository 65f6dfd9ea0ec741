//! Quotients rounded to elements in bulk, and elements widened back: lowp's vector paths,
//! padded to whole vector blocks.

use super::options::ElementRounding;
use lowp::Rounding;
use lowp::bulk::random_bits;
use lowp::prelude::*;

/// lowp's vector paths convert blocks of 64 values (16 lanes unrolled 4 times, or fewer) and
/// take a tail shorter than that through a padded path that costs far more than the block
/// itself; bulk calls here are rounded up to whole blocks instead, the values past the real
/// ones being scratch.
pub(super) const PAD: usize = 64;

/// `n` rounded up to whole [`PAD`] blocks (at most [`SEG`](crate::quant::divisor::SEG) for `n <= SEG`).
#[inline]
pub(super) fn padded(n: usize) -> usize {
    n.next_multiple_of(PAD)
}

/// Rounds `buf[..n]` into `dst[..n]` (saturating): to nearest on lowp's bulk path, or
/// stochastically with the random bits of element `first + i`, as lowp's stochastic slice
/// conversions do. Both slices hold at least `padded(n)` values; past `n` they are scratch.
pub(super) fn round_f32<T: LowpFloat>(
    buf: &mut [f32],
    n: usize,
    dst: &mut [T],
    rounding: ElementRounding,
    first: u64,
) {
    match rounding {
        ElementRounding::Nearest => {
            let m = padded(n);
            buf[n..m].fill(0.0);
            dst[..m].convert_from_f32_slice_saturating(&buf[..m]);
        }
        ElementRounding::Stochastic { seed } => {
            for (i, (d, &x)) in dst[..n].iter_mut().zip(&buf[..n]).enumerate() {
                let bits = random_bits(seed, first.wrapping_add(i as u64));
                *d = T::from_f32_round_saturating(x, Rounding::Stochastic(bits));
            }
        }
    }
}

/// [`round_f32`] for f64s, rounded directly (no double rounding through f32).
pub(super) fn round_f64<T: LowpFloat>(
    buf: &mut [f64],
    n: usize,
    dst: &mut [T],
    rounding: ElementRounding,
    first: u64,
) {
    match rounding {
        ElementRounding::Nearest => {
            let m = padded(n);
            buf[n..m].fill(0.0);
            dst[..m].convert_from_f64_slice_saturating(&buf[..m]);
        }
        ElementRounding::Stochastic { seed } => {
            for (i, (d, &x)) in dst[..n].iter_mut().zip(&buf[..n]).enumerate() {
                let bits = random_bits(seed, first.wrapping_add(i as u64));
                *d = T::from_f64_round_saturating(x, Rounding::Stochastic(bits));
            }
        }
    }
}

/// Widens `elems[..n]` exactly into `q[..n]`; both hold at least `padded(n)` values.
pub(super) fn widen<T: LowpFloat>(elems: &[T], n: usize, q: &mut [f32]) {
    let m = padded(n);
    elems[..m].convert_to_f32_slice(&mut q[..m]);
}
