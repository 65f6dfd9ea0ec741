//! Classification, sign manipulation and stepping to neighbouring values.
//!
//! All of it works on the bits and the format description, so every method is `const`.

use crate::format::{Format, NanEncoding};
use core::num::FpCategory;

/// The value's position on the number line as a signed integer, for non-NaN bits: magnitude
/// bits, negated for negative values (so -0 and +0 are both 0).
pub(crate) const fn ordinal(fmt: &Format, bits: u32) -> i32 {
    let mag = (bits & fmt.magnitude_mask()) as i32;
    if fmt.is_sign_negative_bits(bits) {
        -mag
    } else {
        mag
    }
}

/// The bits at a position of [`ordinal`]; 0 becomes -0 when `negative_zero` and the format has it.
pub(crate) const fn from_ordinal(fmt: &Format, ord: i32, negative_zero: bool) -> u32 {
    if ord > 0 {
        ord as u32
    } else if ord < 0 {
        fmt.sign_mask() | (-ord) as u32
    } else if negative_zero && fmt.has_negative_zero() {
        fmt.sign_mask()
    } else {
        0
    }
}

/// The ordinal of the largest value (infinity where it exists).
const fn top_ordinal(fmt: &Format) -> i32 {
    match fmt.infinity_bits() {
        Some(inf) => inf as i32,
        None => fmt.max_finite_bits() as i32,
    }
}

/// The ordinal of the smallest value.
const fn bottom_ordinal(fmt: &Format) -> i32 {
    if fmt.signed { -top_ordinal(fmt) } else { 0 }
}

/// The bits one step from `bits` up (`step = 1`) or down (`step = -1`). NaN stays; stepping
/// past the largest or smallest value gives NaN, or the value itself in a format without NaN.
pub(crate) const fn step(fmt: &Format, bits: u32, step: i32) -> u32 {
    let ord = ordinal(fmt, bits);
    let outward = (ord > 0) == (step > 0);
    if fmt.is_nan_bits(bits) || (fmt.is_infinite_bits(bits) && outward) {
        return bits; // NaN, and infinity stepped away from zero, stay as they are
    }
    let next = ord + step;
    if next > top_ordinal(fmt) || next < bottom_ordinal(fmt) {
        return match fmt.nan_bits() {
            Some(nan) => nan,
            None => bits,
        };
    }
    // Stepping up onto zero comes from below: -0, as in IEEE nextUp(-MIN_POSITIVE_SUBNORMAL).
    from_ordinal(fmt, next, step > 0)
}

/// Whether the bits are a finite nonzero value with the zero exponent field of a format with
/// subnormals.
pub(crate) const fn is_subnormal(fmt: &Format, bits: u32) -> bool {
    let mag = bits & fmt.magnitude_mask();
    fmt.subnormals && mag != 0 && mag >> fmt.mantissa_bits == 0 && !fmt.is_nan_bits(bits)
}

/// Whether the bits are ±0.
pub(crate) const fn is_zero(fmt: &Format, bits: u32) -> bool {
    fmt.has_zero() && bits & fmt.magnitude_mask() == 0 && !fmt.is_nan_bits(bits)
}

/// The category of the bits.
pub(crate) const fn classify(fmt: &Format, bits: u32) -> FpCategory {
    if fmt.is_nan_bits(bits) {
        FpCategory::Nan
    } else if fmt.is_infinite_bits(bits) {
        FpCategory::Infinite
    } else if is_zero(fmt, bits) {
        FpCategory::Zero
    } else if is_subnormal(fmt, bits) {
        FpCategory::Subnormal
    } else {
        FpCategory::Normal
    }
}

/// `|x|`: the sign bit cleared, except that FNUZ's NaN (the negative-zero pattern) stays NaN.
pub(crate) const fn abs(fmt: &Format, bits: u32) -> u32 {
    if matches!(fmt.nan, NanEncoding::NegativeZero) && fmt.is_nan_bits(bits) {
        bits
    } else {
        bits & fmt.magnitude_mask()
    }
}

/// The magnitude of `bits` with the sign `negative`, keeping FNUZ's NaN a NaN and its zero +0.
pub(crate) const fn with_sign(fmt: &Format, bits: u32, negative: bool) -> u32 {
    if !fmt.signed || (matches!(fmt.nan, NanEncoding::NegativeZero) && fmt.is_nan_bits(bits)) {
        return bits;
    }
    let mag = bits & fmt.magnitude_mask();
    if negative && (mag != 0 || fmt.has_negative_zero()) {
        fmt.sign_mask() | mag
    } else {
        mag
    }
}

