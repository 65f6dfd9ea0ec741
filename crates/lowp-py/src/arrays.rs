//! NumPy arrays in and out: which format an array holds, reading it in place, and making the
//! result array of the right dtype.
//!
//! Nothing is copied on the way: a contiguous input (C or Fortran order) is read where it lies,
//! arrays of float16 and ml_dtypes types are reinterpreted as their `uint16`/`uint8` bits
//! (`ndarray.view`, which copies nothing), and the result is written straight into the array
//! that is returned, then viewed as its dtype the same way.

use crate::convert::Source;
use lowp::Format;
use lowp::format::format_by_name;
use numpy::prelude::*;
use numpy::{PyArrayDescr, PyArrayDyn, PyReadonlyArrayDyn, PyUntypedArray};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

/// What an array holds or a conversion produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// float32.
    F32,
    /// float64.
    F64,
    /// A lowp format.
    Format(&'static Format),
}

impl Kind {
    /// The name used in messages and results (`float32`, `bf16`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::F32 => "float32",
            Kind::F64 => "float64",
            Kind::Format(f) => f.name,
        }
    }
}

/// The names a format can be given by, for error messages.
pub fn format_names() -> String {
    lowp_analysis::registry::names()
}

/// Looks up a lowp format by any name lowp accepts (`f8e4m3fn`, `float8_e4m3fn`, `bfloat16`),
/// or a NumPy/ml_dtypes dtype or scalar type standing for one (`numpy.float16`,
/// `ml_dtypes.bfloat16`).
pub fn format_arg(what: &Bound<'_, PyAny>) -> PyResult<&'static Format> {
    match kind_arg(what)? {
        Kind::Format(f) => Ok(f),
        k => Err(PyValueError::new_err(format!(
            "{} is not a lowp format; valid formats: {}",
            k.name(),
            format_names()
        ))),
    }
}

/// As [`format_arg`], also accepting float32 and float64 (`"float32"`, `"f32"`, `numpy.float32`).
pub fn kind_arg(what: &Bound<'_, PyAny>) -> PyResult<Kind> {
    let name = match what.cast::<PyString>() {
        Ok(s) => s.to_cow()?.into_owned(),
        // A dtype, a scalar type or anything else numpy.dtype() accepts: go by its name.
        Err(_) => match PyArrayDescr::new(what.py(), what) {
            Ok(dtype) => dtype.getattr("name")?.extract::<String>()?,
            Err(_) => {
                return Err(PyTypeError::new_err(format!(
                    "a format is given by name (\"bf16\", \"float8_e4m3fn\") or dtype, not {}",
                    what.get_type().name()?
                )));
            }
        },
    };
    kind_by_name(&name)
}

/// [`Kind`] of a name.
fn kind_by_name(name: &str) -> PyResult<Kind> {
    match name.to_ascii_lowercase().as_str() {
        "float32" | "f32" | "single" => return Ok(Kind::F32),
        "float64" | "f64" | "double" => return Ok(Kind::F64),
        _ => {}
    }
    lowp_analysis::registry::lookup(name)
        .map(Kind::Format)
        .map_err(|e| PyValueError::new_err(format!("{e}; or float32, float64")))
}

/// The integer dtype that holds a format's bits: `uint16` or `uint8`.
fn bits_dtype<'py>(py: Python<'py>, fmt: &Format) -> Bound<'py, PyArrayDescr> {
    if fmt.total_bits() > 8 {
        numpy::dtype::<u16>(py)
    } else {
        numpy::dtype::<u8>(py)
    }
}

/// ml_dtypes' name of a format's type: `bfloat16`, `float8_e4m3fn`, `float4_e2m1fn`.
fn ml_dtypes_name(fmt: &Format) -> String {
    match fmt.name {
        "bf16" => "bfloat16".to_string(),
        // "f8e4m3fn" -> "float8_e4m3fn": the width, then the rest after an underscore.
        name => format!("float{}_{}", &name[1..2], &name[2..]),
    }
}

/// The dtype results of `fmt` have: numpy.float16 for f16; the ml_dtypes type where ml_dtypes
/// is installed; else the `uint16`/`uint8` of the bits.
pub fn result_dtype<'py>(py: Python<'py>, fmt: &Format) -> PyResult<Bound<'py, PyArrayDescr>> {
    if fmt.name == "f16" {
        return PyArrayDescr::new(py, "float16");
    }
    match py.import("ml_dtypes") {
        Ok(ml) => PyArrayDescr::new(py, ml.getattr(ml_dtypes_name(fmt).as_str())?),
        Err(e) if e.is_instance_of::<pyo3::exceptions::PyImportError>(py) => {
            Ok(bits_dtype(py, fmt))
        }
        Err(e) => Err(e),
    }
}

