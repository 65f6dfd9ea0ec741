//! Arithmetic: `+ - * / %` computed in f32 and rounded once into the format.
//!
//! # Why one f32 operation and one rounding is correctly rounded
//!
//! Let `F` be any format of this crate, with precision `p <= 11` bits, and `x, y` in `F`. We
//! claim that for `∘` in `{+, -, ×, ÷}`
//!
//! ```text
//! RN_F(RN_32(x ∘ y)) = RN_F(x ∘ y)
//! ```
//!
//! where `RN_32` is f32's round-to-nearest-even and `RN_F` the conversion into `F` (nearest
//! even, with `F`'s overflow rule). Writing `z = x ∘ y` for the exact result:
//!
//! 1. **Boundaries are f32 numbers.** `RN_F` is constant between consecutive *boundaries*: the
//!    midpoints between adjacent values of `F`, and the overflow threshold `MAX + ulp(MAX)/2`.
//!    Each has at most `p + 1 <= 12` significant bits and lies within f32's range (bf16's
//!    subnormal midpoints are multiples of 2^-134, which f32's subnormals, multiples of 2^-149,
//!    include), so each is exactly an f32.
//! 2. **Only landing on a boundary can hurt.** `RN_32` is monotone and fixes f32 numbers, so if
//!    `b1 < z < b2` for consecutive boundaries then `b1 <= RN_32(z) <= b2`, and `RN_F` can
//!    disagree only if `RN_32(z)` is `b1` or `b2` while `z` is not. If `z` is beyond f32's range
//!    it is beyond every `F`'s overflow threshold too, and `RN_F(±inf)` is the same overflow
//!    result as `RN_F(z)`.
//! 3. **`z` never rounds onto a boundary it is not.** Let `b` be a boundary with `z != b`, `e_b`
//!    its exponent, so `RN_32(z) = b` would need `|z - b| <= ulp_32(b)/2 = 2^(e_b - 24)` (when
//!    `b` is an f32 normal). Write values of `F` as integers times powers of two: `x = X·2^a`,
//!    `y = Y·2^d` with `a >= e_x - p + 1`, `d >= e_y - p + 1`, and `b = B·2^c` with
//!    `c >= e_b - p` (a midpoint has one bit more than the values it separates).
//!    * `+, -` (taking `|x| >= |y|`): if `e_y >= e_x - p - 1`, both operands are multiples of
//!      `2^(e_x - 2p)` and `|z| < 2^(e_x + 2)`, so `z` has at most `2p + 2 <= 24` significant
//!      bits: it *is* an f32, and `RN_32(z) = z`. This is where "f32 carries at least `2p + 2`
//!      bits" is needed. Otherwise `y`, a value of `F` below `2^(e_x - p - 1)`, is at most
//!      `2^(e_x - p - 1) - 2^(e_x - 2p - 1)`, and `z` lies within `|y|` of `x`. Every boundary
//!      is at least half an ulp, `2^(e_x - p)`, from `x`, except the midpoint just below a power
//!      of two `x`, a quarter ulp away with exponent `e_x - 1`. In the first case
//!      `|z - b| >= 2^(e_x - p - 1) > 2^(e_x + 1 - 24) >= ulp_32(b)/2`; in the second
//!      `|z - b| >= 2^(e_x - 2p - 1) > 2^(e_x - 1 - 24) = ulp_32(b)/2`.
//!    * `×`: `z = XY·2^(a+d)` has at most `2p <= 22` significant bits: an f32 when it is in
//!      f32's normal range. Below 2^-126, `z` is an f32 when `a + d >= -149`; otherwise
//!      `|z| < 2^(2p) · 2^-150 <= 2^-128` lies below half the smallest subnormal of every
//!      format except bf16, and for bf16 (`2p = 16`) below 2^-134, its smallest boundary, which
//!      `RN_32` can at most reach, and the tie at 2^-134 goes to the even neighbour 0, as `z`
//!      does.
//!    * `÷`: `x - b·y = X·2^a - BY·2^(c+d)` is a nonzero multiple of `2^m`, `m = min(a, c + d)`,
//!      so `|z - b| = |x - b·y| / |y| > 2^m / 2^(e_y + 1)`. If `m = c + d` this is at least
//!      `2^(e_b - 2p)`; if `m = a` it is at least `2^(e_x - e_y - p) >= 2^(e_b - 1 - p)`
//!      (since `z < 2^(e_x - e_y + 1)`). Both exceed `2^(e_b - 24)` as `2p <= 22`. When `b` is
//!      one of bf16's subnormal midpoints (below f32's normal range, where `ulp_32 = 2^-149`)
//!      the same bounds give `|z - b| > 2^-143 > 2^-150`, and a `z` below the smallest boundary behaves
//!      as in the product case.
//!
//! E8M0 is the exception: it has no zero, so a product or quotient that underflows f32 (its
//! range reaches 2^-254) would become NaN instead of the smallest value; it computes in f64,
//! which holds all of them, and the argument above goes through with 53 bits.
//!
//! `%` needs no argument: `fmod` is exact, and its result (`x - n·y`, smaller than `|y|`, a
//! multiple of the smaller quantum of `x` and `y`) is a value of `F`.
//!
//! The tests check the claim directly: every pair of every 8-bit-or-narrower format for all four
//! operations, and every `x` against a spread of `y` covering every exponent and sign for f16 and
//! bf16, each against an exact reference that rounds once from the exact result.

use core::iter::{Product, Sum};
use core::ops::{
    Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};

