//! The Rust types behind the dtypes, and the precision each computes and accumulates in.
//!
//! [`Element`] ties a Rust type to its [`DType`] and gives the conversions every cast needs;
//! [`FloatElement`] adds the two associated types that make a kernel "know which precision it
//! computes and accumulates in": [`FloatElement::Compute`] (element-wise math) and
//! [`FloatElement::Acc`] (reductions, PaddlePaddle's `MPTypeTrait`). Kernels are written once,
//! generic over `T: FloatElement`, and registered for each dtype.

use crate::dtype::DType;
use crate::storage::Storage;
use lowp::LowpFloat;
use lowp::math::Function;
use lowp::prelude::*;
use std::fmt;
use std::ops::{Add, Div, Mul, Neg, Sub};

pub(crate) mod sealed {
    /// Only the dtypes' Rust types are elements.
    pub trait Sealed {}

    /// Seals the Rust type of one dtype.
    macro_rules! seal {
        ($variant:ident, $ty:ty) => {
            impl Sealed for $ty {}
        };
    }
    crate::dtype::for_each_dtype!(seal);
}

impl Storage {
    /// Element `i` as an f64 (see [`Element::to_f64`]), for display and tests; `None` past
    /// the end.
    pub fn get_f64(&self, i: usize) -> Option<f64> {
        crate::storage::with_vec!(self, v => v.get(i).map(|&x| Element::to_f64(x)))
    }
}

/// A Rust type that is the element type of one [`DType`].
pub trait Element:
    sealed::Sealed + Copy + Default + PartialEq + Send + Sync + fmt::Debug + fmt::Display + 'static
{
    /// The dtype of this element type.
    const DTYPE: DType;

    /// The elements of `storage`, if it holds this type.
    fn slice(storage: &Storage) -> Option<&[Self]>;
    /// Wraps a vector as storage.
    fn into_storage(data: Vec<Self>) -> Storage;

    /// The value as an f64: exact for every float and for integers up to 2^53 in magnitude;
    /// bool is 0 or 1.
    fn to_f64(self) -> f64;
    /// Rounds an f64 into this type: to nearest even for floats (overflow as the format
    /// has it), like Rust's `as` for integers (toward zero, saturating, NaN to 0), `x != 0`
    /// for bool.
    fn from_f64(x: f64) -> Self;
    /// The value as an i64, like Rust's `as`: floats truncate toward zero and saturate (NaN
    /// gives 0), bool gives 0 or 1.
    fn to_i64(self) -> i64;
    /// An i64 converted as a cast from an integer converts it: floats round once to nearest
    /// even (overflow as the format has it, or ±MAX when `saturate`), integers wrap like
    /// Rust's `as` (or clamp when `saturate`), bool is `v != 0`.
    fn from_i64(v: i64, saturate: bool) -> Self;
    /// C's truth value: `false` for zero, `true` for anything else (NaN included).
    fn to_bool(self) -> bool;
    /// 1 or 0 (E8M0, which has no zero, gives NaN for `false`).
    fn from_bool(b: bool) -> Self;
}

/// A floating-point element type, with the types its kernels compute and accumulate in.
///
/// # Panics
/// The slice conversions (`widen_*`, `narrow_*`, and [`Real::widen`] and [`Real::narrow`]
/// over them) convert `src` into a `dst` of the same length and panic otherwise, as
/// `copy_from_slice` does: a precondition of these primitives, which every kernel meets by
/// making `dst` from `src`'s length. The tensor API above them reports every length and shape
/// error as an [`Error`](crate::Error).
pub trait FloatElement: Element + PartialOrd {
    /// The type element-wise math is evaluated in, once per element, before the result is rounded
    /// once to `Self`: f32 for the lowp formats (the accumulation type, as mixed-precision kernels
    /// use), f64 for f32 and f64, and f64 for E8M0, whose values reach 2^-127 (an f32 subnormal) so
    /// that its products and quotients leave f32's range.
    type Compute: Real;
    /// The type reductions, norms and matrix products accumulate in: f32 for every lowp format
    /// and for f32, f64 for f64 (PaddlePaddle's `MPTypeTrait`).
    type Acc: Real;