/// An input array, borrowed for reading (NumPy's borrow flags keep Rust from writing to it
/// meanwhile).
pub enum Input<'py> {
    /// float32 values.
    F32(PyReadonlyArrayDyn<'py, f32>),
    /// float64 values.
    F64(PyReadonlyArrayDyn<'py, f64>),
    /// Bits of a 16-bit format.
    Bits16(&'static Format, PyReadonlyArrayDyn<'py, u16>),
    /// Bits of a narrower format.
    Bits8(&'static Format, PyReadonlyArrayDyn<'py, u8>),
}

/// An input array and its layout.
pub struct Array<'py> {
    /// The interpreter.
    pub py: Python<'py>,
    /// The elements.
    pub input: Input<'py>,
    /// Its shape, which the result keeps.
    pub shape: Vec<usize>,
    /// Whether it is laid out in Fortran order (and not also in C order), which the result
    /// keeps too, so that element `i` of memory maps to element `i`.
    pub fortran: bool,
}

impl<'py> Array<'py> {
    /// Reads `obj` as an input of `func`: a contiguous NumPy array of float32, float64,
    /// float16, an ml_dtypes type of a lowp format, or (with `source`) the uint8/uint16 bits of
    /// the format `source` names.
    pub fn read(
        func: &str,
        obj: &Bound<'py, PyAny>,
        source: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Array<'py>> {
        let py = obj.py();
        let Ok(array) = obj.cast::<PyUntypedArray>() else {
            return Err(PyTypeError::new_err(format!(
                "{func} takes a NumPy array, not {}; convert with numpy.asarray(x, dtype=numpy.float32)",
                obj.get_type().name()?
            )));
        };
        let dtype = array.dtype();
        let dtype_name: String = dtype.getattr("name")?.extract()?;
        if !array.is_contiguous() {
            return Err(PyValueError::new_err(format!(
                "{func} reads arrays in place and needs them contiguous (C or Fortran order); this \
                 {dtype_name} array of shape {:?} has strides {:?} (a slice or transpose): pass \
                 numpy.ascontiguousarray(a)",
                array.shape(),
                array.strides()
            )));
        }
        if dtype.is_native_byteorder() == Some(false) {
            return Err(PyTypeError::new_err(format!(
                "{func}: the array's dtype {} is not in this machine's byte order; convert with \
                 a.astype(a.dtype.newbyteorder('='))",
                dtype.str()?
            )));
        }
        let kind = match source {
            Some(source) => source_kind(func, &dtype, &dtype_name, source)?,
            None => array_kind(func, &dtype, &dtype_name)?,
        };
        let shape = array.shape().to_vec();
        let fortran = !array.is_c_contiguous() && array.is_fortran_contiguous();
        let input = match kind {
            Kind::F32 => Input::F32(array.cast::<PyArrayDyn<f32>>()?.try_readonly()?),
            Kind::F64 => Input::F64(array.cast::<PyArrayDyn<f64>>()?.try_readonly()?),
            Kind::Format(f) => {
                // A float16/ml_dtypes array seen as its bits: a view, nothing is copied.
                let bits = array.call_method1("view", (bits_dtype(py, f),))?;
                if f.total_bits() > 8 {
                    Input::Bits16(f, bits.cast::<PyArrayDyn<u16>>()?.try_readonly()?)
                } else {
                    Input::Bits8(f, bits.cast::<PyArrayDyn<u8>>()?.try_readonly()?)
                }
            }
        };
        Ok(Array {
            py,
            input,
            shape,
            fortran,
        })
    }

    /// What the array holds.
    pub fn kind(&self) -> Kind {
        match self.input {
            Input::F32(_) => Kind::F32,
            Input::F64(_) => Kind::F64,
            Input::Bits16(f, _) | Input::Bits8(f, _) => Kind::Format(f),
        }
    }

