//! `lowp.output_cache()`, `lowp.set_output_cache()` and `lowp.empty_output_cache()`: the
//! memory [`crate::output_cache`] keeps for new results, seen and set from Python.

use crate::ffi;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt};

/// The memory lowp keeps from dead results, to make new ones without page faults.
///
/// An array lowp.cast returns (without out=) gives its memory back to lowp when it dies,
/// views and all: a block of 4 MiB or more is kept, up to a limit (1 GiB to begin with;
/// set_output_cache changes it), and the next result that fits takes it instead of fresh
/// memory, which the kernel zeroes page by page on first write and which costs more than the
/// conversion. Smaller blocks go back to NumPy at once. The oldest blocks go first when the
/// limit is passed.
///
/// Returns a dict: active (False where NumPy is older than 1.22, which has no memory handlers:
/// then nothing is kept), limit and held (bytes), blocks (kept now), hits and misses (results
/// of 4 MiB or more that took a kept block, or fresh memory).
#[pyfunction]
fn output_cache(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let (active, info) = ffi::cache_info(py);
    let d = PyDict::new(py);
    d.set_item("active", active)?;
    d.set_item("limit", info.limit)?;
    d.set_item("held", info.held)?;
    d.set_item("blocks", info.blocks)?;
    d.set_item("hits", info.hits)?;
    d.set_item("misses", info.misses)?;
    Ok(d)
}

/// Sets the most bytes lowp keeps from dead results (see output_cache); 0 keeps nothing.
///
/// limit: an int >= 0. Kept blocks past the new limit, the oldest first, go back to NumPy at
///     once. Returns the previous limit.
#[pyfunction]
fn set_output_cache(limit: &Bound<'_, PyAny>) -> PyResult<usize> {
    let bad = || PyValueError::new_err(format!("limit must be an int of bytes >= 0, not {limit}"));
    if !limit.is_instance_of::<PyInt>() || limit.lt(0)? {
        return Err(bad());
    }
    // An int past the address space (however large) is no limit at all.
    Ok(ffi::set_cache_limit(
        limit.extract::<usize>().unwrap_or(usize::MAX),
    ))
}

/// Gives every block lowp keeps from dead results back to NumPy (see output_cache); the limit
/// stays. Returns the bytes given back.
#[pyfunction]
fn empty_output_cache() -> usize {
    ffi::empty_cache()
}

/// Adds the three functions to the module `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(output_cache, m)?)?;
    m.add_function(wrap_pyfunction!(set_output_cache, m)?)?;
    m.add_function(wrap_pyfunction!(empty_output_cache, m)?)?;
    Ok(())
}