    /// Widens to f32: exact for every type but f64 (which rounds to nearest even).
    fn widen_f32(src: &[Self], dst: &mut [f32]);
    /// Widens to f64, exactly.
    fn widen_f64(src: &[Self], dst: &mut [f64]);
    /// Rounds f32s to nearest even into `dst` (saturating overflow and ±inf to ±MAX when
    /// `saturate`), on the bulk conversion paths.
    fn narrow_f32(src: &[f32], dst: &mut [Self], saturate: bool);
    /// Rounds f64s to nearest even into `dst`, directly (no double rounding).
    fn narrow_f64(src: &[f64], dst: &mut [Self], saturate: bool);
    /// Whether the value is NaN.
    fn is_nan(self) -> bool;
    /// Whether the value is ±infinity.
    fn is_infinite(self) -> bool;
    /// `dst[i] = f(src[i])` correctly rounded, where this type has that path, and whether it
    /// has: the lowp formats do, by a table of `f` at each of their values, made once per
    /// process from lowp's correctly rounded scalar functions ([`Function::apply`]); f32 and
    /// f64 do not (their kernels evaluate in f64 and round once), and leave `dst` alone.
    fn apply_correctly_rounded(f: Function, src: &[Self], dst: &mut [Self]) -> bool {
        let _ = (f, src, dst);
        false
    }
    /// Whether the value is neither NaN nor infinite.
    fn is_finite(self) -> bool {
        !self.is_nan() && !self.is_infinite()
    }
    /// Whether [`FloatElement::widen_one`] is a few integer and float operations that
    /// vectorize (f16, bf16, and f32 and f64, which need none), so that a summing loop widens
    /// each element in registers; the other types are widened into a buffer on the bulk
    /// conversion paths first.
    const WIDENS_IN_REGISTERS: bool = false;
    /// The value in the accumulation type, exactly.
    fn widen_one(self) -> Self::Acc;
    /// The slice as its accumulation type, where this type is that type (f32 and f64), so
    /// that a kernel can read it without widening it into a copy first.
    fn as_acc(s: &[Self]) -> Option<&[Self::Acc]> {
        let _ = s;
        None
    }
    /// The slice as its accumulation type, where this type is that type (f32 and f64), so
    /// that a kernel can write it without rounding a copy into it.
    fn as_acc_mut(s: &mut [Self]) -> Option<&mut [Self::Acc]> {
        let _ = s;
        None
    }
}

/// bf16 bits as an f32: the same bits in the upper half. Exact for every pattern, NaN
/// payloads and signs included.
#[inline(always)]
pub fn bf16_bits_to_f32(bits: u16) -> f32 {
    f32::from_bits((bits as u32) << 16)
}

/// f16 bits as an f32, exactly, with integer and float operations that vectorize (no table,
/// no branch). The f16 exponent and mantissa, moved to f32's mantissa position, read as an f32
/// of `2^-112` times the f16 magnitude, for normals and subnormals alike (a subnormal's
/// pattern becomes an f32 subnormal with the same integer mantissa); multiplying by `2^112`
/// is exact. Infinity and NaN (exponent 31) take f32's all-ones exponent instead, with the
/// mantissa (a NaN's payload) kept and the NaN made quiet. The sign goes back on last, so -0
/// stays -0.
#[inline(always)]
pub fn f16_bits_to_f32(bits: u16) -> f32 {
    let bits = bits as u32;
    let magnitude = (bits & 0x7fff) << 13;
    let finite = f32::from_bits(magnitude) * f32::from_bits((112 + 127) << 23);
    // A signalling NaN comes out quiet, as from lowp's (and F16C's) conversion.
    let quiet = if bits & 0x3ff != 0 { 0x0040_0000 } else { 0 };
    let special = f32::from_bits(magnitude | 0x7f80_0000 | quiet);
    let value = if bits & 0x7c00 == 0x7c00 {
        special
    } else {
        finite
    };
    f32::from_bits(value.to_bits() | ((bits & 0x8000) << 16))
}

