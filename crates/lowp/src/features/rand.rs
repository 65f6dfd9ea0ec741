//! `rand` support (rand 0.10): [`StandardUniform`](rand::distr::StandardUniform),
//! [`Open01`](rand::distr::Open01) and [`OpenClosed01`](rand::distr::OpenClosed01) for every
//! type, and uniform ranges through [`SampleUniform`](rand::distr::uniform::SampleUniform)
//! (`Uniform::new(a, b)`, `rng.random_range(a..b)`).
//!
//! Each draws a real number uniformly and rounds it once with a directed rounding, so a value
//! comes out with probability proportional to its cell and an excluded endpoint never comes
//! out; the model, and why its probabilities are exact down to the smallest subnormal, is in
//! `features/uniform.rs`, which also writes the impls, once for this version of rand and once
//! for rand 0.9 (the `rand_distr` feature): both give the same distributions.

use super::uniform::impl_rand_traits;

crate::for_each_format!(impl_rand_traits, list, rand);
