//! `arbitrary` support: [`Arbitrary`] for every type, for fuzzing.
//!
//! A value is made from the next bytes of the input as its storage integer, little-endian
//! (`u16::arbitrary`, `u8::arbitrary`), then `from_bits`: every bit pattern comes from exactly
//! one input, NaNs with every payload, infinities and `-0` included. This is what `half`
//! derives for its `f16`, so the same fuzzing input gives the same `f16` bits in both crates
//! (`half` 2.7.1 has no `Arbitrary` for `bf16`; here every type has it). FP6 and FP4 take one
//! byte and keep its low 6 or 4 bits (`from_bits` masks the rest), so each of their values
//! comes from 4 or 16 bytes and the high bits are never set. As for the integers, an input
//! that has run out gives zero bytes: the value with bits 0 (`+0`, `2^-127` in `f8e8m0fnu`).
//!
//! ```
//! use arbitrary::{Arbitrary, Unstructured};
//! use lowp::{f16, f4e2m1fn};
//!
//! let mut u = Unstructured::new(&[0x00, 0x7c, 0xf3]);
//! assert_eq!(f16::arbitrary(&mut u).unwrap(), f16::INFINITY);
//! assert_eq!(f4e2m1fn::arbitrary(&mut u).unwrap().to_bits(), 0x3);
//! ```

use arbitrary::{Arbitrary, Result, Unstructured};

macro_rules! impl_arbitrary {
    ($t:ident, $variant:ident, $storage:ty, $compute:ty, $sign:ident, $values:ident, $width:ident) => {
        impl<'a> Arbitrary<'a> for crate::$t {
            /// The next bytes as the storage integer, little-endian, through `from_bits` (FP6
            /// and FP4 keep the low bits of one byte).
            #[inline]
            fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
                Ok(crate::$t::from_bits(<$storage>::arbitrary(u)?))
            }

            /// The storage integer's size in bytes, exactly.
            #[inline]
            fn size_hint(depth: usize) -> (usize, Option<usize>) {
                <$storage>::size_hint(depth)
            }
        }
    };
}

crate::for_each_format!(impl_arbitrary, rows);