/// The two types kernels compute in, f32 and f64, with the math they need.
///
/// The functions are those of `f32`/`f64` (and `libm` for the inverse hyperbolics);
/// `maximum`/`minimum` propagate NaN as IEEE 754's operations of those names do.
pub trait Real:
    Copy
    + Default
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Send
    + Sync
    + fmt::Debug
    + 'static
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// Positive infinity.
    const INFINITY: Self;
    /// Unit roundoff, half the machine epsilon (2^-24 or 2^-53): the `u` of error bounds.
    const UNIT_ROUNDOFF: f64;
    /// The nearest value to an f64.
    fn of(x: f64) -> Self;
    /// The exact f64.
    fn f64(self) -> f64;
    /// Widens elements of `T` into this type (exact unless `T` is f64 and this is f32).
    fn widen<T: FloatElement>(src: &[T], dst: &mut [Self]);
    /// Rounds values of this type to `T`, once, to nearest even.
    fn narrow<T: FloatElement>(src: &[Self], dst: &mut [T], saturate: bool);
    /// Whether NaN.
    fn is_nan(self) -> bool;
    /// Whether the sign bit is set (-0 and negative NaNs included).
    fn is_sign_negative(self) -> bool;
    /// The slice as f32s, when this type is f32 (for kernels that only f32 has).
    fn as_f32s(s: &[Self]) -> Option<&[f32]>;
    /// The slice as f32s, when this type is f32.
    fn as_f32s_mut(s: &mut [Self]) -> Option<&mut [f32]>;
    /// The value as an f32, when this type is f32 (for kernels that only f32 has).
    fn as_f32(self) -> Option<f32>;
    /// The larger, NaN if either is NaN, +0 of ±0 (IEEE 754 `maximum`).
    fn maximum(self, other: Self) -> Self {
        if self.is_nan() || other < self {
            self
        } else if other.is_nan() || other > self || self.is_sign_negative() {
            other
        } else {
            self
        }
    }
    /// The smaller, NaN if either is NaN, -0 of ±0 (IEEE 754 `minimum`).
    fn minimum(self, other: Self) -> Self {
        if self.is_nan() || other > self {
            self
        } else if other.is_nan() || other < self || other.is_sign_negative() {
            other
        } else {
            self
        }
    }
    /// sin.
    fn sin(self) -> Self;
    /// cos.
    fn cos(self) -> Self;
    /// tan.
    fn tan(self) -> Self;
    /// asin.
    fn asin(self) -> Self;
    /// acos.
    fn acos(self) -> Self;
    /// atan.
    fn atan(self) -> Self;
    /// sinh.
    fn sinh(self) -> Self;
    /// cosh.
    fn cosh(self) -> Self;
    /// tanh.
    fn tanh(self) -> Self;
    /// asinh.
    fn asinh(self) -> Self;
    /// acosh.
    fn acosh(self) -> Self;
    /// atanh.
    fn atanh(self) -> Self;
    /// e^x.
    fn exp(self) -> Self;
    /// e^x - 1, accurate near 0.
    fn exp_m1(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Base-2 logarithm.
    fn log2(self) -> Self;
    /// Base-10 logarithm.
    fn log10(self) -> Self;
    /// ln(1 + x), accurate near 0.
    fn ln_1p(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Largest integer not above.
    fn floor(self) -> Self;
    /// Smallest integer not below.
    fn ceil(self) -> Self;
    /// Nearest integer, ties to even.
    fn round_ties_even(self) -> Self;
    /// Toward zero.
    fn trunc(self) -> Self;
    /// |x|.
    fn abs(self) -> Self;
    /// x^y.
    fn powf(self, y: Self) -> Self;
    /// `self * a + b` with one rounding.
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// `|self|` with the sign of `sign`.
    fn copysign(self, sign: Self) -> Self;
}

/// Implements [`Real`] for f32 or f64.
macro_rules! impl_real {
    (
        $t:ident, $u:expr, $asinh:path, $acosh:path, $atanh:path,
        $widen:ident, $narrow:ident, $is_f32:tt
    ) => {
        impl Real for $t {
            const ZERO: $t = 0.0;
            const ONE: $t = 1.0;
            const INFINITY: $t = $t::INFINITY;
            const UNIT_ROUNDOFF: f64 = $u;
            #[inline]
            fn of(x: f64) -> $t {
                x as $t
            }
            #[inline]
            fn f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn widen<T: FloatElement>(src: &[T], dst: &mut [$t]) {
                T::$widen(src, dst)
            }
            #[inline]
            fn narrow<T: FloatElement>(src: &[$t], dst: &mut [T], saturate: bool) {
                T::$narrow(src, dst, saturate)
            }
            #[inline]
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            #[inline]
            fn is_sign_negative(self) -> bool {
                $t::is_sign_negative(self)
            }
            #[inline]
            fn as_f32s(s: &[$t]) -> Option<&[f32]> {
                impl_real!(@f32s $is_f32, s)
            }
            #[inline]
            fn as_f32s_mut(s: &mut [$t]) -> Option<&mut [f32]> {
                impl_real!(@f32s $is_f32, s)
            }
            #[inline(always)]
            fn as_f32(self) -> Option<f32> {
                let x = self;
                impl_real!(@f32s $is_f32, x)
            }
            impl_real!(@unary $t: sin cos tan asin acos atan sinh cosh tanh
                exp exp_m1 ln log2 log10 ln_1p sqrt floor ceil round_ties_even trunc abs);
            // std's inverse hyperbolics overflow early (its acosh forms x + sqrt(x^2 - 1),
            // infinite for x above MAX / 2); libm's (from musl) do not.
            #[inline]
            fn asinh(self) -> $t {
                $asinh(self)
            }
            #[inline]
            fn acosh(self) -> $t {
                // libm's acoshf, from musl, picks its formula by |x| and returns a number
                // for x <= -2; the domain is x >= 1.
                if self < 1.0 { $t::NAN } else { $acosh(self) }
            }
            #[inline]
            fn atanh(self) -> $t {
                $atanh(self)
            }
            #[inline]
            fn powf(self, y: $t) -> $t {
                $t::powf(self, y)
            }
            #[inline]
            fn mul_add(self, a: $t, b: $t) -> $t {
                $t::mul_add(self, a, b)
            }
            #[inline]
            fn copysign(self, sign: $t) -> $t {
                $t::copysign(self, sign)
            }
        }
    };
    (@f32s true, $s:ident) => { Some($s) };
    (@f32s false, $s:ident) => {{ let _ = $s; None }};
    (@unary $t:ident: $($f:ident)*) => {
        $(
            #[inline]
            fn $f(self) -> $t {
                $t::$f(self)
            }
        )*
    };
}

impl_real!(
    f32,
    1.0 / 16777216.0,
    libm::asinhf,
    libm::acoshf,
    libm::atanhf,
    widen_f32,
    narrow_f32,
    true
);
impl_real!(
    f64,
    1.0 / 9007199254740992.0,
    libm::asinh,
    libm::acosh,
    libm::atanh,
    widen_f64,
    narrow_f64,
    false
);

/// The part of [`Element`] every dtype spells the same way: its `DType` and its `Storage`
/// variant.
macro_rules! storage_access {
    ($variant:ident, $t:ty) => {
        const DTYPE: DType = DType::$variant;
        fn slice(storage: &Storage) -> Option<&[$t]> {
            match storage {
                Storage::$variant(v) => Some(v),
                _ => None,
            }
        }
        fn into_storage(data: Vec<$t>) -> Storage {
            Storage::$variant(data)
        }
    };
}

/// Implements [`Element`] for an integer type.
macro_rules! impl_int_element {
    ($variant:ident, $t:ty) => {
        impl Element for $t {
            storage_access!($variant, $t);
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn from_f64(x: f64) -> $t {
                x as $t
            }
            #[inline]
            fn to_i64(self) -> i64 {
                self as i64
            }
            #[inline]
            fn from_i64(v: i64, saturate: bool) -> $t {
                if saturate {
                    v.clamp(<$t>::MIN as i64, <$t>::MAX as i64) as $t
                } else {
                    v as $t
                }
            }
            #[inline]
            fn to_bool(self) -> bool {
                self != 0
            }
            #[inline]
            fn from_bool(b: bool) -> $t {
                b as $t
            }
        }
    };
}

impl_int_element!(I8, i8);
impl_int_element!(I32, i32);
impl_int_element!(I64, i64);
impl_int_element!(U8, u8);

impl Element for bool {
    storage_access!(Bool, bool);
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    fn from_f64(x: f64) -> bool {
        x != 0.0
    }
    fn to_i64(self) -> i64 {
        self as i64
    }
    fn from_i64(v: i64, _saturate: bool) -> bool {
        v != 0
    }
    fn to_bool(self) -> bool {
        self
    }
    fn from_bool(b: bool) -> bool {
        b
    }
}

/// Implements [`Element`] and [`FloatElement`] for f32 or f64.
macro_rules! impl_machine_float {
    ($variant:ident, $t:ident, $compute:ty) => {
        impl Element for $t {
            storage_access!($variant, $t);
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn from_f64(x: f64) -> $t {
                x as $t
            }
            #[inline]
            fn to_i64(self) -> i64 {
                self as i64
            }
            #[inline]
            fn from_i64(v: i64, _saturate: bool) -> $t {
                // Rust's `as` rounds once, to nearest even; no i64 overflows f32 or f64.
                v as $t
            }
            #[inline]
            fn to_bool(self) -> bool {
                self != 0.0
            }
            #[inline]
            fn from_bool(b: bool) -> $t {
                b as u8 as $t
            }
        }

        impl FloatElement for $t {
            type Compute = $compute;
            type Acc = $t;
            const WIDENS_IN_REGISTERS: bool = true;
            #[inline(always)]
            fn widen_one(self) -> $t {
                self
            }
            #[inline(always)]
            fn as_acc(s: &[$t]) -> Option<&[$t]> {
                Some(s)
            }
            #[inline(always)]
            fn as_acc_mut(s: &mut [$t]) -> Option<&mut [$t]> {
                Some(s)
            }
            fn widen_f32(src: &[$t], dst: &mut [f32]) {
                lengths(dst.len(), src.len());
                for (d, &s) in dst.iter_mut().zip(src) {
                    *d = s as f32;
                }
            }
            fn widen_f64(src: &[$t], dst: &mut [f64]) {
                lengths(dst.len(), src.len());
                for (d, &s) in dst.iter_mut().zip(src) {
                    *d = s as f64;
                }
            }
            fn narrow_f32(src: &[f32], dst: &mut [$t], saturate: bool) {
                lengths(dst.len(), src.len());
                for (d, &s) in dst.iter_mut().zip(src) {
                    *d = saturate_machine(s as $t, saturate);
                }
            }
            fn narrow_f64(src: &[f64], dst: &mut [$t], saturate: bool) {
                lengths(dst.len(), src.len());
                for (d, &s) in dst.iter_mut().zip(src) {
                    *d = saturate_machine(s as $t, saturate);
                }
            }
            #[inline]
            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }
            #[inline]
            fn is_infinite(self) -> bool {
                $t::is_infinite(self)
            }
        }
    };
}

