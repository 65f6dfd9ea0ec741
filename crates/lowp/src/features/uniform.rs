//! The uniform sampling model that the `rand` feature (rand 0.10) and the `rand_distr` feature
//! (rand 0.9) share, written once over a source of random `u64`s so that both versions of
//! rand give the same distributions, bit for bit from the same stream of words.
//!
//! # The model: a continuous uniform number, rounded once
//!
//! Every distribution here draws a real number `U` uniformly from an interval and rounds it
//! into the format with a directed rounding, so a value `v` comes out with probability
//! proportional to the length of the interval of reals that round to it: for rounding down
//! that is its *cell* `[v, v⁺)`, `v⁺` being the next larger value. Unlike rounding a random
//! f32 to nearest (what the `half` crate does), this never produces an excluded endpoint (1.0
//! for `[0, 1)`, `high` for `low..high`), and unlike picking uniformly among bit patterns it is
//! uniform in value.
//!
//! `U` is generated with full relative precision: its binary exponent comes from counting
//! leading zero bits of the random stream (the binade `[2^-e, 2^(1-e))` has probability
//! `2^-e` exactly) and its 52 significand bits from a fresh `u64`, with the lowest bit forced to
//! one so `U` never lies exactly on a value of a format (they have at most 24 bits of
//! precision); rounding that in either direction gives the same result as rounding the exact
//! real. So the probabilities of [`standard`], [`open`] and [`open_closed`] are exact down to
//! the smallest subnormal of every format (bf16's 2^-133 included), not limited to a grid of
//! `2^-24` like rand's `f32`. Each sample takes two `u64`s (more only with probability
//! `2^-64`, or when [`open`] rejects a zero).

use crate::LowpFloat;
use crate::round::{self, Rounding};

/// `2^k` as an f64, for `-1022 <= k <= 1023`.
const fn pow2(k: i32) -> f64 {
    crate::bits::f64_from_bits(((1023 + k) as u64) << 52)
}

/// A real `U` uniform in `(0, 1)`, as an f64 that rounds like `U` into any format of this crate:
/// the exponent is exact and the 52 fraction bits are truncated with a sticky lowest bit (round
/// to odd). `None` when `U < 2^min_exp`, without drawing the bits such a value would need.
fn unit(next_u64: &mut impl FnMut() -> u64, min_exp: i32) -> Option<f64> {
    // `U` lies in [2^-e, 2^(1-e)) when the random bit stream starts with e - 1 zeros and a one.
    let limit = 1 - min_exp; // e >= limit means U < 2^min_exp
    let mut e: i32 = 1;
    loop {
        let word = next_u64();
        if word != 0 {
            e += word.leading_zeros() as i32;
            break;
        }
        e += 64;
        if e >= limit {
            return None;
        }
    }
    if e >= limit {
        return None;
    }
    let fraction = (next_u64() >> 12) | 1;
    Some(f64::from_bits(((1023 - e) as u64) << 52 | fraction))
}

/// The smallest positive value of `T`.
pub(crate) fn smallest_positive<T: LowpFloat>() -> T {
    T::from_f64(pow2(T::FORMAT.min_quantum_exponent()))
}

/// A sample of `StandardUniform`: `U` in `[0, 1)` rounded toward zero. Where the format has no
/// zero (E8M0) the reals below its smallest value give that value.
pub(crate) fn standard<T: LowpFloat>(next_u64: &mut impl FnMut() -> u64) -> T {
    match unit(next_u64, T::FORMAT.min_quantum_exponent()) {
        Some(u) => T::from_f64_round(u, Rounding::TowardZero),
        // `U` is below the smallest positive value: zero, or that value where there is no zero.
        None if T::FORMAT.has_zero() => T::from_f64(0.0),
        None => smallest_positive(),
    }
}

/// A sample of `Open01`: `U` in `[m, 1)` rounded toward zero, `m` being the smallest positive
/// value; that is [`standard`] with its zeros drawn again, so neither 0 nor 1 comes out.
pub(crate) fn open<T: LowpFloat>(next_u64: &mut impl FnMut() -> u64) -> T {
    loop {
        if let Some(u) = unit(next_u64, T::FORMAT.min_quantum_exponent()) {
            return T::from_f64_round(u, Rounding::TowardZero);
        }
    }
}

/// A sample of `OpenClosed01`: `U` in `(0, 1]` rounded toward positive infinity.
pub(crate) fn open_closed<T: LowpFloat>(next_u64: &mut impl FnMut() -> u64) -> T {
    match unit(next_u64, T::FORMAT.min_quantum_exponent()) {
        Some(u) => T::from_f64_round(u, Rounding::TowardPositive),
        None => smallest_positive(),
    }
}

