//! Implementations of other crates' traits, each behind the feature of the same name, except
//! zerocopy's, which are always there, as in `half`. serde's default form, the bits, is
//! `serde_bits`; the public [`crate::serde`] describes every form and holds the adapters.

#[cfg(feature = "arbitrary")]
mod arbitrary;
#[cfg(feature = "bytemuck")]
mod bytemuck;
#[cfg(feature = "half")]
mod half;
#[cfg(feature = "num-traits")]
mod num_traits;
#[cfg(feature = "rand")]
mod rand;
#[cfg(feature = "rand_distr")]
mod rand_distr;
#[cfg(feature = "rkyv")]
mod rkyv;
#[cfg(feature = "serde")]
mod serde_bits;
#[cfg(any(feature = "rand", feature = "rand_distr"))]
mod uniform;
mod zerocopy;
