//! IEEE comparison, the total order, and min/max in both IEEE flavours.

use crate::classify::ordinal;
use crate::format::{Format, NanEncoding};
use core::cmp::Ordering;

/// A key whose integer order is the total order of `bits`: -NaN < -inf < ... < -0 < +0 < ... <
/// +inf < +NaN, NaNs ordered by payload as in IEEE 754 `totalOrder`; FNUZ's one NaN is greatest.
pub(crate) const fn total_key(fmt: &Format, bits: u32) -> i32 {
    if matches!(fmt.nan, NanEncoding::NegativeZero) && fmt.is_nan_bits(bits) {
        return i32::MAX;
    }
    let mag = (bits & fmt.magnitude_mask()) as i32;
    if fmt.is_sign_negative_bits(bits) {
        -mag - 1
    } else {
        mag
    }
}

/// IEEE comparison of two non-NaN values.
const fn ordered(fmt: &Format, a: u32, b: u32) -> Ordering {
    let (x, y) = (ordinal(fmt, a), ordinal(fmt, b));
    if x < y {
        Ordering::Less
    } else if x > y {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

macro_rules! impl_cmp {
    ($t:ident) => {
        impl PartialEq for crate::$t {
            /// IEEE equality: NaN equals nothing, -0 equals +0.
            #[inline]
            fn eq(&self, other: &Self) -> bool {
                !self.is_nan()
                    && !other.is_nan()
                    && ordinal(&Self::FORMAT, self.0 as u32)
                        == ordinal(&Self::FORMAT, other.0 as u32)
            }
        }

        impl PartialOrd for crate::$t {
            /// IEEE order: `None` when either side is NaN, -0 equal to +0.
            #[inline]
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                if self.is_nan() || other.is_nan() {
                    None
                } else {
                    Some(ordered(&Self::FORMAT, self.0 as u32, other.0 as u32))
                }
            }
        }

        impl crate::$t {
            /// The IEEE 754 total order: -NaN < -inf < negative values < -0 < +0 < positive
            /// values < +inf < +NaN (FNUZ's single NaN sorts last).
            #[inline]
            pub const fn total_cmp(&self, other: &Self) -> Ordering {
                let (a, b) = (
                    total_key(&Self::FORMAT, self.0 as u32),
                    total_key(&Self::FORMAT, other.0 as u32),
                );
                if a < b {
                    Ordering::Less
                } else if a > b {
                    Ordering::Greater
                } else {
                    Ordering::Equal
                }
            }

            /// The smaller of two values, ignoring NaN (IEEE `minNum`, like `f32::min`): if one
            /// side is NaN the other is returned.
            #[inline]
            pub fn min(self, other: Self) -> Self {
                if self.is_nan() || other < self {
                    other
                } else {
                    self
                }
            }

            /// The larger of two values, ignoring NaN (IEEE `maxNum`, like `f32::max`).
            #[inline]
            pub fn max(self, other: Self) -> Self {
                if self.is_nan() || other > self {
                    other
                } else {
                    self
                }
            }

            /// The smaller of two values, propagating NaN and ordering -0 below +0 (IEEE 754-2019
            /// `minimum`).
            #[inline]
            pub fn minimum(self, other: Self) -> Self {
                if self.is_nan() {
                    self
                } else if other.is_nan() || other.total_cmp(&self).is_lt() {
                    other
                } else {
                    self
                }
            }

            /// The larger of two values, propagating NaN and ordering -0 below +0 (IEEE 754-2019
            /// `maximum`).
            #[inline]
            pub fn maximum(self, other: Self) -> Self {
                if self.is_nan() {
                    self
                } else if other.is_nan() || other.total_cmp(&self).is_gt() {
                    other
                } else {
                    self
                }
            }

            /// `self` limited to `[min, max]`; NaN stays NaN. Unlike `f32::clamp` this never
            /// panics: when `min > max` or a bound is NaN there is no meaningful answer and the
            /// result is NaN (`self` in formats without NaN).
            #[inline]
            pub fn clamp(self, min: Self, max: Self) -> Self {
                if !matches!(
                    min.partial_cmp(&max),
                    Some(Ordering::Less | Ordering::Equal)
                ) {
                    return match Self::FORMAT.nan_bits() {
                        Some(nan) => Self(nan as _),
                        None => self,
                    };
                }
                if self < min {
                    min
                } else if self > max {
                    max
                } else {
                    self
                }
            }
        }
    };
}

crate::for_each_format!(impl_cmp);
