//! `rkyv` support (rkyv 0.8): [`Archive`], [`Serialize`] and [`Deserialize`] for every type.
//!
//! A value archives as its storage integer: `Archived<lowp::f16>` is `Archived<u16>` (a
//! little-endian `u16` by default, as rkyv lays out integers) and the 8-bit types' is `u8`.
//! The bytes are exactly those of `half`'s archived `f16` and `bf16`, so an archive written
//! with one crate reads with the other. `half` derives a wrapper struct around the archived
//! `u16` (`Archivedf16` with the resolver `F16Resolver`) whose field is private, so it can only
//! be deserialized; here the archived integer can also be read in place, without
//! deserializing: `lowp::f16::from_bits(archived.to_native())`.
//!
//! Every bit pattern archives and reads back unchanged, NaN payloads, infinities and `-0`
//! included. FP6 and FP4 keep their bits in the low bits of a byte, the high bits zero; an
//! archive holds a whole byte, so deserializing one whose high bits are set (written by other
//! code, or corrupted) masks them off as `from_bits` does, keeping the invariant. Validation
//! (`rkyv::access`) accepts every byte, as for a `u8`.
//!
//! ```
//! use lowp::{f16, f4e2m1fn};
//! use rkyv::rancor::Error;
//!
//! let bytes = rkyv::to_bytes::<Error>(&f16::from_f32(-2.5)).unwrap();
//! let archived = rkyv::access::<rkyv::Archived<f16>, Error>(&bytes).unwrap();
//! assert_eq!(f16::from_bits(archived.to_native()), f16::from_f32(-2.5));
//! assert_eq!(rkyv::deserialize::<f16, Error>(archived).unwrap(), f16::from_f32(-2.5));
//!
//! let bytes = rkyv::to_bytes::<Error>(&0xf7u8).unwrap(); // high bits set
//! let archived = rkyv::access::<rkyv::Archived<f4e2m1fn>, Error>(&bytes).unwrap();
//! assert_eq!(rkyv::deserialize::<f4e2m1fn, Error>(archived).unwrap().to_bits(), 0x7);
//! ```

use rkyv::rancor::Fallible;
use rkyv::{Archive, Deserialize, Place, Serialize};

/// `rkyv::Archived<$storage>` spelled as the concrete type, which coherence needs for the
/// `Deserialize` impl on it (it cannot see through the projection).
macro_rules! archived {
    (u16) => {
        rkyv::primitive::ArchivedU16
    };
    (u8) => {
        u8
    };
}

macro_rules! impl_rkyv {
    ($t:ident, $variant:ident, $storage:tt, $compute:ty, $sign:ident, $values:ident, $width:ident) => {
        // The spelling above is the one rkyv uses.
        const _: fn(rkyv::Archived<$storage>) -> archived!($storage) = |a| a;

        impl Archive for crate::$t {
            /// The storage integer's archived form, the bytes `half` writes for its types.
            type Archived = archived!($storage);
            /// Nothing: the value is written in place.
            type Resolver = ();

            #[inline]
            fn resolve(&self, resolver: (), out: Place<Self::Archived>) {
                self.to_bits().resolve(resolver, out);
            }
        }

        impl<S: Fallible + ?Sized> Serialize<S> for crate::$t {
            #[inline]
            fn serialize(&self, serializer: &mut S) -> Result<(), S::Error> {
                self.to_bits().serialize(serializer)
            }
        }

        impl<D: Fallible + ?Sized> Deserialize<crate::$t, D> for archived!($storage) {
            /// The archived bits through `from_bits`: unchanged for the 16- and 8-bit types,
            /// high bits masked off for FP6 and FP4.
            #[inline]
            fn deserialize(&self, deserializer: &mut D) -> Result<crate::$t, D::Error> {
                let bits: $storage = Deserialize::<$storage, D>::deserialize(self, deserializer)?;
                Ok(crate::$t::from_bits(bits))
            }
        }
    };
}

crate::for_each_format!(impl_rkyv, rows);
