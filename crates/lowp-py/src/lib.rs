//! The Python module `lowp`: lowp's exact, fast conversions and its format reports, for NumPy
//! arrays.
//!
//! Built with maturin (`pip install ./crates/lowp-py`); the functions are documented for Python
//! users, since their doc comments are also their Python docstrings:
//!
//! * `cast`: arrays of float32, float64 or any lowp format into any lowp format (every
//!   rounding mode, saturating or not) and back, on lowp's vector paths, without the GIL and on
//!   all cores for large arrays;
//! * `fit_report`: what storing an array in a format costs ([`lowp::fit::FitStats`]);
//! * [`checkpoint::convert`] (`lowp.convert`): a safetensors, .npy or .npz checkpoint stored
//!   in another float type, with the per-tensor report (crate `lowp-io`);
//! * [`report::Finfo`] (`lowp.finfo`), `formats` and `inspect`: the limits of a format and
//!   the `lowp formats` / `lowp inspect` reports.
//!
//! The conversions themselves, on plain slices, are in [`convert`]; reading and making NumPy
//! arrays in [`arrays`]; the memory kept from dead results for new ones in [`output_cache`]
//! (the policy) and [`memory`] (its Python functions). `unsafe` is only in [`ffi`], which
//! installs that cache as NumPy's allocator for lowp's results; everywhere else PyO3 and the
//! `numpy` crate's safe API do the FFI.

pub mod arrays;
pub mod checkpoint;
pub mod convert;
pub mod ffi;
pub mod memory;
pub mod output_cache;
pub mod report;

use arrays::{Array, Kind};
use convert::{How, Mode, Source, Stored, Threads, with_format};
use lowp::fit::FitStats;
use lowp::{Format, Rounding};
use numpy::prelude::*;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyList, PyString, PyTuple};
use std::hash::{BuildHasher, RandomState};

/// The names `rounding=` accepts.
const ROUNDINGS: [&str; 5] = ["nearest", "zero", "up", "down", "stochastic"];

/// Casts an array into a lowp format, between formats, or back to float32/float64.
///
/// array: a contiguous NumPy array (C or Fortran order, any shape) of float32, float64,
///     float16, an ml_dtypes type of a lowp format (bfloat16, float8_e4m3fn, ...), or, with
///     source=FORMAT, the uint8/uint16 bit patterns of that format. It is read in place.
/// to: the target: a lowp format by name ("bf16", "f8e4m3fn", or ml_dtypes' "float8_e4m3fn"),
///     "float32"/"float64", or a dtype (numpy.float16, ml_dtypes.bfloat16, numpy.float32).
/// rounding: "nearest" (ties to even), "zero", "up" (toward +inf), "down" (toward -inf) or
///     "stochastic" (rounds up with probability equal to the fraction of the gap covered, so
///     the result is unbiased on average). Every mode rounds once, directly from the source:
///     float64 is not rounded through float32 first.
/// saturate: turn overflow and infinities into +-MAX instead of +-inf (or NaN in formats
///     without infinity).
/// seed: the stochastic rounding seed (an int below 2**64); element i gets the random bits
///     of (seed, i), so a seed gives the same result on any number of threads. None draws a
///     fresh seed. Only with rounding="stochastic".
/// source: the format a uint8/uint16 array holds the bits of.
/// bits: return the uint8/uint16 bit patterns instead of the format's dtype.
/// threads: None uses every core for arrays of 64Ki elements or more; 1 the calling thread;
///     n a pool of n threads, n at most MAX_THREADS (4 per core, at least 16; a larger n,
///     0 or a negative n is a ValueError). Pools of the last two sizes asked for are kept
///     for the next calls; older ones are shut down. The GIL is released while converting.
/// out: an array to write the result into (and return) instead of a new one: same shape,
///     contiguous in the same order, of the target's dtype or its uint8/uint16 bits. Saves
///     allocating, and the page faults of writing to fresh memory.
///
/// Returns a new array of the same shape and order: float16 for f16; the ml_dtypes dtype of
/// the format where ml_dtypes is installed, else its uint8/uint16 bits; float32/float64 for
/// those targets. The result is written in place into the array returned (no copies), and
/// equals ml_dtypes' astype bit for bit for float32 sources, NaNs included (but for a
/// signalling NaN into f16, which lowp quiets and NumPy keeps signalling). When a new result
/// of 4 MiB or more dies, lowp keeps its memory for the next one (see output_cache), which
/// then costs no page faults.
#[pyfunction]
#[pyo3(signature = (array, to, rounding = "nearest", saturate = false, seed = None, *, source = None, bits = false, threads = None, out = None))]
#[allow(clippy::too_many_arguments)] // the Python signature, which keyword arguments make usable
fn cast<'py>(
    array: &Bound<'py, PyAny>,
    to: &Bound<'py, PyAny>,
    rounding: &str,
    saturate: bool,
    seed: Option<&Bound<'py, PyAny>>,
    source: Option<&Bound<'py, PyAny>>,
    bits: bool,
    threads: Option<&Bound<'py, PyAny>>,
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let target = arrays::kind_arg(to)?;
    let mode = mode_arg(rounding, seed)?;
    let input = Array::read("lowp.cast", array, source)?;
    let src = input.source()?;
    let threads = threads_arg(threads, src.len())?;
    if bits && out.is_some() {
        return Err(PyValueError::new_err(
            "bits= and out= together: the dtype of out decides what is returned",
        ));
    }
    let out = out.map(|o| Output { array: o, target });
    match target {
        Kind::F32 | Kind::F64 => {
            if mode != Mode::Nearest || saturate {
                return Err(PyValueError::new_err(
                    "rounding= and saturate= apply to casts into lowp formats; casts to float32 \
                     and float64 are exact (float64 to float32 rounds to nearest, as NumPy does)",
                ));
            }
            if target == Kind::F32 {
                widen_into::<f32>(&input, src, &threads, out)
            } else {
                widen_into::<f64>(&input, src, &threads, out)
            }
        }
        Kind::Format(f) => {
            let how = How { mode, saturate };
            with_format!(f, T => narrow_into::<T>(&input, src, how, &threads, bits, out))
        }
    }
}