/// The exact f64 value of `bits` in `T`'s format (NaN for NaN).
fn value_of<T: LowpFloat>(bits: u32) -> f64 {
    round::to_f64_exact(round::decode(&T::FORMAT, bits))
}

/// The upper end of `x`'s cell, the next larger value of the format; above the largest finite
/// value, where the format has infinity, NaN or nothing, the value the next step would have with
/// an unbounded exponent, `x + ulp(x)`.
fn cell_end<T: LowpFloat>(x: T) -> f64 {
    let bits = x.to_bits_u32();
    let next = value_of::<T>(crate::classify::step(&T::FORMAT, bits, 1));
    let here = x.to_f64();
    if next.is_finite() && next > here {
        next
    } else {
        here + value_of::<T>(crate::classify::ulp(&T::FORMAT, bits))
    }
}

/// Why a range cannot be sampled; each rand version maps it to its own `uniform::Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RangeError {
    /// A bound is NaN or infinite.
    NonFinite,
    /// `low >= high` (`low > high` for an inclusive range).
    EmptyRange,
}

/// The `UniformSampler` of every type of this crate, for rand 0.10 (the `rand` feature) and
/// rand 0.9 (the `rand_distr` feature) alike: a real `U` uniform over the union of the cells of
/// the range's values, rounded down (toward negative infinity).
///
/// For `Uniform::new(low, high)` the reals are `[low, high)`, so `v` in `[low, high)` comes out
/// with probability `(v⁺ - v) / (high - low)`, `v⁺` the next larger value. For
/// `Uniform::new_inclusive(low, high)` they are `[low, high⁺)`: `high` gets its own cell too,
/// where `high⁺` is the next value above `high`, or `high + ulp(high)` when `high` is the
/// largest finite value. A zero result is always `+0`, never `-0`.
///
/// The reals are computed in f64 as `low + (high - low) * u`, so the cell boundaries are exact
/// to about `2^-52` of the range (cells narrower than that, far below the range's magnitude,
/// are merged into their neighbours); the rare sample that f64 rounding pushes outside the range
/// is drawn again.
///
/// Construction fails with `Error::NonFinite` if a bound is NaN or infinite and with
/// `Error::EmptyRange` if `low >= high` (`low > high` for inclusive ranges); `-0` and `+0`
/// compare equal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UniformLowp<T> {
    /// The smallest value the range allows.
    low: T,
    /// The upper bound, allowed only when `inclusive`.
    high: T,
    /// Whether `high` itself may be returned.
    inclusive: bool,
    /// `low` as an f64.
    start: f64,
    /// The length of the union of the cells.
    width: f64,
}

impl<T: LowpFloat> UniformLowp<T> {
    /// Checks the bounds and sets up the range `[low, high)`, or `[low, high]` when `inclusive`.
    pub(crate) fn build(low: T, high: T, inclusive: bool) -> Result<Self, RangeError> {
        if !low.to_f64().is_finite() || !high.to_f64().is_finite() {
            return Err(RangeError::NonFinite);
        }
        let ordered = if inclusive { low <= high } else { low < high };
        if !ordered {
            return Err(RangeError::EmptyRange);
        }
        let end = if inclusive {
            cell_end(high)
        } else {
            high.to_f64()
        };
        let start = low.to_f64();
        Ok(Self {
            low,
            high,
            inclusive,
            start,
            width: end - start,
        })
    }

    /// One value of the range, each with probability proportional to its cell.
    pub(crate) fn draw(&self, next_u64: &mut impl FnMut() -> u64) -> T {
        loop {
            // Below 2^-1000 the offset is far under the precision of `start + width * u`.
            let u = unit(next_u64, -1000).unwrap_or(0.0);
            let v = T::from_f64_round(self.start + self.width * u, Rounding::TowardNegative);
            let below_top = if self.inclusive {
                v <= self.high
            } else {
                v < self.high
            };
            if v >= self.low && below_top {
                return v;
            }
        }
    }
}

