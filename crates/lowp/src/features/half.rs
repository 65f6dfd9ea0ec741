//! `half` support: lossless `From` conversions between this crate's [`f16`](crate::f16) and
//! [`bf16`](crate::bf16) and the `half` crate's types of the same layout.
//!
//! Both crates store IEEE binary16 and bfloat16 as the raw 16 bits, so each conversion copies
//! the bits: it is exact for every one of the 65,536 patterns, NaN sign and payload and the
//! signalling/quiet bit included, and `From` in one direction is the inverse of the other.

macro_rules! impl_half {
    ($ours:ident, $theirs:ident) => {
        impl From<crate::$ours> for half::$theirs {
            /// Copies the bits: exact for every value, NaN payloads and -0 included.
            #[inline]
            fn from(x: crate::$ours) -> Self {
                half::$theirs::from_bits(x.0)
            }
        }

        impl From<half::$theirs> for crate::$ours {
            /// Copies the bits: exact for every value, NaN payloads and -0 included.
            #[inline]
            fn from(x: half::$theirs) -> Self {
                Self(x.to_bits())
            }
        }
    };
}

impl_half!(f16, f16);
impl_half!(bf16, bf16);