/// One operation in the format's arithmetic type (`$compute`), rounded once: f32, except for
/// E8M0, whose products and quotients (down to 2^-254) would underflow f32 to a zero it cannot
/// represent; it computes in f64, where the argument above holds with 53 bits to spare.
/// Written out in the operator itself, always inlined, so that an unoptimized build runs it
/// with no call (the conversions are inlined too).
macro_rules! binary_op {
    ($t:ident, $compute:ident, $trait:ident, $method:ident, $assign_trait:ident, $assign:ident, $op:tt, $what:literal) => {
        impl $trait for crate::$t {
            type Output = Self;
            #[doc = concat!("The ", $what, " computed in ", stringify!($compute), " and rounded \
                once to nearest even: correctly rounded (see the `arith` module docs). NaN, \
                infinities and overflow follow the format's rules for converting from f32.")]
            #[inline(always)]
            fn $method(self, rhs: Self) -> Self {
                binary_op!(@in $compute, self $op rhs)
            }
        }
        impl $trait<&crate::$t> for crate::$t {
            type Output = crate::$t;
            #[doc = concat!("The ", $what, "; see the by-value impl.")]
            #[inline]
            fn $method(self, rhs: &crate::$t) -> crate::$t {
                self $op *rhs
            }
        }
        impl $trait<crate::$t> for &crate::$t {
            type Output = crate::$t;
            #[doc = concat!("The ", $what, "; see the by-value impl.")]
            #[inline]
            fn $method(self, rhs: crate::$t) -> crate::$t {
                *self $op rhs
            }
        }
        impl $trait<&crate::$t> for &crate::$t {
            type Output = crate::$t;
            #[doc = concat!("The ", $what, "; see the by-value impl.")]
            #[inline]
            fn $method(self, rhs: &crate::$t) -> crate::$t {
                *self $op *rhs
            }
        }
        impl $assign_trait for crate::$t {
            #[doc = concat!("Replaces `self` with the ", $what, ", rounded once.")]
            #[inline]
            fn $assign(&mut self, rhs: Self) {
                *self = *self $op rhs;
            }
        }
        impl $assign_trait<&crate::$t> for crate::$t {
            #[doc = concat!("Replaces `self` with the ", $what, ", rounded once.")]
            #[inline]
            fn $assign(&mut self, rhs: &crate::$t) {
                *self = *self $op *rhs;
            }
        }
    };
    (@in f32, $x:ident $op:tt $y:ident) => {
        Self::from_f32($x.to_f32() $op $y.to_f32())
    };
    (@in f64, $x:ident $op:tt $y:ident) => {
        Self::from_f64($x.to_f64() $op $y.to_f64())
    };
}

macro_rules! impl_arith {
    ($t:ident, $variant:ident, $storage:ty, $compute:ident, $($rest:ident),*) => {
        binary_op!($t, $compute, Add, add, AddAssign, add_assign, +, "sum");
        binary_op!($t, $compute, Sub, sub, SubAssign, sub_assign, -, "difference");
        binary_op!($t, $compute, Mul, mul, MulAssign, mul_assign, *, "product");
        binary_op!($t, $compute, Div, div, DivAssign, div_assign, /, "quotient");
        binary_op!($t, $compute, Rem, rem, RemAssign, rem_assign, %,
            "remainder of truncated division (like `f32 % f32`, exact)");

        impl Sum for crate::$t {
            /// Sums in f32 and rounds once at the end, as the seeds' reductions do (the
            /// accumulation type of every format is f32). This is more accurate than adding in
            /// the format, and is not the same as folding with `+`. Like `f32`'s, an empty sum
            /// is -0 (+0 where the format has no -0, NaN in E8M0).
            fn sum<I: Iterator<Item = Self>>(iter: I) -> Self {
                Self::from_f32(iter.map(|x| x.to_f32()).sum())
            }
        }
        impl<'a> Sum<&'a crate::$t> for crate::$t {
            /// Sums in f32 and rounds once at the end (see the by-value impl).
            fn sum<I: Iterator<Item = &'a crate::$t>>(iter: I) -> Self {
                iter.copied().sum()
            }
        }
        impl Product for crate::$t {
            /// Multiplies in f32 and rounds once at the end.
            fn product<I: Iterator<Item = Self>>(iter: I) -> Self {
                Self::from_f32(iter.map(|x| x.to_f32()).product())
            }
        }
        impl<'a> Product<&'a crate::$t> for crate::$t {
            /// Multiplies in f32 and rounds once at the end.
            fn product<I: Iterator<Item = &'a crate::$t>>(iter: I) -> Self {
                iter.copied().product()
            }
        }
    };
}

crate::for_each_format!(impl_arith, rows);

/// Negation for the signed formats: E8M0 has no sign, so like the unsigned integers it has no
/// negation.
macro_rules! impl_neg {
    ($t:ident, $variant:ident, $storage:ty, $compute:ty, unsigned, $($rest:ident),*) => {};
    ($t:ident, $variant:ident, $storage:ty, $compute:ty, signed, $($rest:ident),*) => {
        impl Neg for crate::$t {
            type Output = Self;
            /// Flips the sign (exact). In FNUZ formats, zero and NaN are unchanged.
            #[inline]
            fn neg(self) -> Self {
                let negative = !self.is_sign_negative();
                Self(crate::classify::with_sign(&Self::FORMAT, self.0 as u32, negative) as _)
            }
        }
        impl Neg for &crate::$t {
            type Output = crate::$t;
            /// Flips the sign (exact).
            #[inline]
            fn neg(self) -> crate::$t {
                -*self
            }
        }
    };
}

crate::for_each_format!(impl_neg, rows);
