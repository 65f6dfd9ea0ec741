//! The one error type of the crate: every message names the op, the dtypes or the shapes
//! involved, so a user can see what to fix.

use crate::backend::Backend;
use crate::dtype::DType;
use std::fmt;
use std::str::FromStr;

/// What went wrong in a tensor operation.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// No kernel is registered under the key a call derived.
    NoKernel {
        /// The op asked for.
        op: String,
        /// The backend asked for.
        backend: Backend,
        /// The dtype the inputs have.
        dtype: DType,
        /// The dtypes the op has kernels for on that backend (empty for an unknown op).
        registered: Vec<DType>,
    },
    /// An op was asked for with another signature than its kernels have (a two-tensor op
    /// called as a one-tensor op: `Tensor::unary("matmul")`).
    Signature {
        /// The op asked for.
        op: String,
        /// The signature the call needs (`"unary"`).
        expected: &'static str,
        /// The signature the op's kernels have (`"binary"`).
        registered: &'static str,
    },
    /// A tensor's data was asked for as another type than its dtype.
    DTypeMismatch {
        /// The dtype asked for.
        expected: DType,
        /// The tensor's dtype.
        found: DType,
    },
    /// The operands of an op have different dtypes (no implicit promotion: cast first).
    OperandDTypes {
        /// The op.
        op: &'static str,
        /// The dtypes of the operands, in order.
        dtypes: Vec<DType>,
    },
    /// Two shapes do not broadcast.
    Broadcast {
        /// The op.
        op: &'static str,
        /// The first operand's shape.
        lhs: Vec<usize>,
        /// The second operand's shape.
        rhs: Vec<usize>,
    },
    /// Shapes that must agree in some other way do not (matmul's inner sizes, add_n's
    /// operands, a layer norm's weight).
    Shape {
        /// The op.
        op: &'static str,
        /// What is wrong, with the shapes.
        message: String,
    },
    /// The data does not fill the shape.
    ElementCount {
        /// The shape asked for.
        shape: Vec<usize>,
        /// Elements given.
        len: usize,
    },
    /// An axis beyond the tensor's rank.
    Axis {
        /// The op.
        op: &'static str,
        /// The axis asked for.
        axis: usize,
        /// The tensor's rank.
        rank: usize,
    },
    /// An op that has no value on an empty tensor (max, min, argmax, mean).
    Empty {
        /// The op.
        op: &'static str,
    },
    /// An argument out of its range (a class label, a step count, a ratio).
    Argument {
        /// The op.
        op: &'static str,
        /// What is wrong.
        message: String,
    },
    /// A dtype name that is not one.
    UnknownDType(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoKernel {
                op,
                backend,
                dtype,
                registered,
            } if registered.is_empty() => write!(
                f,
                "no op '{op}' is registered on the {backend} backend (asked for dtype {dtype})"
            ),
            Error::NoKernel {
                op,
                backend,
                dtype,
                registered,
            } => write!(
                f,
                "op '{op}' has no {backend} kernel for dtype {dtype}; registered dtypes: {}",
                join(registered)
            ),
            Error::Signature {
                op,
                expected,
                registered,
            } => write!(
                f,
                "op '{op}' has kernels of the {registered} signature, but was called with the \
                 {expected} one"
            ),
            Error::DTypeMismatch { expected, found } => write!(
                f,
                "the tensor has dtype {found}, not the {expected} asked for"
            ),
            Error::OperandDTypes { op, dtypes } => write!(
                f,
                "{op}: the operands have different dtypes ({}); cast them to one first",
                join(dtypes)
            ),
            Error::Broadcast { op, lhs, rhs } => write!(
                f,
                "{op}: shapes {lhs:?} and {rhs:?} cannot be broadcast together"
            ),
            Error::Shape { op, message } => write!(f, "{op}: {message}"),
            Error::ElementCount { shape, len } => write!(
                f,
                "shape {shape:?} holds {} elements, but {len} were given",
                shape
                    .iter()
                    .try_fold(1usize, |n, &d| n.checked_mul(d))
                    .map_or("too many".to_string(), |n| n.to_string())
            ),
            Error::Axis { op, axis, rank } => write!(
                f,
                "{op}: axis {axis} is out of range for a tensor of rank {rank}"
            ),
            Error::Empty { op } => write!(f, "{op}: the tensor is empty, so there is no result"),
            Error::Argument { op, message } => write!(f, "{op}: {message}"),
            Error::UnknownDType(name) => write!(
                f,
                "unknown dtype '{name}'; valid dtypes: {}",
                DType::names()
            ),
        }
    }
}

impl std::error::Error for Error {}

impl FromStr for DType {
    type Err = Error;

    /// Parses a dtype name as [`DType::from_name`] does; an unknown name is an
    /// [`Error::UnknownDType`], whose message lists the valid names.
    ///
    /// ```
    /// use lowp_tensor::DType;
    /// assert_eq!("bfloat16".parse::<DType>().unwrap(), DType::BF16);
    /// assert_eq!("Float8_E4M3FN".parse::<DType>().unwrap(), DType::F8E4M3FN);
    /// assert_eq!("int64".parse::<DType>().unwrap(), DType::I64);
    /// let err = "f7".parse::<DType>().unwrap_err().to_string();
    /// assert!(err.contains("'f7'") && err.contains("f8e4m3fn"));
    /// ```
    fn from_str(s: &str) -> Result<DType> {
        DType::from_name(s).ok_or_else(|| Error::UnknownDType(s.to_string()))
    }
}

/// Names, comma separated.
fn join(dtypes: &[DType]) -> String {
    dtypes
        .iter()
        .map(|d| d.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
