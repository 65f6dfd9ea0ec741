//! `lowp.convert`: a checkpoint file stored in another float type, through `lowp_io`.

use lowp_io::layouts::Layout;
use lowp_io::quant::{ElementRounding, QuantOptions, ScaleSearch};
use lowp_io::{FloatType, Options, Target};
use pyo3::exceptions::{
    PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyUserWarning, PyValueError,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::Value;
use std::ffi::CString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Stores a checkpoint (safetensors, .npy or .npz, or a safetensors model directory) in
/// another float type or block-quantized scheme, and reports per tensor what that cost.
///
/// src: the file to read (its kind is recognised by its contents), or a model: a
///     model.safetensors.index.json or a directory holding one or a single .safetensors
///     file; it is only read.
/// dst: the file to write, of the same kind (a new directory for a model); None for a dry
///     run that measures every tensor and writes nothing. The output goes to a temporary
///     name beside dst, renamed when complete: on any error dst is untouched and nothing is
///     left behind.
/// to: the float type to store: "f32", "f64", "f16", "bf16", "f8e4m3fn" or "f8e5m2" (also
///     "bfloat16", "float8_e4m3fn", "F8_E4M3", ...), or a scheme for the weights:
///     "fp8-block", "fp8-channel", "mxfp8", "mxfp4", "nvfp4".
///     A quantized src stored as a float type is decoded. NumPy files take f16, f32 and f64.
/// layout: with a scheme, the loader the checkpoint is laid out for: "transformers",
///     "compressed-tensors" or "modelopt"; None picks transformers' own where it reads the
///     scheme for the model (fp8-block, mxfp8, gpt-oss's mxfp4), compressed-tensors otherwise
///     (see `lowp convert --help` for the tensors and configs of each).
/// activation_amax: with nvfp4 in the modelopt layout, a JSON file mapping each quantized
///     linear layer's module name to its input amax from calibration: the checkpoint then
///     quantizes activations too (W4A4). None writes weights only (W4A16_NVFP4).
/// rest: with a scheme, the float type for the tensors it leaves (None: kept as they are);
///     with a float type, an error.
/// rounding: with a scheme, "nearest" or "stochastic" (seeded by seed).
/// scale_search: with a scheme, "spec" (the scheme's rule) or "mse" (the least squared error
///     among the rule's scale and its neighbours).
/// shard_size: for a model directory, the largest output shard in bytes.
/// only: glob patterns (`*` any characters, `?` one) of the tensors to convert; the others
///     are copied unchanged. None or [] converts every float tensor (with a scheme: every
///     tensor of 2 or more dimensions whose name ends in "weight", except embeddings and
///     lm_head).
/// keep: glob patterns of the tensors to store as f32 instead (norms, biases).
/// saturate: values beyond the target's range become +-MAX instead of +-inf or NaN.
/// fp8_scale: "none", or "per-tensor": each FP8 tensor W is multiplied by the largest power of
///     two that keeps its largest magnitude within the format, and the inverse is stored as
///     the F32 scalar W.scale (W * W.scale restores the values).
///
/// Returns one dict per tensor, in the file's order, with the fields of `lowp convert
/// --report`: name, from, to, elements, overflowed, flushed_to_zero, subnormal, became_nan,
/// max_rel_error, mean_rel_error, max_abs_error, mean_abs_error, nan_inputs,
/// infinite_inputs, exact, amax, bytes_in, bytes_out, scale (when scaled: the value of
/// W.scale), with a scheme scheme, sqnr_db, rel_frobenius_error, clipped_blocks, blocks,
/// flushed_share, saturated, saturated_share and bytes_per_param (a quantized weight's
/// flushed_to_zero is the quantizer's count), then
/// verdict ("fail", "warn", "ok", "exact" or "kept"), why and shape. Figures that do not
/// apply are None.
///
/// Warns (UserWarning) for each pattern of only or keep that matches no tensor, and, for a
/// model directory, for each entry left out (hidden files and folders, temporaries of lowp
/// runs) and each decision the tensors do not show (another model of the directory
/// converted on its own, whose tensors are named with its folder or file as a prefix, such
/// as "2_Dense/linear.weight"; a __metadata__ entry dropped to keep a header within
/// safetensors' limit).
///
/// Raises ValueError for a request that cannot be carried out (an unknown type, src and dst
/// the same file, dst of another kind than src, fp8_scale on a non-FP8 type, rest, rounding,
/// scale_search, layout or activation_amax with a float type), OSError for a
/// file that cannot be read or written or is malformed (a link out of a model directory, a
/// FIFO or device in it), and KeyboardInterrupt when Ctrl-C stopped the conversion, in any
/// of its phases: dst is then absent, or as it was (a Ctrl-C that lands after the last step,
/// the rename, raises too, over a complete dst: dst is never half-written).
#[pyfunction]
#[pyo3(signature = (src, dst, *, to, only=None, keep=None, saturate=false, fp8_scale="none", layout=None, activation_amax=None, rest=None, rounding="nearest", seed=0, scale_search="spec", shard_size=None))]
#[allow(clippy::too_many_arguments)]
pub fn convert<'py>(
    py: Python<'py>,
    src: PathBuf,
    dst: Option<PathBuf>,
    to: &str,
    only: Option<Vec<String>>,
    keep: Option<Vec<String>>,
    saturate: bool,
    fp8_scale: &str,
    layout: Option<&str>,
    activation_amax: Option<PathBuf>,
    rest: Option<&str>,
    rounding: &str,
    seed: u64,
    scale_search: &str,
    shard_size: Option<u64>,
) -> PyResult<Bound<'py, PyList>> {
    let value_error = |e: lowp_io::Error| PyValueError::new_err(e.to_string());
    let to = Target::parse(to).map_err(value_error)?;
    let rest = rest
        .map(FloatType::parse)
        .transpose()
        .map_err(value_error)?;
    let rounding = ElementRounding::parse(rounding, seed).ok_or_else(|| {
        PyValueError::new_err(format!(
            "rounding must be {}, not '{rounding}'",
            either(&ElementRounding::NAMES)
        ))
    })?;
    let search = ScaleSearch::parse(scale_search).ok_or_else(|| {
        PyValueError::new_err(format!(
            "scale_search must be {}, not '{scale_search}'",
            either(&ScaleSearch::ALL.map(ScaleSearch::name))
        ))
    })?;
    let per_tensor_scale = match fp8_scale {
        "none" => false,
        "per-tensor" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "fp8_scale must be 'none' or 'per-tensor', not '{other}'"
            )));
        }
    };
    let layout = layout
        .map(|l| {
            Layout::parse(l).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "layout must be one of {}, not '{l}'",
                    Layout::ALL.map(Layout::name).join(", ")
                ))
            })
        })
        .transpose()?;
    let opts = Options {
        rest,
        quant: QuantOptions {
            rounding,
            search,
            ..QuantOptions::default()
        },
        layout,
        activation_amax,
        shard_size,
        only: only.unwrap_or_default(),
        keep_f32: keep.unwrap_or_default(),
        saturate,
        per_tensor_scale,
        ..Options::new(src, dst, to)
    };
    // lowp-io's rules on which options go together; its messages name them as the keywords.
    opts.validate().map_err(value_error)?;
    let report = run_interruptibly(py, &opts)?.map_err(|e| match e {
        lowp_io::Error::Invalid(m) => PyValueError::new_err(m),
        lowp_io::Error::File(m) => PyOSError::new_err(m),
        lowp_io::Error::Cancelled => PyKeyboardInterrupt::new_err(e.to_string()),
    })?;
    // What a model directory held that the tensors do not show: entries left out, other
    // models converted on their own, metadata dropped.
    let said = report
        .skipped
        .iter()
        .map(|s| format!("left out {s}"))
        .chain(report.notes.iter().cloned());
    for line in said {
        let message = CString::new(format!("lowp.convert: {}", line.replace('\0', "\\0")))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        PyErr::warn(py, &py.get_type::<PyUserWarning>(), &message, 1)?;
    }
    // A pattern that matches nothing is most likely misspelt: say so, as `lowp convert` does.
    let unmatched = opts
        .unmatched_only(&report.tensors)
        .into_iter()
        .map(|p| ("only", p));
    let keep = opts.unmatched_keep_f32(&report.tensors).into_iter();
    for (arg, pattern) in unmatched.chain(keep.map(|p| ("keep", p))) {
        let message = format!("{arg} pattern '{pattern}' matches no tensor").replace('\0', "\\0");
        let message = CString::new(message).map_err(|e| PyValueError::new_err(e.to_string()))?;
        PyErr::warn(py, &py.get_type::<PyUserWarning>(), &message, 1)?;
    }
    let list = PyList::empty(py);
    for record in report.records() {
        let dict = PyDict::new(py);
        for (key, value) in record {
            dict.set_item(key, to_python(py, &value)?)?;
        }
        list.append(dict)?;
    }
    Ok(list)
}