impl_machine_float!(F32, f32, f64);
impl_machine_float!(F64, f64, f64);

/// `x`, or ±MAX in place of ±infinity when saturating (OCP's "satfinite" for f32 and f64).
#[inline]
fn saturate_machine<F: Real + SaturateMachine>(x: F, saturate: bool) -> F {
    if saturate { x.clamp_infinity() } else { x }
}

/// The largest finite f32 or f64, for saturation.
trait SaturateMachine: Real {
    /// ±MAX for ±infinity, `self` otherwise.
    fn clamp_infinity(self) -> Self;
}

impl SaturateMachine for f32 {
    fn clamp_infinity(self) -> f32 {
        self.clamp(f32::MIN, f32::MAX)
    }
}

impl SaturateMachine for f64 {
    fn clamp_infinity(self) -> f64 {
        self.clamp(f64::MIN, f64::MAX)
    }
}

/// Panics unless the lengths match (a kernel bug, never user input).
#[inline]
#[track_caller]
fn lengths(dst: usize, src: usize) {
    assert_eq!(dst, src, "lowp-tensor: block lengths differ");
}

/// Whether a lowp format widens in registers (see [`FloatElement::WIDENS_IN_REGISTERS`]).
macro_rules! widens_in_registers {
    (f16) => {
        true
    };
    (bf16) => {
        true
    };
    ($other:ident) => {
        false
    };
}

