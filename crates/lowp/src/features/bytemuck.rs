//! `bytemuck` support: [`Zeroable`] for every type, [`Pod`] for the 8- and 16-bit types.
//!
//! Every type is a `#[repr(transparent)]` newtype over a `u8` or `u16`, so its layout is the
//! integer's: no padding, the same size and alignment.
//!
//! * The 16-bit types ([`f16`](crate::f16), [`bf16`](crate::bf16)) and the 8-bit types (the
//!   FP8 formats and [`f8e8m0fnu`](crate::f8e8m0fnu)) give a meaning to every bit pattern of
//!   their storage, so they are [`Pod`]: slices of them can be cast to and from bytes and
//!   integers freely (`bytemuck::cast_slice::<u16, lowp::f16>` and back).
//! * The FP6 and FP4 types ([`f6e2m3fn`](crate::f6e2m3fn), [`f6e3m2fn`](crate::f6e3m2fn),
//!   [`f4e2m1fn`](crate::f4e2m1fn)) keep their 6 or 4 bits in the low bits of a byte, with the
//!   invariant that the high bits are zero (`from_bits` masks them; equality, hashing of the
//!   bits and `to_bits` rely on it). `Pod` would let `bytemuck::cast_slice::<u8, f4e2m1fn>` make
//!   values with high bits set, so these types are only [`Zeroable`]: build them from bytes with
//!   `from_bits`, which masks.
//!
//! `Pod` and `Zeroable` are `unsafe` traits; these impls are the crate's only `unsafe` code and
//! do no unsafe operation themselves: they assert the layout facts above, which the compile-time
//! checks below verify for every type.

use bytemuck::{Pod, Zeroable};

/// `Zeroable` and the layout check for one type.
macro_rules! impl_zeroable {
    ($t:ident, $bits:ty) => {
        // The layout the impls below rely on: exactly the storage integer's.
        const _: () = assert!(
            core::mem::size_of::<crate::$t>() == core::mem::size_of::<$bits>()
                && core::mem::align_of::<crate::$t>() == core::mem::align_of::<$bits>()
        );

        /// The all-zero pattern is a valid value: +0, except in
        /// [`f8e8m0fnu`](crate::f8e8m0fnu), which has no zero and where bits 0 are 2^-127, its
        /// smallest value.
        // SAFETY: the type is a `#[repr(transparent)]` newtype over an integer (checked above),
        // for which all zero bits is a valid value that also satisfies the high-bits-zero
        // invariant of the FP6 and FP4 types.
        #[allow(unsafe_code)]
        unsafe impl Zeroable for crate::$t {}
    };
}

/// `Pod` for a type that gives every pattern of its storage integer a meaning.
macro_rules! impl_pod {
    ($t:ident, $bits:ty) => {
        impl_zeroable!($t, $bits);
        const _: () = assert!(crate::$t::FORMAT.total_bits() == <$bits>::BITS);

        /// Every bit pattern of the storage integer is a value (possibly a NaN), so slices can
        /// be cast to and from bytes and integers with `bytemuck::cast_slice`.
        // SAFETY: `#[repr(transparent)]` over `$bits` (no padding, same size and alignment,
        // checked above), `Copy + 'static`, and the format uses all bits of its storage (checked
        // above), so every bit pattern is a valid value.
        #[allow(unsafe_code)]
        unsafe impl Pod for crate::$t {}
    };
}

/// `Pod` where every pattern of the storage integer is a value, only `Zeroable` for FP6 and
/// FP4, whose upper bits must stay zero.
macro_rules! impl_bytemuck {
    ($t:ident, $variant:ident, $storage:ty, $compute:ty, $sign:ident, $values:ident, all_bits) => {
        impl_pod!($t, $storage);
    };
    ($t:ident, $variant:ident, $storage:ty, $compute:ty, $sign:ident, $values:ident, low_bits) => {
        impl_zeroable!($t, $storage);
    };
}

crate::for_each_format!(impl_bytemuck, rows);
