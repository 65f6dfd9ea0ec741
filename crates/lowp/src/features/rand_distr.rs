//! `rand_distr` support (rand 0.9 and rand_distr 0.5, the versions the `half` crate supports):
//! what `half`'s `rand_distr` feature gives its `f16` and `bf16`, for the types of this crate.
//!
//! | trait | types | how |
//! |---|---|---|
//! | `Distribution<T>` for [`StandardUniform`], [`Open01`], [`OpenClosed01`] | every format | a real uniform in the interval, rounded once toward the included end (below) |
//! | `SampleUniform` (`Uniform::new`, `new_inclusive`, `rng.random_range`) | every format | the same, over the range |
//! | `Distribution<T>` for [`StandardNormal`] | all but `f8e8m0fnu` | rand_distr's f64 sample, rounded once to nearest |
//! | `Distribution<T>` for [`Exp1`] | every format | the same |
//! | `rand::distr::weighted::Weight` (for `WeightedIndex`) | all but `f8e8m0fnu` | the type's `+`; overflow is an error |
//!
//! `rand_distr::Normal<T>`, `Gamma<T>` and the other distributions generic over
//! `num_traits::Float` work for the types that implement `Float` (with the `num-traits`
//! feature: `f16`, `bf16`, `f8e5m2`, `f8e4m3`, `f8e3m4`), since they sample [`StandardNormal`],
//! [`Exp1`], [`Open01`] or [`StandardUniform`] in the type and compute in its arithmetic:
//!
//! ```
//! use lowp::f16;
//! use rand_09::{Rng, SeedableRng, rngs::StdRng};
//! use rand_distr::{Normal, StandardNormal, Uniform};
//!
//! let mut rng = StdRng::seed_from_u64(7);
//! let _: f16 = rng.sample(StandardNormal);
//! let x: f16 = rng.sample(Uniform::new(f16::from_f32(0.0), f16::from_f32(1.0)).unwrap());
//! assert!(x >= f16::ZERO && x < f16::ONE);
//! # #[cfg(feature = "num-traits")]
//! let _: f16 = rng.sample(Normal::new(f16::ZERO, f16::ONE).unwrap());
//! ```
//!
//! # The unit-interval distributions and `Uniform`: as the `rand` feature
//!
//! [`StandardUniform`] (`[0, 1)`, rounded toward zero), [`OpenClosed01`] (`(0, 1]`, rounded
//! up), [`Open01`] and the `Uniform` ranges are the `rand` feature's (rand 0.10) distributions,
//! from the same code (`features/uniform.rs`): a real number uniform in the interval, rounded
//! once with a directed rounding, so each value comes out with probability proportional to the
//! length of the reals that round to it, exactly down to the smallest subnormal, and an
//! excluded endpoint never comes out. [`Open01`] is `U` uniform in `[m, 1)`, `m` the smallest
//! positive value, rounded toward zero: [`StandardUniform`] with its zeros drawn again. In a
//! narrow format an open interval holds few values: the only value of `f4e2m1fn` in `(0, 1)`
//! is 0.5, so [`Open01`] always gives 0.5 there (and [`StandardUniform`] gives 0 and 0.5 with
//! probability 1/2 each). A zero result is `+0`; NaN and infinity never come out.
//!
//! `half` instead samples an `f32` and rounds it to nearest, which can land on the excluded
//! endpoint: its `f16` [`StandardUniform`] and [`Open01`] give 1.0 with probability `2^-12`, and
//! its `Uniform::new(a, b)` can give `b`. Rounding to nearest in FP4 would make a quarter of the
//! [`Open01`] samples 0 and another quarter 1; this crate's samples stay inside the interval.
//!
//! # [`StandardNormal`] and [`Exp1`]: rounded to nearest
//!
//! These have no endpoints, so the sample is rand_distr's `f64` rounded once to nearest, ties to
//! even (`from_f64`). `half` rounds rand_distr's `f32` sample, which is that `f64` rounded to
//! `f32` first; the results are the same except for the rare `f64` that lies just beside a tie
//! of the narrow format, which the double rounding can get wrong. The same random words are
//! consumed, so the same seed gives the same values in `lowp::f16` as in `half::f16`, those
//! cases aside.
//!
//! A sample beyond the format's largest value becomes what `from_f64` gives for overflow:
//! `±MAX` in FP6 and FP4 (which saturate; [`Exp1`] exceeds `f4e2m1fn`'s 6 with probability
//! `e^-7 ≈ 0.1%`, counting the reals that round to 6), infinity in `f8e3m4` (max 15.5; [`Exp1`]
//! reaches its overflow threshold 15.75 with probability `e^-15.75 ≈ 1.4e-7`), NaN in the
//! formats without infinity (where it would take a sample beyond 240, which rand_distr's f64
//! ziggurat does not produce). A negative zero comes out as the format has it (`+0` in the FNUZ
//! formats, which have no `-0`). [`Exp1`] in `f8e8m0fnu`, which has no zero, gives its
//! smallest value `2^-127` for the reals below it and for a sample of exactly 0 (which
//! `from_f64` would make NaN); [`StandardNormal`] is not implemented for `f8e8m0fnu`, which has
//! neither negative values nor zero.
//!
//! # `Weight`
//!
//! `rand::distr::weighted::Weight` is what `WeightedIndex<T>` needs to sum its
//! weights; it lives in rand's `weighted` module, which needs `alloc`, so it is implemented
//! with this crate's `alloc` feature (on with the default `std`). `ZERO` is `+0`, so
//! `f8e8m0fnu`, which has no zero, has no `Weight`. `checked_add_assign` is the type's `+`
//! (rounded once to nearest) and fails when the sum overflows: when it is infinite or NaN, or,
//! in FP6 and FP4, which saturate, when the saturated `±MAX` is more than half an ulp from the
//! true sum. `half` (like rand's `f32`) lets the sum become infinite, after which
//! `WeightedIndex::new` panics building its `Uniform`; here it returns `Error::Overflow`, and
//! in FP4 the weights `[6, 6]` are an overflow, not a total of 6 that would never pick the
//! second.
//!
//! [`StandardUniform`]: rand_09::distr::StandardUniform
//! [`Open01`]: rand_09::distr::Open01
//! [`OpenClosed01`]: rand_09::distr::OpenClosed01