/// [`FloatElement::widen_one`] of a lowp format: the vectorizable forms for f16 and bf16,
/// lowp's own conversion for the others.
macro_rules! widen_one {
    (f16, $x:expr) => {
        f16_bits_to_f32($x.to_bits())
    };
    (bf16, $x:expr) => {
        bf16_bits_to_f32($x.to_bits())
    };
    ($other:ident, $x:expr) => {
        $x.to_f32()
    };
}

/// Implements [`Element`] and [`FloatElement`] for a lowp format, forwarding to its own
/// conversions (the bulk paths for slices).
macro_rules! impl_lowp_element {
    ($variant:ident, $t:ident) => {
        impl_lowp_element!($variant, $t, f32);
    };
    ($variant:ident, $t:ident, $compute:ty) => {
        impl Element for lowp::$t {
            storage_access!($variant, lowp::$t);
            #[inline]
            fn to_f64(self) -> f64 {
                LowpFloat::to_f64(self)
            }
            #[inline]
            fn from_f64(x: f64) -> lowp::$t {
                LowpFloat::from_f64(x)
            }
            #[inline]
            fn to_i64(self) -> i64 {
                self.to_int::<i64>()
            }
            #[inline]
            fn from_i64(v: i64, saturate: bool) -> lowp::$t {
                let r = lowp::$t::from_int(v);
                if saturate && !r.is_finite() {
                    // An integer is never NaN, so a non-finite result is an overflow.
                    if v < 0 { lowp::$t::MIN } else { lowp::$t::MAX }
                } else {
                    r
                }
            }
            #[inline]
            fn to_bool(self) -> bool {
                lowp::$t::to_bool(self)
            }
            #[inline]
            fn from_bool(b: bool) -> lowp::$t {
                lowp::$t::from_bool(b)
            }
        }

        impl FloatElement for lowp::$t {
            type Compute = $compute;
            type Acc = f32;
            const WIDENS_IN_REGISTERS: bool = widens_in_registers!($t);
            #[inline(always)]
            fn widen_one(self) -> f32 {
                widen_one!($t, self)
            }
            fn widen_f32(src: &[lowp::$t], dst: &mut [f32]) {
                src.convert_to_f32_slice(dst);
            }
            fn widen_f64(src: &[lowp::$t], dst: &mut [f64]) {
                src.convert_to_f64_slice(dst);
            }
            fn narrow_f32(src: &[f32], dst: &mut [lowp::$t], saturate: bool) {
                if saturate {
                    dst.convert_from_f32_slice_saturating(src);
                } else {
                    dst.convert_from_f32_slice(src);
                }
            }
            fn narrow_f64(src: &[f64], dst: &mut [lowp::$t], saturate: bool) {
                if saturate {
                    dst.convert_from_f64_slice_saturating(src);
                } else {
                    dst.convert_from_f64_slice(src);
                }
            }
            #[inline]
            fn is_nan(self) -> bool {
                lowp::$t::is_nan(self)
            }
            #[inline]
            fn is_infinite(self) -> bool {
                lowp::$t::is_infinite(self)
            }
            fn apply_correctly_rounded(f: Function, src: &[Self], dst: &mut [Self]) -> bool {
                crate::function_table::map(f, src, dst);
                true
            }
        }
    };
}