/// The caller's `out=` array and the target it is for.
struct Output<'a, 'py> {
    /// The array.
    array: &'a Bound<'py, PyAny>,
    /// What is written into it.
    target: Kind,
}

/// Where a result goes.
struct Destination<'py, E> {
    /// The array written, as `E` (a view of `out=`, or a new array).
    write: Bound<'py, numpy::PyArrayDyn<E>>,
    /// The caller's `out=`, returned as it is.
    given: Option<Bound<'py, PyAny>>,
}

/// `out` (seen as `E`) when given, else a new array.
fn destination<'py, E: numpy::Element + bytemuck::Pod>(
    input: &Array<'py>,
    out: Option<Output<'_, 'py>>,
) -> PyResult<Destination<'py, E>> {
    Ok(match out {
        Some(o) => Destination {
            write: input.output_into::<E>("lowp.cast", o.array, o.target)?,
            given: Some(o.array.clone()),
        },
        None => Destination {
            write: input.output::<E>()?,
            given: None,
        },
    })
}

/// Writes `dst` with `fill`, without the GIL. A `dst` that overlaps the input (an `out=`
/// sharing its memory) cannot be borrowed for writing: that is reported, not raced.
fn fill<E: numpy::Element + Send>(
    dst: &Bound<'_, numpy::PyArrayDyn<E>>,
    fill: impl FnOnce(&mut [E]) + Send,
) -> PyResult<()> {
    let mut rw = dst.try_readwrite().map_err(|e| {
        PyValueError::new_err(format!(
            "lowp.cast: out cannot be written ({e}): does it overlap the input?"
        ))
    })?;
    let slice = rw.as_slice_mut()?;
    dst.py().detach(|| fill(slice));
    Ok(())
}

/// Rounds `src` into `T`: into `out`, or a new array of `T`'s bits viewed as `T`'s dtype
/// unless `bits`.
fn narrow_into<'py, T: Stored>(
    input: &Array<'py>,
    src: Source<'_>,
    how: How,
    threads: &Threads,
    bits: bool,
    out: Option<Output<'_, 'py>>,
) -> PyResult<Bound<'py, PyAny>> {
    let dst = destination::<T::Storage>(input, out)?;
    fill(&dst.write, |d| convert::narrow::<T>(src, d, how, threads))?;
    if let Some(given) = dst.given {
        return Ok(given);
    }
    if bits {
        return Ok(dst.write.into_any());
    }
    let dtype = arrays::result_dtype(input.py, &T::FORMAT)?;
    dst.write.call_method1("view", (dtype,))
}

/// Converts `src` into float32 or float64: into `out`, or a new array.
fn widen_into<'py, W>(
    input: &Array<'py>,
    src: Source<'_>,
    threads: &Threads,
    out: Option<Output<'_, 'py>>,
) -> PyResult<Bound<'py, PyAny>>
where
    W: convert::Wide + convert::FromFloat + numpy::Element,
{
    let dst = destination::<W>(input, out)?;
    fill(&dst.write, |d| convert::widen(src, d, threads))?;
    Ok(dst.given.unwrap_or_else(|| dst.write.into_any()))
}

