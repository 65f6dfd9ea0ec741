//! `zerocopy` support: the traits `half` derives for its `f16` and `bf16`, for every type whose
//! bit patterns are all values, and the subset that stays sound for FP6 and FP4.
//!
//! | trait | types |
//! |---|---|
//! | [`IntoBytes`], [`Immutable`], [`KnownLayout`] | every format |
//! | [`FromBytes`] (and so `FromZeros` and `TryFromBytes`) | the 16- and 8-bit types: `f16`, `bf16`, the FP8 formats, `f8e8m0fnu` |
//!
//! Each type is a `#[repr(transparent)]` newtype over a `u16` or `u8`, so its bytes are the
//! integer's in the machine's byte order (`as_bytes` of an `f16` is `to_ne_bytes` of its bits),
//! as in `half`. The traits are derived on the types themselves (`types.rs`), zerocopy's
//! derives checking the layout at compile time; this module checks that each type got what
//! the table above says.
//!
//! * [`FromBytes`]: every pattern of the storage integer is a value of the 16- and 8-bit
//!   types, so any bytes can be read as them: a NaN, an infinity and `-0` are values like any
//!   other and keep their exact bits (`read_from_bytes`, `ref_from_bytes` on a slice of the
//!   right length, `FromZeros::new_zeroed`, which is `+0`, or `2^-127` in `f8e8m0fnu`, which
//!   has no zero).
//! * FP6 and FP4 ([`f6e2m3fn`](crate::f6e2m3fn), [`f6e3m2fn`](crate::f6e3m2fn),
//!   [`f4e2m1fn`](crate::f4e2m1fn)) keep their 6 or 4 bits in the low bits of a byte, with the
//!   invariant that the high bits are zero (`from_bits` masks them; equality and `to_bits` rely
//!   on it). Reading them from arbitrary bytes would make values with high bits set, so they
//!   have no [`FromBytes`], no `FromZeros` (which needs `TryFromBytes`) and no `TryFromBytes`:
//!   zerocopy's derive can only check the validity of the `u8` field, which accepts every byte,
//!   and a hand-written validity check is not allowed (zerocopy reserves the trait to its
//!   derive). Build them from bytes with `from_bits`, which masks. They do have [`IntoBytes`]
//!   (viewing them as bytes is always sound; `as_mut_bytes` needs [`FromBytes`], so it is not
//!   offered), [`Immutable`] and [`KnownLayout`].
//!
//! ```
//! use lowp::{f16, f4e2m1fn};
//! use zerocopy::{FromBytes, IntoBytes};
//!
//! let x = f16::read_from_bytes(&0x7e01u16.to_ne_bytes()).unwrap(); // a NaN with a payload
//! assert_eq!(x.to_bits(), 0x7e01);
//! assert_eq!(x.as_bytes(), 0x7e01u16.to_ne_bytes());
//! let fp4 = [f4e2m1fn::from_bits(0x7), f4e2m1fn::from_bits(0xff)];
//! assert_eq!(fp4.as_bytes(), [0x7, 0xf]);
//! ```

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// Compiles only for a type with every trait of the table's first two rows. (Used only in
/// `const _` items, which Rust before 1.83 does not count as a use.)
#[allow(dead_code)]
const fn all_traits<T: FromBytes + IntoBytes + Immutable + KnownLayout>() {}

/// Compiles only for a type with the traits of the table's first row.
#[allow(dead_code)]
const fn byte_view_traits<T: IntoBytes + Immutable + KnownLayout>() {}

/// Checks one type against the table, by its row of `for_each_format!`: `all_bits` types use
/// every bit of their storage and have `FromBytes`, `low_bits` types do not use them all.
macro_rules! check_zerocopy {
    ($t:ident, $variant:ident, $storage:ty, $compute:ty, $sign:ident, $values:ident, all_bits) => {
        const _: () = all_traits::<crate::$t>();
        const _: () = assert!(crate::$t::FORMAT.total_bits() == <$storage>::BITS);
    };
    ($t:ident, $variant:ident, $storage:ty, $compute:ty, $sign:ident, $values:ident, low_bits) => {
        const _: () = byte_view_traits::<crate::$t>();
        const _: () = assert!(crate::$t::FORMAT.total_bits() < <$storage>::BITS);
    };
}

crate::for_each_format!(check_zerocopy, rows);