    /// The elements, in memory order.
    pub fn source(&self) -> PyResult<Source<'_>> {
        Ok(match &self.input {
            Input::F32(a) => Source::F32(a.as_slice()?),
            Input::F64(a) => Source::F64(a.as_slice()?),
            Input::Bits16(f, a) => Source::Bits16(f, a.as_slice()?),
            Input::Bits8(f, a) => Source::Bits8(f, a.as_slice()?),
        })
    }

    /// A new array of `T` with this array's shape and order, to write the result into: zeros
    /// or the bits of a dead result, from [`crate::output_cache`] through [`crate::ffi`], so
    /// that its memory is reused when it dies in turn.
    pub fn output<T: numpy::Element + bytemuck::Pod>(&self) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
        crate::ffi::new_output(self.py, self.shape.as_slice(), self.fortran)
    }

    /// The caller's array `out` to write a result of `kind` into, as `T` (the bits of a
    /// format, or the floats): it must be a writeable NumPy array of this array's shape, laid
    /// out in the same order, of the target's dtype (or its uint8/uint16 bits).
    pub fn output_into<T: numpy::Element>(
        &self,
        func: &str,
        out: &Bound<'py, PyAny>,
        kind: Kind,
    ) -> PyResult<Bound<'py, PyArrayDyn<T>>> {
        let Ok(array) = out.cast::<PyUntypedArray>() else {
            return Err(PyTypeError::new_err(format!(
                "{func}: out= takes a NumPy array, not {}",
                out.get_type().name()?
            )));
        };
        if array.shape() != self.shape.as_slice() {
            return Err(PyValueError::new_err(format!(
                "{func}: out has shape {:?}, the array {:?}",
                array.shape(),
                self.shape
            )));
        }
        // Element i of memory must be element i of the input: the same order, contiguous.
        let same_order = if self.fortran {
            array.is_fortran_contiguous()
        } else {
            array.is_c_contiguous()
        };
        if !same_order {
            return Err(PyValueError::new_err(format!(
                "{func}: out must be contiguous in the input's order ({}), like numpy.empty_like",
                if self.fortran { "Fortran" } else { "C" }
            )));
        }
        if !out
            .getattr("flags")?
            .getattr("writeable")?
            .extract::<bool>()?
        {
            return Err(PyValueError::new_err(format!("{func}: out is read-only")));
        }
        let dtype = array.dtype();
        let name: String = dtype.getattr("name")?.extract()?;
        let fits = dtype.is_native_byteorder() != Some(false)
            && match kind {
                Kind::F32 => dtype.is_equiv_to(&numpy::dtype::<f32>(self.py)),
                Kind::F64 => dtype.is_equiv_to(&numpy::dtype::<f64>(self.py)),
                Kind::Format(f) => {
                    let bits = bits_dtype(self.py, f);
                    dtype.is_equiv_to(&bits)
                        || (format_by_name(&name) == Some(f) && dtype.itemsize() == bits.itemsize())
                }
            };
        if !fits {
            return Err(PyTypeError::new_err(format!(
                "{func}: out has dtype {name}; a {} result needs {}",
                kind.name(),
                match kind {
                    Kind::Format(f) => format!(
                        "the format's own dtype or {}",
                        bits_dtype(self.py, f).getattr("name")?
                    ),
                    k => k.name().to_string(),
                }
            )));
        }
        let target = array.call_method1("view", (numpy::dtype::<T>(self.py),))?;
        Ok(target.cast_into::<PyArrayDyn<T>>()?)
    }
}

/// The kind of an array by its dtype alone.
fn array_kind(func: &str, dtype: &Bound<'_, PyArrayDescr>, name: &str) -> PyResult<Kind> {
    let py = dtype.py();
    if dtype.is_equiv_to(&numpy::dtype::<f32>(py)) {
        return Ok(Kind::F32);
    }
    if dtype.is_equiv_to(&numpy::dtype::<f64>(py)) {
        return Ok(Kind::F64);
    }
    if let Some(f) = format_by_name(name) {
        // float16 or an ml_dtypes type: the name says which format, the size confirms it.
        let bytes = if f.total_bits() > 8 { 2 } else { 1 };
        if dtype.itemsize() == bytes && dtype.kind() != b'u' && dtype.kind() != b'i' {
            return Ok(Kind::Format(f));
        }
    }
    if name == "uint8" || name == "uint16" {
        return Err(PyTypeError::new_err(format!(
            "{func}: a {name} array holds the bits of which format? Say so with source=, \
             e.g. source=\"{}\"",
            if name == "uint8" { "f8e4m3fn" } else { "bf16" }
        )));
    }
    Err(PyTypeError::new_err(format!(
        "{func} cannot read arrays of dtype {name}; it reads float32, float64, float16, the \
         ml_dtypes types of the lowp formats (bfloat16, float8_e4m3fn, ...), or with source=FORMAT \
         the uint8/uint16 bits of a format (lowp formats: {})",
        format_names()
    )))
}

/// The kind of an array said to hold the format `source`: its bits as uint8/uint16, or the
/// format's own dtype.
fn source_kind(
    func: &str,
    dtype: &Bound<'_, PyArrayDescr>,
    name: &str,
    source: &Bound<'_, PyAny>,
) -> PyResult<Kind> {
    let f = format_arg(source)?;
    let (bits_name, bytes) = if f.total_bits() > 8 {
        ("uint16", 2)
    } else {
        ("uint8", 1)
    };
    let own = format_by_name(name) == Some(f) && dtype.itemsize() == bytes;
    if name == bits_name || own {
        Ok(Kind::Format(f))
    } else {
        Err(PyTypeError::new_err(format!(
            "{func}: source=\"{}\" needs the {bits_name} bits of {} values (or an array of its \
             own dtype), not a {name} array",
            f.name, f.name
        )))
    }
}
