//! The element types `lowp convert` reads and writes: f64, f32 and the lowp formats whose row
//! of lowp's format table says safetensors holds them and lowp-io writes them
//! ([`lowp::format::SafetensorsDtype`]). Nothing here lists formats: the types, their names,
//! sizes and safetensors dtypes are read off lowp's [`Format`]s.

use crate::error::Error;
use lowp::Format;
use std::fmt;

/// A floating-point element type that `lowp convert` reads and writes: f64, f32 and the lowp
/// formats lowp-io writes in safetensors files (`FloatType::F16`, `BF16`, `F8E4M3FN`,
/// `F8E5M2`; NumPy names the first three).
///
/// Each lowp format has a constant named after its row of `lowp::for_each_format!`; naming a
/// format lowp-io does not write (`FloatType::F8E4M3FNUZ`) fails to compile.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FloatType(Kind);

/// What a [`FloatType`] is: one of Rust's floats or a lowp format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// IEEE binary64 (`F64`, `<f8`).
    F64,
    /// IEEE binary32 (`F32`, `<f4`).
    F32,
    /// A lowp format that lowp-io writes.
    Lowp(Format),
}

/// Whether lowp-io writes tensors of `format` ([`lowp::format::SafetensorsDtype::written`]);
/// fails to compile where the table marks a format written that does not fill its bytes.
const fn writes(format: &Format) -> bool {
    match format.safetensors {
        Some(dtype) if dtype.written => {
            assert!(
                format.total_bits().is_multiple_of(8),
                "a written safetensors dtype fills its bytes"
            );
            true
        }
        _ => false,
    }
}

/// How many lowp formats lowp-io writes.
const WRITTEN: usize = {
    let mut n = 0;
    let mut i = 0;
    while i < Format::ALL.len() {
        if writes(&Format::ALL[i]) {
            n += 1;
        }
        i += 1;
    }
    n
};

impl FloatType {
    /// IEEE binary64 (`F64`, `<f8`).
    pub const F64: FloatType = FloatType(Kind::F64);
    /// IEEE binary32 (`F32`, `<f4`).
    pub const F32: FloatType = FloatType(Kind::F32);

    /// Every type, widest first: f64, f32, then the lowp formats in lowp's order.
    pub const ALL: [FloatType; 2 + WRITTEN] = {
        let mut all = [FloatType::F64; 2 + WRITTEN];
        all[1] = FloatType::F32;
        let mut n = 2;
        let mut i = 0;
        while i < Format::ALL.len() {
            if writes(&Format::ALL[i]) {
                all[n] = FloatType(Kind::Lowp(Format::ALL[i]));
                n += 1;
            }
            i += 1;
        }
        all
    };

    /// The type of a lowp format; a compile error in a constant (a run-time panic elsewhere)
    /// where lowp-io does not write the format.
    const fn of_written(format: Format) -> FloatType {
        assert!(writes(&format), "lowp-io does not write this format");
        FloatType(Kind::Lowp(format))
    }

    /// What the type is.
    pub(crate) fn kind(self) -> Kind {
        self.0
    }

    /// The lowp format, for the lowp types (`None` for f32 and f64).
    pub fn format(self) -> Option<Format> {
        match self.0 {
            Kind::Lowp(format) => Some(format),
            Kind::F64 | Kind::F32 => None,
        }
    }

    /// The name on the command line and in reports (lowp's format names, `f32`, `f64`).
    pub fn name(self) -> &'static str {
        match self.0 {
            Kind::F64 => "f64",
            Kind::F32 => "f32",
            Kind::Lowp(format) => format.name,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self.0 {
            Kind::F64 => 8,
            Kind::F32 => 4,
            Kind::Lowp(format) => format.storage_bytes(),
        }
    }

    /// Whether this is one of the FP8 formats (the ones `--fp8-scale` applies to).
    pub fn is_fp8(self) -> bool {
        matches!(self.0, Kind::Lowp(format) if format.total_bits() == 8)
    }

    /// The safetensors dtype.
    pub fn to_safetensors(self) -> safetensors::Dtype {
        use safetensors::Dtype;
        use serde::Deserialize;
        use serde::de::IntoDeserializer;
        match self.0 {
            Kind::F64 => Dtype::F64,
            Kind::F32 => Dtype::F32,
            Kind::Lowp(format) => {
                let name = format.safetensors.map_or("", |d| d.name);
                let text: serde::de::value::StrDeserializer<'_, serde::de::value::Error> =
                    name.into_deserializer();
                // lowp's table spells safetensors' names; a test reads each one back.
                Dtype::deserialize(text).expect("lowp's table names a safetensors dtype")
            }
        }
    }

