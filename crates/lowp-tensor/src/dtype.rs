//! Data types: what a tensor's elements are, and the key by which kernels are found.

use lowp::format::Format;
use std::fmt;

/// Generates [`DType`] from one list: variant, name, element type and storage size.
macro_rules! dtypes {
    ($( $(#[$doc:meta])* $variant:ident = $name:expr, $ty:ty, $bytes:expr; )*) => {
        /// The data type of a tensor's elements.
        ///
        /// Every number format of the `lowp` crate, plus the machine types a model needs beside
        /// them. The dtype is the key by which the [`crate::Registry`] finds the kernel
        /// specialised for it, as the float16 design doc asks.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum DType {
            $( $(#[$doc])* $variant, )*
        }

        impl DType {
            /// Every dtype, in the order tables list them: the lowp formats (as `lowp formats`
            /// lists them), then f32, f64, the integers and bool.
            pub const ALL: &'static [DType] = &[$(DType::$variant),*];

            /// The canonical name (`"f16"`, `"f8e4m3fn"`, `"i64"`, `"bool"`).
            pub const fn name(self) -> &'static str {
                match self { $(DType::$variant => $name,)* }
            }

            /// Bytes per element in a tensor's storage. FP6 and FP4 values take a byte each
            /// (their bits in the low end), as in the `lowp` crate; see [`DType::bits`].
            pub const fn size(self) -> usize {
                match self { $(DType::$variant => $bytes,)* }
            }
        }

        /// Calls `$m!(Variant, type)` for every dtype.
        macro_rules! for_each_dtype {
            ($m:ident) => { $( $m!($variant, $ty); )* };
        }
        pub(crate) use for_each_dtype;
    };
}

/// The machine dtype of a `compute` type of `lowp::for_each_format!`'s rows.
macro_rules! compute_dtype {
    (f32) => {
        DType::F32
    };
    (f64) => {
        DType::F64
    };
}

/// The dtypes: every lowp format (the rows of `lowp::for_each_format!`, in `lowp`'s order),
/// then the machine types.
macro_rules! lowp_and_machine_dtypes {
    ($(($t:ident, $variant:ident, $storage:ty, $compute:tt, $($rest:tt)*))*) => {
        impl DType {
            /// The type lowp's own arithmetic computes a format in (the `compute` column of
            /// `lowp::for_each_format!`: f32, or f64 for E8M0); `None` for the machine types.
            const fn format_compute(self) -> Option<DType> {
                match self {
                    $(DType::$variant => Some(compute_dtype!($compute)),)*
                    _ => None,
                }
            }
        }

        dtypes! {
            $(
                #[doc = concat!("The lowp format [`lowp::", stringify!($t), "`].")]
                $variant = stringify!($t), lowp::$t, ::core::mem::size_of::<$storage>();
            )*
            /// IEEE binary32.
            F32 = "f32", f32, 4;
            /// IEEE binary64.
            F64 = "f64", f64, 8;
            /// 8-bit signed integer.
            I8 = "i8", i8, 1;
            /// 32-bit signed integer.
            I32 = "i32", i32, 4;
            /// 64-bit signed integer.
            I64 = "i64", i64, 8;
            /// 8-bit unsigned integer.
            U8 = "u8", u8, 1;
            /// Boolean.
            Bool = "bool", bool, 1;
        }
    };
}

lowp::for_each_format!(lowp_and_machine_dtypes, list);

impl DType {
    /// The floating-point dtypes, in [`DType::ALL`]'s order.
    pub fn floats() -> impl Iterator<Item = DType> {
        DType::ALL.iter().copied().filter(|d| d.is_float())
    }

    /// The lowp format of this dtype, if it is one (`None` for f32, f64, integers and bool).
    pub fn format(self) -> Option<&'static Format> {
        lowp::format::formats::ALL
            .iter()
            .find(|f| f.name == self.name())
    }

    /// Whether the elements are floating-point numbers (a lowp format, f32 or f64).
    pub fn is_float(self) -> bool {
        self.format().is_some() || matches!(self, DType::F32 | DType::F64)
    }

    /// Whether the elements are integers (bool is not).
    pub fn is_int(self) -> bool {
        matches!(self, DType::I8 | DType::I32 | DType::I64 | DType::U8)
    }

    /// Significant storage bits per element: 6 for FP6, 4 for FP4, `8 * size` otherwise.
    pub fn bits(self) -> u32 {
        match self.format() {
            Some(f) => f.total_bits(),
            None if self == DType::Bool => 1,
            None => 8 * self.size() as u32,
        }
    }

    /// The type reductions accumulate in, PaddlePaddle's `MPTypeTrait`: f32 for every 16-, 8-, 6-
    /// and 4-bit float and for f32 itself, f64 for f64, i64 for the integers and bool (as NumPy
    /// sums them).
    pub fn accumulation(self) -> DType {
        match self {
            DType::F64 => DType::F64,
            d if d.is_float() => DType::F32,
            _ => DType::I64,
        }
    }

    /// The type element-wise math is evaluated in before rounding once to the output: the
    /// accumulation type f32 for the 16-bit and narrower formats, as mixed-precision kernels use,
    /// and f64 for f32 and f64, so that an f32 result is within one ulp too, and for E8M0, whose
    /// powers of two down to 2^-127 multiply out of f32's range (`None` for integers and bool,
    /// which have no element-wise math).
    pub fn compute(self) -> Option<DType> {
        match self {
            DType::F32 | DType::F64 => Some(DType::F64),
            d => d.format_compute(),
        }
    }

    /// The valid names, comma separated, for error messages.
    pub fn names() -> String {
        DType::ALL
            .iter()
            .map(|d| d.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl DType {
    /// The dtype of a name, ignoring case and underscores: the canonical names, ml_dtypes' and
    /// NumPy's (`float8_e4m3fn`, `bfloat16`, `float16`, `float32`, `int64`, `uint8`, ...) and
    /// `half`, `float`, `double`. [`str::parse`] gives the same with an error naming the
    /// valid names.
    ///
    /// ```
    /// use lowp_tensor::DType;
    /// assert_eq!(DType::from_name("bfloat16"), Some(DType::BF16));
    /// assert_eq!(DType::from_name("Float8_E4M3FN"), Some(DType::F8E4M3FN));
    /// assert_eq!(DType::from_name("int64"), Some(DType::I64));
    /// assert_eq!(DType::from_name("f7"), None);
    /// ```
    pub fn from_name(s: &str) -> Option<DType> {
        if let Some(f) = lowp::format::format_by_name(s) {
            return DType::ALL.iter().copied().find(|d| d.name() == f.name);
        }
        let key: String = s
            .chars()
            .filter(|&c| c != '_')
            .flat_map(char::to_lowercase)
            .collect();
        Some(match key.as_str() {
            "f32" | "float32" | "float" => DType::F32,
            "f64" | "float64" | "double" => DType::F64,
            "i8" | "int8" => DType::I8,
            "i32" | "int32" | "int" => DType::I32,
            "i64" | "int64" | "long" => DType::I64,
            "u8" | "uint8" => DType::U8,
            "bool" | "boolean" => DType::Bool,
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for &d in DType::ALL {
            assert_eq!(d.name().parse::<DType>().unwrap(), d);
            assert_eq!(d.name().to_uppercase().parse::<DType>().unwrap(), d);
        }
        // Every lowp format, then f32, f64, i8, i32, i64, u8 and bool.
        assert_eq!(DType::ALL.len(), lowp::Format::ALL.len() + 7);
    }

    #[test]
    fn the_formats_are_lowps_in_its_order() {
        let formats: Vec<&str> = DType::ALL
            .iter()
            .filter_map(|d| d.format())
            .map(|f| f.name)
            .collect();
        let lowp: Vec<&str> = lowp::format::formats::ALL.iter().map(|f| f.name).collect();
        assert_eq!(formats, lowp);
        assert_eq!(DType::floats().count(), lowp::Format::ALL.len() + 2);
    }

    #[test]
    fn accumulation_and_compute_types() {
        assert_eq!(DType::F16.accumulation(), DType::F32);
        for d in DType::floats().filter(|d| d.format().is_some()) {
            assert_eq!(d.accumulation(), DType::F32, "{d}");
            // E8M0's powers of two reach 2^-127: its products leave f32's range.
            let no_zero = d.format().is_some_and(|f| f.to_f64(0) != 0.0);
            let want = if no_zero { DType::F64 } else { DType::F32 };
            assert_eq!(d.compute(), Some(want), "{d}");
        }
        assert_eq!(DType::F32.accumulation(), DType::F32);
        assert_eq!(DType::F64.accumulation(), DType::F64);
        assert_eq!(DType::U8.accumulation(), DType::I64);
        assert_eq!(DType::BF16.compute(), Some(DType::F32));
        assert_eq!(DType::F32.compute(), Some(DType::F64));
        assert_eq!(DType::I32.compute(), None);
    }

    #[test]
    fn sizes_and_bits() {
        assert_eq!((DType::BF16.size(), DType::BF16.bits()), (2, 16));
        // FP6 and FP4 take a byte each, their significant bits fewer.
        let narrow: Vec<(usize, u32)> = DType::ALL
            .iter()
            .filter(|d| d.bits() < 8)
            .map(|d| (d.size(), d.bits()))
            .collect();
        assert_eq!(narrow, [(1, 6), (1, 6), (1, 4), (1, 1)]);
        assert_eq!((DType::I64.size(), DType::Bool.bits()), (8, 1));
    }
}
