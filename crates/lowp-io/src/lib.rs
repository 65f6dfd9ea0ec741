//! Checkpoints in low-precision formats: safetensors, NumPy `.npy` and `.npz` files read,
//! converted to another float type as a stream, and written whole or not at all, with a
//! per-tensor report of what the conversion cost.
//!
//! This is the library under `lowp convert`; it prints nothing and never exits. Progress goes
//! to a [`Progress`] callback, a cancel flag stops a conversion between two blocks, and every
//! failure is an [`Error`] whose message names the file, the tensor and what is wrong.
//!
//! # Converting a file
//!
//! ```
//! # fn main() -> Result<(), lowp_io::Error> {
//! # let dir = std::env::temp_dir().join(format!("lowp-io-lib-{}", std::process::id()));
//! # std::fs::create_dir_all(&dir).unwrap();
//! # let model = dir.join("model.safetensors");
//! # let header = br#"{"norm":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}"#;
//! # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
//! # bytes.extend(header);
//! # bytes.extend([1.0f32, 1e6, 0.5].iter().flat_map(|x| x.to_le_bytes()));
//! # std::fs::write(&model, bytes).unwrap();
//! use lowp_io::{FloatType, Options, Verdict};
//!
//! let mut opts = Options::new(&model, None, FloatType::F8E4M3FN); // None: a dry run
//! opts.keep_f32 = vec!["*norm*".into()];
//! let report = lowp_io::convert(&opts)?;
//! let verdicts: Vec<Verdict> = report.tensors.iter().map(|t| t.verdict(false).0).collect();
//! // `norm` stays f32; 1e6 is beyond E4M3's 448 and becomes NaN.
//! assert_eq!(verdicts, [Verdict::Kept, Verdict::Fail]);
//! assert_eq!(report.tensors[1].verdict(false).1, "1 overflowed, 1 became NaN");
//! # std::fs::remove_dir_all(&dir).unwrap();
//! # Ok(())
//! # }
//! ```
//!
//! # The parts
//!
//! * [`convert`] / [`convert_with`]: the whole conversion, planned per tensor by
//!   [`Options::plan`];
//! * [`safetensors`] and the NumPy reader (with its own `.npy` header parser, linear in the
//!   header's length): headers read and checked, output headers laid out;
//! * the pipeline: one tensor's data moved block by block on all threads;
//! * [`float_type`]: the storage types ([`FloatType`], read off lowp's format table);
//! * [`block_convert`]: the conversion of one block between two of them;
//! * [`report`]: the per-tensor figures, verdicts and the JSON report;
//! * [`files`]: positioned I/O, the temporary output renamed into place, same-file checks.
//! * [`leftovers`]: temporary outputs of killed runs, removed by the next run beside them.
//! * [`size`]: sizes as people write them (`5GB`, `256MiB`), such as a shard size.
#![forbid(unsafe_code)]

pub mod block_convert;
mod convert;
pub mod error;
mod file_kind;
pub mod files;
pub mod float_type;
mod glob;
mod jobs;
pub mod layouts;
pub mod leftovers;
pub mod model;
mod model_dir;
mod npy_header;
mod numpy;
mod options;
mod outdir;
pub mod packed;
mod pipeline;
mod plan;
pub mod progress;
pub mod quant;
mod quant_tensor;
pub mod report;
mod run_tensor;
pub mod safetensors;
pub mod selection;
pub mod size;
mod tiles;
mod write_model;

pub use convert::{convert, convert_with};
pub use error::Error;
pub use file_kind::Kind;
pub use float_type::FloatType;
pub use glob::glob;
pub use leftovers::Leftover;
pub use options::{Options, Setting, Target};
pub use plan::Plan;
pub use progress::{NoProgress, Progress};
pub use report::{Report, Skipped, TensorReport, Verdict};
