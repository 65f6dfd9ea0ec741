//! What `lowp.finfo`, `lowp.formats`, `lowp.inspect` and `lowp.fit_report` return: the
//! figures of the `lowp` command's reports and of `lowp::fit`, as Python objects.

use lowp::Format;
use lowp::fit::FitStats;
use lowp_analysis::output::{Cell, Shown, Table};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// The rows of a report table as dicts keyed by the column keys, with the columns a program
/// reads (those of the command's JSON output); numbers stay numbers, infinities included (JSON
/// has to write them as null).
pub fn records<'py>(py: Python<'py>, table: &Table) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for row in &table.rows {
        let dict = PyDict::new(py);
        for (column, cell) in table.columns.iter().zip(row) {
            if column.shown == Shown::Human {
                continue;
            }
            let value = match cell {
                Cell::Text(s) => s.into_pyobject(py)?.into_any(),
                Cell::Int(n) => n.into_pyobject(py)?.into_any(),
                Cell::Number(x) | Cell::Approx(x) => x.into_pyobject(py)?.into_any(),
                Cell::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
                Cell::Empty => py.None().into_bound(py),
            };
            dict.set_item(column.key, value)?;
        }
        list.append(dict)?;
    }
    Ok(list)
}

/// Machine limits of a lowp format, with the fields and values of `ml_dtypes.finfo` (and
/// `numpy.finfo` for float16), as Python numbers.
///
/// `lowp.finfo("f8e4m3fn")` or `lowp.finfo(ml_dtypes.float8_e4m3fn)`. Every value is derived
/// from the format's description and lowp's conversions, not typed in: `eps` is the gap above
/// 1, `epsneg` the gap below it, `machep`/`negep` their base-2 exponents, `max`/`min` the
/// largest and most negative finite values (`min` is the smallest positive value for the
/// unsigned E8M0), `tiny` and `smallest_normal` the smallest positive normal value,
/// `smallest_subnormal` the smallest positive value, `nexp`/`iexp` the exponent width, `nmant`
/// the mantissa width, `minexp` the exponent of `tiny`, `maxexp` one more than the exponent of
/// `max`, `precision` the decimal digits (`int(-log10(eps))` as NumPy has it, but at least 1
/// for the 8-bit formats, as ml_dtypes has it) and `resolution` `10**-precision` rounded into
/// the format. `dtype` is what `lowp.cast` returns for the format.
#[pyclass(name = "finfo", module = "lowp", frozen, get_all)]
pub struct Finfo {
    /// The lowp name of the format.
    name: &'static str,
    /// Storage width in bits (4, 6, 8 or 16).
    bits: u32,
    /// The difference between 1 and the next larger value.
    eps: f64,
    /// The difference between 1 and the next smaller value.
    epsneg: f64,
    /// The exponent of `eps` (`eps == 2**machep`).
    machep: i32,
    /// The exponent of `epsneg`.
    negep: i32,
    /// The largest finite value.
    max: f64,
    /// The most negative finite value (the smallest positive for an unsigned format).
    min: f64,
    /// Exponent field width.
    nexp: u32,
    /// Mantissa field width.
    nmant: u32,
    /// Exponent field width (as `nexp`).
    iexp: u32,
    /// One more than the exponent of `max`: the smallest power of two that overflows.
    maxexp: i32,
    /// The exponent of the smallest normal value.
    minexp: i32,
    /// Decimal digits of precision.
    precision: i32,
    /// `10**-precision` rounded into the format.
    resolution: f64,
    /// The smallest positive normal value.
    tiny: f64,
    /// The smallest positive normal value (as `tiny`).
    smallest_normal: f64,
    /// The smallest positive value (the smallest normal one where there are no subnormals).
    smallest_subnormal: f64,
    /// The NumPy dtype `lowp.cast` gives arrays of this format.
    dtype: Py<PyAny>,
}

#[pymethods]
impl Finfo {
    /// `lowp.finfo(format)`: the limits of a lowp format, by name or dtype.
    #[new]
    fn py_new(format: &Bound<'_, PyAny>) -> PyResult<Finfo> {
        match crate::arrays::kind_arg(format)? {
            crate::arrays::Kind::Format(fmt) => Finfo::of(format.py(), fmt),
            k => Err(pyo3::exceptions::PyValueError::new_err(format!(
                "lowp.finfo describes lowp formats; for {} use numpy.finfo",
                k.name()
            ))),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "finfo(resolution={}, min={}, max={}, dtype={})",
            self.resolution, self.min, self.max, self.name
        )
    }
}

impl Finfo {
    /// The limits of `fmt`.
    pub fn of(py: Python<'_>, fmt: &'static Format) -> PyResult<Finfo> {
        let value = |bits| fmt.to_f64(bits);
        let one = fmt.one_bits();
        let eps = fmt.epsilon();
        let epsneg = 1.0 - value(fmt.next_down(one));
        let max = fmt.max_value();
        let tiny = fmt.min_positive_value();
        // NumPy's precision, int(-log10(eps)); ml_dtypes gives every 8-bit format 1 (NumPy's
        // rule gives 0 to all but E3M4), and agreeing with it is what this type is for.
        let mut precision = (-eps.log10()) as i32;
        if fmt.total_bits() == 8 {
            precision = precision.max(1);
        }
        Ok(Finfo {
            name: fmt.name,
            bits: fmt.total_bits(),
            eps,
            epsneg,
            // eps and epsneg are powers of two: log2 is exact.
            machep: eps.log2() as i32,
            negep: epsneg.log2() as i32,
            max,
            min: if fmt.signed {
                -max
            } else {
                fmt.min_positive_subnormal_value()
            },
            nexp: fmt.exponent_bits,
            nmant: fmt.mantissa_bits,
            iexp: fmt.exponent_bits,
            maxexp: fmt.max_exp(),
            minexp: fmt.min_exponent(),
            precision,
            resolution: value(fmt.from_f64(10f64.powi(-precision))),
            tiny,
            smallest_normal: tiny,
            smallest_subnormal: fmt.min_positive_subnormal_value(),
            dtype: crate::arrays::result_dtype(py, fmt)?.into_any().unbind(),
        })
    }
}

/// `FitStats` as the dict `lowp.fit_report` returns: every field under its own name, the two
/// means, the format's name and the suggested per-tensor scale for it.
pub fn fit_dict<'py>(
    py: Python<'py>,
    fmt: &Format,
    stats: &FitStats,
    scale: f64,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("format", fmt.name)?;
    d.set_item("elements", stats.elements)?;
    d.set_item("nan_inputs", stats.nan_inputs)?;
    d.set_item("infinite_inputs", stats.infinite_inputs)?;
    d.set_item("overflowed", stats.overflowed)?;
    d.set_item("became_nan", stats.became_nan)?;
    d.set_item("flushed_to_zero", stats.flushed_to_zero)?;
    d.set_item("subnormal", stats.subnormal)?;
    d.set_item("exact", stats.exact)?;
    d.set_item("measured", stats.measured)?;
    d.set_item("max_rel_error", stats.max_rel_error)?;
    d.set_item("mean_rel_error", stats.mean_rel_error())?;
    d.set_item("max_abs_error", stats.max_abs_error)?;
    d.set_item("mean_abs_error", stats.mean_abs_error())?;
    d.set_item("rel_error_sum", stats.rel_error_sum)?;
    d.set_item("abs_error_sum", stats.abs_error_sum)?;
    d.set_item("amax", stats.amax)?;
    d.set_item("suggested_scale", scale)?;
    Ok(d)
}