/// The quantum of a finite value: the weight of its last mantissa bit, `2^(max(e, emin) - m)`.
pub(crate) const fn ulp(fmt: &Format, bits: u32) -> u32 {
    if fmt.is_nan_bits(bits) || fmt.is_infinite_bits(bits) {
        return abs(fmt, bits);
    }
    let field = (bits & fmt.magnitude_mask()) >> fmt.mantissa_bits;
    let lowest_field = if fmt.subnormals { 1 } else { 0 };
    let field = if field > lowest_field {
        field
    } else {
        lowest_field
    };
    let exp = field as i32 - fmt.bias - fmt.mantissa_bits as i32;
    crate::types::exact_bits(fmt, false, 1, exp)
}

macro_rules! impl_classify {
    ($t:ident) => {
        impl crate::$t {
            /// Whether the value is NaN.
            #[inline]
            pub const fn is_nan(self) -> bool {
                Self::FORMAT.is_nan_bits(self.0 as u32)
            }

            /// Whether the value is ±infinity (never, for formats without infinities).
            #[inline]
            pub const fn is_infinite(self) -> bool {
                Self::FORMAT.is_infinite_bits(self.0 as u32)
            }

            /// CUDA's `__hisinf`: 1 for +infinity, -1 for -infinity, 0 otherwise.
            #[inline]
            pub const fn infinite_sign(self) -> i32 {
                if !self.is_infinite() {
                    0
                } else if self.is_sign_negative() {
                    -1
                } else {
                    1
                }
            }

            /// Whether the value is neither NaN nor infinite.
            #[inline]
            pub const fn is_finite(self) -> bool {
                !self.is_nan() && !self.is_infinite()
            }

            /// Whether the value is finite, nonzero and not subnormal.
            #[inline]
            pub const fn is_normal(self) -> bool {
                matches!(self.classify(), core::num::FpCategory::Normal)
            }

            /// Whether the value is subnormal.
            #[inline]
            pub const fn is_subnormal(self) -> bool {
                is_subnormal(&Self::FORMAT, self.0 as u32)
            }

            /// The floating-point category of the value.
            #[inline]
            pub const fn classify(self) -> core::num::FpCategory {
                classify(&Self::FORMAT, self.0 as u32)
            }

            /// Whether the sign bit is clear (always true for unsigned formats). Like Rust's
            /// `f32::is_sign_positive`, this looks at the bit, NaN included.
            #[inline]
            pub const fn is_sign_positive(self) -> bool {
                !self.is_sign_negative()
            }

            /// Whether the sign bit is set, -0 and NaNs with the bit set included. FNUZ's NaN
            /// is the negative-zero pattern, so it counts as negative here.
            #[inline]
            pub const fn is_sign_negative(self) -> bool {
                Self::FORMAT.is_sign_negative_bits(self.0 as u32)
            }

            /// 1 for positive values and +0, -1 for negative values and -0, NaN for NaN.
            #[inline]
            pub const fn signum(self) -> Self {
                if self.is_nan() {
                    self
                } else if self.is_sign_negative() {
                    Self(with_sign(&Self::FORMAT, Self::ONE.0 as u32, true) as _)
                } else {
                    Self::ONE
                }
            }

            /// The absolute value: the sign cleared (FNUZ's NaN stays NaN).
            #[inline]
            pub const fn abs(self) -> Self {
                Self(abs(&Self::FORMAT, self.0 as u32) as _)
            }

            /// The magnitude of `self` with the sign of `sign`. In FNUZ formats zero stays +0
            /// and NaN stays NaN; in unsigned formats the value is unchanged.
            #[inline]
            pub const fn copysign(self, sign: Self) -> Self {
                Self(with_sign(&Self::FORMAT, self.0 as u32, sign.is_sign_negative()) as _)
            }

            /// The least value greater than `self` (IEEE `nextUp`): the smallest subnormal from
            /// ±0, -0 from -MIN_POSITIVE_SUBNORMAL, infinity from MAX where the format has it.
            /// NaN and +inf are returned unchanged; where no greater value exists (MAX of a
            /// format without infinity) the result is NaN, or `self` in formats without NaN.
            #[inline]
            pub const fn next_up(self) -> Self {
                Self(step(&Self::FORMAT, self.0 as u32, 1) as _)
            }

            /// The greatest value less than `self` (IEEE `nextDown`); the mirror of
            /// [`Self::next_up`]: -inf stays -inf, and below the smallest value (-MAX, or
            /// 2^-127 in f8e8m0fnu) there is NaN, or `self` in formats without NaN.
            #[inline]
            pub const fn next_down(self) -> Self {
                Self(step(&Self::FORMAT, self.0 as u32, -1) as _)
            }

            /// The unit in the last place of `self`: the weight of its last mantissa bit,
            /// `2^(max(e, emin) - mantissa_bits)` for `|self|` in `[2^e, 2^(e+1))`, always
            /// representable. `ulp(0)` is the smallest subnormal; NaN gives NaN and ±infinity
            /// gives +infinity.
            #[inline]
            pub const fn ulp(self) -> Self {
                Self(ulp(&Self::FORMAT, self.0 as u32) as _)
            }
        }
    };
}

crate::for_each_format!(impl_classify);
