//! The benchmarks of `lowp bench`, as a library: throughput of lowp's hot paths, each beside a
//! baseline measured in the same run (memcpy, the `half` crate, cp, NumPy), so that a shared,
//! noisy machine still gives meaningful ratios.
//!
//! * [`convert`]: bulk slice conversion of every format, both ways, beside memcpy and `half`;
//! * [`convert_file`]: `lowp_io`'s conversion of a whole generated safetensors file beside cp;
//! * [`sum`]: the tensor layer's sum beside memcpy and a bare read;
//! * [`matmul`]: the tensor layer's matrix products (GFLOP/s) beside NumPy ([`numpy`]).
//!
//! Each takes a typed configuration and returns its measurements as a [`Report`]: the table,
//! what its columns mean, and the JSON records; [`timing`] holds the harness (a figure is the best time
//! per call over several samples after a warm-up call, which is least sensitive to other work
//! on a shared machine) and [`data`] the generated values. The library prints nothing and
//! exits nothing: what it is doing goes to a [`Progress`], failures are an [`Error`].
#![forbid(unsafe_code)]

pub mod convert;
pub mod convert_file;
pub mod data;
pub mod error;
pub mod matmul;
pub mod numpy;
pub mod progress;
pub mod report;
pub mod sum;
pub mod timing;

pub use error::{Error, Result};
pub use progress::{NoProgress, Progress};
pub use report::Report;