/// The traits of one version of rand (`[rand]` for 0.10, `[rand_09]` for 0.9), for every type
/// of the crate: `StandardUniform`, `Open01`, `OpenClosed01` and `SampleUniform`, with
/// [`UniformLowp`] as the sampler. Expanded by `for_each_format!(impl_rand_traits, list, rand)`.
macro_rules! impl_rand_traits {
    ([$rand:ident] $(($t:ident, $($rest:tt)*))*) => {
        impl From<$crate::features::uniform::RangeError> for $rand::distr::uniform::Error {
            fn from(e: $crate::features::uniform::RangeError) -> Self {
                match e {
                    $crate::features::uniform::RangeError::NonFinite => Self::NonFinite,
                    $crate::features::uniform::RangeError::EmptyRange => Self::EmptyRange,
                }
            }
        }

        impl<T: $crate::LowpFloat> $rand::distr::uniform::UniformSampler
            for $crate::features::uniform::UniformLowp<T>
        {
            type X = T;

            /// The half-open range `[low, high)`; see `UniformLowp`.
            fn new<B1, B2>(low: B1, high: B2) -> Result<Self, $rand::distr::uniform::Error>
            where
                B1: $rand::distr::uniform::SampleBorrow<T> + Sized,
                B2: $rand::distr::uniform::SampleBorrow<T> + Sized,
            {
                Ok(Self::build(*low.borrow(), *high.borrow(), false)?)
            }

            /// The closed range `[low, high]`; see `UniformLowp`.
            fn new_inclusive<B1, B2>(
                low: B1,
                high: B2,
            ) -> Result<Self, $rand::distr::uniform::Error>
            where
                B1: $rand::distr::uniform::SampleBorrow<T> + Sized,
                B2: $rand::distr::uniform::SampleBorrow<T> + Sized,
            {
                Ok(Self::build(*low.borrow(), *high.borrow(), true)?)
            }

            /// One value of the range, each with probability proportional to its cell.
            fn sample<R: $rand::Rng + ?Sized>(&self, rng: &mut R) -> T {
                self.draw(&mut || rng.next_u64())
            }
        }

        $(
        impl $rand::distr::Distribution<$crate::$t> for $rand::distr::StandardUniform {
            /// A real uniform in `[0, 1)` rounded toward zero: each value `v` in `[0, 1)` comes
            /// out with probability `v⁺ - v` (`v⁺` the next larger value, 1 after the largest),
            /// so 1.0 is never produced, the smallest subnormals are reachable with their exact
            /// probability and the mean is slightly below 1/2 (for `f4e2m1fn`, whose values
            /// below 1 are 0 and 0.5, it is 1/4). NaN, infinity and `-0` never occur. In
            /// `f8e8m0fnu`, which has no zero, `2^-k` has probability `2^-k` and the smallest
            /// value `2^-127` also takes the reals below it (probability `2^-126`). The same
            /// distribution, from the same random words, with rand 0.9 and rand 0.10.
            #[inline]
            fn sample<R: $rand::Rng + ?Sized>(&self, rng: &mut R) -> $crate::$t {
                $crate::features::uniform::standard(&mut || rng.next_u64())
            }
        }

        impl $rand::distr::Distribution<$crate::$t> for $rand::distr::Open01 {
            /// A real uniform in `[m, 1)` rounded toward zero, `m` the smallest positive value:
            /// `StandardUniform`'s distribution without zero, so neither 0 nor 1 comes out.
            /// Each value `v` in `(0, 1)` has probability `(v⁺ - v) / (1 - m)`. A narrow format
            /// has few values there: `f4e2m1fn` always gives 0.5.
            #[inline]
            fn sample<R: $rand::Rng + ?Sized>(&self, rng: &mut R) -> $crate::$t {
                $crate::features::uniform::open(&mut || rng.next_u64())
            }
        }

        impl $rand::distr::Distribution<$crate::$t> for $rand::distr::OpenClosed01 {
            /// A real uniform in `(0, 1]` rounded toward positive infinity: each value `v` in
            /// `(0, 1]` comes out with probability `v - v⁻` (`v⁻` the next smaller value, 0
            /// below the smallest positive value), so 1.0 is possible and zero is not.
            #[inline]
            fn sample<R: $rand::Rng + ?Sized>(&self, rng: &mut R) -> $crate::$t {
                $crate::features::uniform::open_closed(&mut || rng.next_u64())
            }
        }

        impl $rand::distr::uniform::SampleUniform for $crate::$t {
            /// Uniform ranges (`Uniform::new`, `Uniform::new_inclusive`, `rng.random_range`):
            /// a real uniform over the range rounded down, so a value `v` comes out with
            /// probability proportional to its cell `[v, v⁺)`, `v⁺` the next larger value. For
            /// `low..high` the reals are `[low, high)` and `high` never comes out; for
            /// `low..=high` they are `[low, high⁺)`, `high⁺` being `high + ulp(high)` when `high`
            /// is the largest finite value. Zero comes out as `+0`. Cell boundaries are exact to
            /// about `2^-52` of the range. Bounds that are NaN or infinite give
            /// `Error::NonFinite`; `low >= high` (`low > high` inclusive) gives
            /// `Error::EmptyRange`.
            type Sampler = $crate::features::uniform::UniformLowp<$crate::$t>;
        }
        )*
    };
}

pub(crate) use impl_rand_traits;
