//! `to_f16`, the `float8` crate's name for the exact widening to [`f16`](struct@crate::f16),
//! for every format whose values `f16` holds: the FP8 formats but E8M0, FP6 and FP4.
//!
//! It is the lossless `From<format> for f16` of `convert` under a method name, so that code
//! written for `float8` (`x.to_f16()`) compiles; it returns this crate's `f16`, not the `half`
//! crate's (with the `half` feature, `half::f16::from` converts that one by copying the bits).

/// Adds `to_f16` to the formats stored in a byte and computed in f32 (every FP8 format but
/// E8M0, FP6, FP4); the `const` item proves, per format, that the widening is one of the
/// lossless pairs, so a new format in this class that f16 cannot hold does not compile.
macro_rules! impl_to_f16 {
    ($t:ident, $variant:ident, u8, f32, $($rest:tt)*) => {
        const _: fn(crate::$t) -> crate::f16 = <crate::f16 as From<crate::$t>>::from;

        impl crate::$t {
            /// The same value as an [`f16`](struct@crate::f16), exactly: every value of this
            /// format is one of f16's, -0 and the infinities included; NaN gives f16's quiet
            /// NaN of the same sign (0x7E00 or 0xFE00). The same as `f16::from(self)`.
            ///
            /// The `float8` crate's `to_f16` returns the `half` crate's `f16` and gives every
            /// NaN as 0x7FFF (positive, all payload bits set).
            #[inline]
            pub const fn to_f16(self) -> crate::f16 {
                crate::f16::from_f32_const(self.to_f32_const())
            }
        }
    };
    ($($other:tt)*) => {};
}

crate::for_each_format!(impl_to_f16, rows);

#[cfg(test)]
mod tests {
    use core::sync::atomic::{AtomicU32, Ordering};

    /// How many patterns [`check_to_f16`] checked.
    static CHECKED: AtomicU32 = AtomicU32::new(0);

    /// Checks, for a format that has `to_f16` (the same rows as above), that it is `f16::from`
    /// on every bit pattern, NaNs included.
    macro_rules! check_to_f16 {
        ($t:ident, $variant:ident, u8, f32, $($rest:tt)*) => {
            for bits in 0..1u32 << crate::$t::FORMAT.total_bits() {
                let x = crate::$t::from_bits(bits as u8);
                let (got, want) = (x.to_f16(), crate::f16::from(x));
                let name = stringify!($t);
                assert_eq!(got.to_bits(), want.to_bits(), "{name} {bits:#x}");
                assert!(got.is_nan() == x.is_nan() && (got.to_f64() == x.to_f64() || x.is_nan()));
                CHECKED.fetch_add(1, Ordering::Relaxed);
            }
        };
        ($($other:tt)*) => {};
    }

    #[test]
    fn to_f16_is_the_lossless_from_on_every_bit_pattern() {
        crate::for_each_format!(check_to_f16, rows);
        // Six FP8 formats, two FP6 and one FP4.
        assert_eq!(CHECKED.load(Ordering::Relaxed), 6 * 256 + 2 * 64 + 16);
    }
}