    /// The type of a safetensors dtype, if it is one of ours.
    pub fn from_safetensors(dtype: safetensors::Dtype) -> Option<FloatType> {
        FloatType::ALL
            .into_iter()
            .find(|t| t.to_safetensors() == dtype)
    }

    /// The type of a NumPy float of `size` bytes (`f2`, `f4`, `f8`).
    pub fn from_numpy_size(size: u64) -> Option<FloatType> {
        match size {
            2 => Some(FloatType::F16),
            4 => Some(FloatType::F32),
            8 => Some(FloatType::F64),
            _ => None,
        }
    }

    /// Whether NumPy has a dtype for this type (bf16 and FP8 come from ml_dtypes, which `.npy`
    /// files cannot name: NumPy saves them as raw `V2`/`V1` bytes).
    pub fn in_numpy(self) -> bool {
        matches!(self, FloatType::F64 | FloatType::F32 | FloatType::F16)
    }

    /// The unit roundoff: the largest relative error of rounding to nearest within the normal
    /// range (half the distance from 1 to the next value).
    pub fn unit_roundoff(self) -> f64 {
        match self.0 {
            Kind::F64 => f64::EPSILON / 2.0,
            Kind::F32 => f64::from(f32::EPSILON) / 2.0,
            Kind::Lowp(format) => format.epsilon() / 2.0,
        }
    }

    /// Parses `--to`: lowp's names and aliases (`bf16`, `bfloat16`, `float8_e4m3fn`, ...),
    /// `f32`/`float32`, `f64`/`float64`, and the safetensors dtype names (`F8_E4M3`).
    pub fn parse(text: &str) -> Result<FloatType, Error> {
        let lower = text.trim().to_ascii_lowercase();
        let by_lowp = lowp::format::format_by_name(&lower).map(|f| f.name);
        let found = FloatType::ALL.into_iter().find(|t| {
            Some(t.name()) == by_lowp
                || lower == t.name()
                || lower == t.to_safetensors().to_string().to_ascii_lowercase()
                || (lower == "float32" && *t == FloatType::F32)
                || (lower == "float64" && *t == FloatType::F64)
        });
        found.ok_or_else(|| {
            let names: Vec<&str> = FloatType::ALL.iter().map(|t| t.name()).collect();
            Error::invalid(format!(
                "lowp convert cannot store '{text}'; it stores {} (the float types safetensors \
                 names)",
                names.join(", ")
            ))
        })
    }
}

/// A constant per lowp format, named after its row (`FloatType::BF16`); only the formats
/// lowp-io writes evaluate.
macro_rules! lowp_constants {
    ($t:ident, $variant:ident, $($rest:tt)*) => {
        impl FloatType {
            #[doc = concat!("lowp's `", stringify!($t), "`, where lowp-io writes it (a compile error elsewhere).")]
            pub const $variant: FloatType = FloatType::of_written(lowp::$t::FORMAT);
        }
    };
}
lowp::for_each_format!(lowp_constants, rows);

impl fmt::Debug for FloatType {
    /// The constant's name (`F8E4M3FN`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name().to_ascii_uppercase())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_every_spelling() {
        for (text, t) in [
            ("bf16", FloatType::BF16),
            ("bfloat16", FloatType::BF16),
            ("F8_E4M3", FloatType::F8E4M3FN),
            ("float8_e4m3fn", FloatType::F8E4M3FN),
            ("f8e5m2", FloatType::F8E5M2),
            ("float32", FloatType::F32),
            ("F64", FloatType::F64),
            ("half", FloatType::F16),
        ] {
            assert_eq!(FloatType::parse(text).unwrap(), t, "{text}");
        }
        let err = FloatType::parse("f8e4m3fnuz").unwrap_err();
        assert!(matches!(err, Error::Invalid(_)), "{err:?}");
        assert!(err.to_string().contains("f8e5m2"), "{err}");
    }

    #[test]
    fn every_safetensors_name_of_lowps_table_is_a_dtype() {
        for format in Format::ALL {
            if let Some(dtype) = format.safetensors {
                let mut text = serde_json::to_string(dtype.name).unwrap();
                text = serde_json::from_str::<safetensors::Dtype>(&text)
                    .map(|d| d.to_string())
                    .unwrap_or_else(|e| panic!("{}: {e}", format.name));
                assert_eq!(text, dtype.name);
            }
        }
        let names: Vec<&str> = FloatType::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(names, ["f64", "f32", "f16", "bf16", "f8e4m3fn", "f8e5m2"]);
    }
}