/// The rounding mode `rounding` and `seed` ask for.
fn mode_arg(rounding: &str, seed: Option<&Bound<'_, PyAny>>) -> PyResult<Mode> {
    let directed = |m| Ok(Mode::Directed(m));
    let mode = match rounding {
        "nearest" => Ok(Mode::Nearest),
        "zero" => directed(Rounding::TowardZero),
        "up" => directed(Rounding::TowardPositive),
        "down" => directed(Rounding::TowardNegative),
        "stochastic" => Ok(Mode::Stochastic(match seed {
            Some(s) => seed_arg(s)?,
            // A different seed every call: RandomState's keys are random, and each new one
            // differs from the last.
            None => RandomState::new().hash_one(0u8),
        })),
        other => Err(PyValueError::new_err(format!(
            "unknown rounding '{other}'; valid: {}",
            ROUNDINGS.join(", ")
        ))),
    }?;
    if seed.is_some() && !matches!(mode, Mode::Stochastic(_)) {
        return Err(PyValueError::new_err(
            "seed= is for rounding=\"stochastic\" only",
        ));
    }
    Ok(mode)
}

/// A stochastic rounding seed: an int in `0..2**64`.
fn seed_arg(seed: &Bound<'_, PyAny>) -> PyResult<u64> {
    let bad = || PyValueError::new_err(format!("seed must be an int in 0..2**64, not {seed}"));
    if !seed.is_instance_of::<PyInt>() {
        return Err(bad());
    }
    seed.extract::<u64>().map_err(|_| bad())
}

/// Where to convert `len` elements, from `threads=`: None, or an int from 1 to
/// [`convert::max_threads`].
fn threads_arg(threads: Option<&Bound<'_, PyAny>>, len: usize) -> PyResult<Threads> {
    let count = match threads {
        None => None,
        Some(t) if t.is_none() => None,
        Some(t) => {
            let bad = || {
                PyValueError::new_err(format!(
                    "threads must be None or a positive int (at most {}), not {t}",
                    convert::max_threads()
                ))
            };
            match t.extract::<i128>() {
                Ok(n) if n < 0 => return Err(bad()),
                Ok(n) => match usize::try_from(n) {
                    Ok(n) => Some(n),
                    Err(_) => return Err(PyValueError::new_err(convert::too_many(&t.to_string()))),
                },
                Err(_) => return Err(bad()),
            }
        }
    };
    Threads::new(count, len).map_err(PyValueError::new_err)
}

/// What storing an array in a lowp format costs: the statistics `lowp convert` reports.
///
/// Rounds the array to nearest even into `format` (saturating overflow to +-MAX if
/// saturate) and measures the result against the source (lowp.fit.FitStats in Rust):
///
/// elements, nan_inputs, infinite_inputs; overflowed (finite values beyond the format's
/// range: they became inf, NaN, or +-MAX); became_nan; flushed_to_zero (non-zero values
/// stored as 0); subnormal (stored as subnormals); exact (stored exactly); measured (the
/// elements the errors cover: finite non-zero sources stored as finite values);
/// max_rel_error, mean_rel_error, max_abs_error, mean_abs_error, rel_error_sum,
/// abs_error_sum; amax (the largest finite magnitude); suggested_scale (the largest power
/// of two s with amax * s <= the format's max: multiply by it before casting, divide after);
/// and format.
///
/// array and source as for cast (a lowp-format array is measured from its exact values).
/// With threads other than 1 the error sums may differ from a single-threaded run in their
/// last bits (they are added in another order); every other figure is the same.
#[pyfunction]
#[pyo3(signature = (array, format, saturate = false, *, source = None, threads = None))]
fn fit_report<'py>(
    array: &Bound<'py, PyAny>,
    format: &Bound<'py, PyAny>,
    saturate: bool,
    source: Option<&Bound<'py, PyAny>>,
    threads: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let py = array.py();
    let fmt = arrays::format_arg(format)?;
    let input = Array::read("lowp.fit_report", array, source)?;
    let src = input.source()?;
    let threads = threads_arg(threads, src.len())?;
    let stats = py.detach(|| fit(src, fmt, saturate, &threads));
    let scale = with_format!(fmt, T => stats.suggested_scale::<T>());
    report::fit_dict(py, fmt, &stats, scale)
}

/// [`FitStats`] of `src` stored in `fmt`. A lowp-format source is widened to f32 first, which
/// is exact, so its statistics are those of its values.
fn fit(src: Source<'_>, fmt: &Format, saturate: bool, threads: &Threads) -> FitStats {
    fn run<S: lowp::fit::FitSource>(
        src: &[S],
        fmt: &Format,
        saturate: bool,
        threads: &Threads,
    ) -> FitStats {
        with_format!(fmt, T => match threads {
            Threads::Serial => FitStats::of::<S, T>(src, saturate),
            _ => threads.install(|| FitStats::par_of::<S, T>(src, saturate)),
        })
    }
    match src {
        Source::F32(s) => run(s, fmt, saturate, threads),
        Source::F64(s) => run(s, fmt, saturate, threads),
        bits => {
            let mut wide = vec![0f32; bits.len()];
            convert::widen(bits, &mut wide, threads);
            run(&wide, fmt, saturate, threads)
        }
    }
}