/// [`impl_lowp_element!`] for a row of `lowp::for_each_format!`: each format computes in the
/// type lowp's own arithmetic uses for it (f32; f64 for E8M0).
macro_rules! impl_lowp_element_row {
    ($t:ident, $variant:ident, $storage:ty, $compute:ty, $($rest:tt)*) => {
        impl_lowp_element!($variant, $t, $compute);
    };
}

lowp::for_each_format!(impl_lowp_element_row, rows);

/// Calls `$m!(Variant, type)` for every floating-point dtype: the lowp formats, f32, f64
/// (through `float_rows!`, defined at the crate root so every module sees it).
macro_rules! for_each_float {
    ($m:ident) => {
        lowp::for_each_format!(float_rows, list, $m);
    };
}
pub(crate) use for_each_float;

/// Calls `$m!(Variant, type)` for every dtype that is not a float: the integers and bool.
macro_rules! for_each_int {
    ($m:ident) => {
        $m!(I8, i8);
        $m!(I32, i32);
        $m!(I64, i64);
        $m!(U8, u8);
        $m!(Bool, bool);
    };
}
pub(crate) use for_each_int;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widening_in_registers_is_lowps_widening_for_every_f16_and_bf16() {
        for bits in 0..=u16::MAX {
            let h = lowp::f16::from_bits(bits);
            let b = lowp::bf16::from_bits(bits);
            // Bit for bit against lowp's scalar conversions (the NaN payloads and signs too).
            assert_eq!(
                h.widen_one().to_bits(),
                h.to_f32().to_bits(),
                "f16 {bits:#06x}"
            );
            assert_eq!(
                b.widen_one().to_bits(),
                b.to_f32().to_bits(),
                "bf16 {bits:#06x}"
            );
        }
        const { assert!(<lowp::f16 as FloatElement>::WIDENS_IN_REGISTERS) };
        const { assert!(!<lowp::f8e4m3fn as FloatElement>::WIDENS_IN_REGISTERS) };
    }

    #[test]
    fn maximum_and_minimum_propagate_nan() {
        let (max32, min64) = (<f32 as Real>::maximum, <f64 as Real>::minimum);
        assert!(max32(f32::NAN, 1.0).is_nan());
        assert!(max32(1.0, f32::NAN).is_nan());
        assert!(min64(f64::NAN, 1.0).is_nan());
        assert!(min64(1.0, f64::NAN).is_nan());
        assert_eq!(max32(1.0, 2.0), 2.0);
        assert_eq!(max32(3.0, 2.0), 3.0);
        assert_eq!(min64(1.0, -2.0), -2.0);
        assert_eq!(min64(-3.0, 2.0), -3.0);
        assert!(!max32(-0.0, 0.0).is_sign_negative());
        assert!(!max32(0.0, -0.0).is_sign_negative());
        assert!(min64(-0.0, 0.0).is_sign_negative());
        assert!(min64(0.0, -0.0).is_sign_negative());
    }

    #[test]
    fn integer_casts_round_once_and_saturate_on_request() {
        // Just above the tie between 2^60 and 2^60 + 2^53 in bf16: through f64 it would be
        // the tie itself (the +1 is lost) and round to even, 2^60.
        let v = (1i64 << 60) + (1 << 52) + 1;
        let r = <lowp::bf16 as Element>::from_i64(v, false);
        assert_eq!(Element::to_f64(r), 2f64.powi(60) + 2f64.powi(53));
        assert!(<lowp::f16 as Element>::from_i64(70000, false).is_infinite());
        assert_eq!(
            <lowp::f16 as Element>::from_i64(-70000, true),
            lowp::f16::MIN
        );
        assert_eq!(
            <lowp::f8e4m3fn as Element>::from_i64(1000, true),
            lowp::f8e4m3fn::MAX
        );
        assert_eq!(<i8 as Element>::from_i64(200, false), -56);
        assert_eq!(<i8 as Element>::from_i64(200, true), 127);
        assert_eq!(<u8 as Element>::from_i64(-1, true), 0);
        assert_eq!(
            <lowp::f16 as Element>::to_i64(lowp::f16::from_f32(-2.75)),
            -2
        );
        assert_eq!(<f32 as Element>::to_i64(f32::NAN), 0);
    }

    #[test]
    fn machine_floats_saturate_only_on_request() {
        let mut out = [0f32; 3];
        f32::narrow_f64(&[1e300, -1e300, f64::NAN], &mut out, false);
        assert_eq!(out[..2], [f32::INFINITY, f32::NEG_INFINITY]);
        f32::narrow_f64(&[1e300, -f64::INFINITY, f64::NAN], &mut out, true);
        assert_eq!(out[..2], [f32::MAX, f32::MIN]);
        assert!(out[2].is_nan());
    }
}