/// `'a' or 'b'` for the names `[a, b]` (`'a', 'b' or 'c'` for three).
fn either(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// Runs the conversion on a thread of its own while this one, without the GIL, looks at
/// Python's signals every few milliseconds: Ctrl-C (or any signal whose handler raises) sets
/// the conversion's cancel flag, the conversion stops in whatever phase it is (reading
/// headers, converting, copying the other files, before renaming), removes what it wrote,
/// and the handler's exception (KeyboardInterrupt) is raised.
fn run_interruptibly(
    py: Python<'_>,
    opts: &Options,
) -> PyResult<Result<lowp_io::Report, lowp_io::Error>> {
    let cancel = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| lowp_io::convert_with(opts, &lowp_io::NoProgress, &cancel));
        let mut raised: Option<PyErr> = None;
        while !worker.is_finished() {
            py.detach(|| {
                let start = Instant::now();
                while !worker.is_finished() && start.elapsed() < SIGNAL_POLL {
                    std::thread::sleep(Duration::from_millis(2));
                }
            });
            if raised.is_none()
                && let Err(e) = py.check_signals()
            {
                cancel.store(true, Ordering::Relaxed);
                raised = Some(e);
            }
        }
        let result = worker
            .join()
            .map_err(|_| PyRuntimeError::new_err("lowp.convert: the conversion panicked"))?;
        match raised {
            Some(e) => Err(e),
            None => Ok(result),
        }
    })
}

/// How often a running conversion looks at Python's signals.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// A JSON value of a report record as a Python object (numbers stay ints or floats).
fn to_python<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => s.into_pyobject(py)?.into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_python(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_python(py, v)?)?;
            }
            dict.into_any()
        }
    })
}