/// Every lowp format and its properties, as `lowp formats --format json` lists them.
///
/// One dict per format, in lowp's order: name, total_bits, sign_bits, exponent_bits,
/// mantissa_bits, bias, epsilon, min_positive_subnormal (None without subnormals),
/// min_positive_normal, max, digits, has_infinity, nan_encoding, nan_patterns, nan_bits,
/// zero ("signed", "unsigned" or "none") and overflow ("inf", "nan" or "saturate").
#[pyfunction]
fn formats(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    report::records(py, &lowp_analysis::formats::table())
}

/// What rounding a value into each format gives, as `lowp inspect --format json` shows it.
///
/// value: a decimal string ("0.1", "1e-8", "inf") or a hexadecimal one ("0x1.8p3", as
///     float.hex() writes them), rounded once, directly from its exact value, into each
///     format; a float or int, rounded from its exact value; or with source=FORMAT a bit
///     pattern string of that format ("0x3c00").
/// to: a format, or a list or tuple of formats, to round into (default: every format, or only the
///     source format when source is given).
/// source: read value as a value of this format first (decimals are rounded into it); the
///     other formats then convert that value.
///
/// One dict per format: format, from, value, value_exact (its exact decimal), prints_as (the
/// shortest decimal that reads back), bits, sign, exponent, mantissa, next_down(_bits),
/// next_up(_bits), abs_error, rel_error, category, status ("exact", "rounded", "subnormal",
/// "underflow", "overflow", ...), overflow ("inf", "nan", "max" or None), subnormal,
/// via_f64_bits and double_rounding (for a decimal: what rounding its nearest float64 would
/// give, and whether that differs), and result (what happened, in words).
#[pyfunction]
#[pyo3(signature = (value, to = None, *, source = None))]
fn inspect<'py>(
    value: &Bound<'py, PyAny>,
    to: Option<&Bound<'py, PyAny>>,
    source: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyList>> {
    let py = value.py();
    let text = if let Ok(s) = value.cast::<PyString>() {
        s.to_cow()?.into_owned()
    } else if value.is_instance_of::<PyInt>() {
        // Exactly, however large: the decimal digits are rounded once into each format.
        value.str()?.to_cow()?.into_owned()
    } else if let Ok(x) = value.extract::<f64>() {
        // The float's exact decimal expansion, so it is rounded from its exact value.
        lowp_analysis::number::exact_string(x)
    } else {
        return Err(PyTypeError::new_err(format!(
            "lowp.inspect takes a number or a string, not {}",
            value.get_type().name()?
        )));
    };
    let as_format = source.map(|s| arrays::format_arg(s)).transpose()?;
    let to = match to {
        None => Vec::new(),
        Some(t) if t.is_instance_of::<PyList>() || t.is_instance_of::<PyTuple>() => t
            .try_iter()?
            .map(|f| arrays::format_arg(&f?))
            .collect::<PyResult<_>>()?,
        Some(t) => vec![arrays::format_arg(t)?],
    };
    let report = lowp_analysis::inspect::run(&text, as_format, &to, "source='FORMAT'")
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    report::records(py, &report.table())
}

/// The vector path lowp's conversions take on this CPU ("avx512fp16", "avx512bf16",
/// "avx512", "f16c" or "portable"; the environment variable LOWP_FORCE_PATH pins one).
#[pyfunction]
fn simd_path() -> String {
    lowp::bulk::active_path().to_string()
}

/// lowp: exact, fast low-precision floating point for NumPy.
///
/// float16, bfloat16 and the FP8/FP6/FP4 formats, by lowp's names or ml_dtypes' (formats()
/// lists them all). cast() converts arrays on the CPU's vector units, in every rounding mode, rounding
/// float64 once (no double rounding through float32); fit_report() says what a format does to
/// an array; finfo(), formats() and inspect() describe the formats.
#[pymodule]
#[pyo3(name = "lowp")]
fn lowp_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cast, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint::convert, m)?)?;
    m.add_function(wrap_pyfunction!(fit_report, m)?)?;
    m.add_function(wrap_pyfunction!(formats, m)?)?;
    m.add_function(wrap_pyfunction!(inspect, m)?)?;
    m.add_function(wrap_pyfunction!(simd_path, m)?)?;
    memory::register(m)?;
    m.add_class::<report::Finfo>()?;
    m.add("ROUNDINGS", ROUNDINGS.to_vec())?;
    m.add("MAX_THREADS", convert::max_threads())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