use super::uniform::{self, impl_rand_traits};
use crate::LowpFloat;
use rand_09::Rng;
use rand_09::distr::Distribution;
use rand_distr::{Exp1, StandardNormal};

crate::for_each_format!(impl_rand_traits, list, rand_09);

/// An f64 sample of an unbounded distribution rounded once to nearest into `T`; 0 gives the
/// smallest value where `T` has no zero (E8M0), as the positive reals below it do.
fn nearest<T: LowpFloat>(x: f64) -> T {
    if x == 0.0 && !T::FORMAT.has_zero() {
        uniform::smallest_positive()
    } else {
        T::from_f64(x)
    }
}

/// The impls every type gets.
macro_rules! impl_rand_distr {
    ($t:ident, $variant:ident, $storage:ty, $compute:ty, $sign:ident, $values:ident, $width:ident) => {
        impl Distribution<crate::$t> for Exp1 {
            /// rand_distr's f64 sample rounded once to nearest (`from_f64`): `half`'s f32
            /// sample without its double rounding. Beyond the largest value it overflows as
            /// `from_f64` does (infinity in `f8e3m4` with probability `e^-15.75`, `MAX` in FP6
            /// and FP4); in `f8e8m0fnu` a zero sample gives the smallest value, `2^-127`.
            #[inline]
            fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> crate::$t {
                nearest(<Exp1 as Distribution<f64>>::sample(self, rng))
            }
        }

        impl_rand_distr!(@signed $t $sign);
    };
    (@signed $t:ident unsigned) => {};
    (@signed $t:ident signed) => {
        impl Distribution<crate::$t> for StandardNormal {
            /// rand_distr's f64 sample rounded once to nearest (`from_f64`): `half`'s f32
            /// sample without its double rounding. Beyond the largest value it overflows as
            /// `from_f64` does (`±MAX` in FP6 and FP4, which saturate); `-0` becomes `+0` in
            /// the FNUZ formats.
            #[inline]
            fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> crate::$t {
                nearest(<StandardNormal as Distribution<f64>>::sample(self, rng))
            }
        }

        impl rand_09::distr::weighted::Weight for crate::$t {
            /// `+0`.
            const ZERO: Self = crate::$t::ZERO;

            /// Adds `v` with the type's `+` (rounded once to nearest). Fails, leaving `self` to
            /// be discarded, when the sum overflows: when it is infinite or NaN, or when the
            /// value it saturated to (FP6, FP4) is more than half an ulp from the exact sum.
            fn checked_add_assign(&mut self, v: &Self) -> Result<(), ()> {
                let sum = *self + *v;
                let exact = self.to_f64() + v.to_f64();
                *self = sum;
                let nearest = (sum.to_f64() - exact).abs() <= sum.ulp().to_f64() / 2.0;
                if sum.is_finite() && nearest {
                    Ok(())
                } else {
                    Err(())
                }
            }
        }
    };
}

crate::for_each_format!(impl_rand_distr, rows);
