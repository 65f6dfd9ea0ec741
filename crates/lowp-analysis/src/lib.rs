//! What a low-precision number format does to your numbers, as data.
//!
//! The reports of the `lowp` command, without the command line: the table of every format
//! ([`formats::table`]), what rounding one value into each format gives ([`inspect::run`]),
//! and the precision analyses, measured exhaustively (`docs/precision-analysis.md` sets the f16
//! figures beside the hand-measured FP16 tables of the guide this project grew from):
//!
//! * [`error_table`]: every element-wise op the tensor layer runs, on every input of a format,
//!   against f64 and against f32;
//! * [`conversion`]: rounding every f32 in a format's range into it;
//! * [`accumulate`]: running sums in the format, in f32, by Kahan's method and pairwise;
//! * [`report`]: all of it on one Markdown page; `plot` (cargo feature `plot`): the PNG
//!   pictures.
//!
//! Results are plain data ([`output::Table`] renders them as text, Markdown, CSV or JSON).
//! Long computations take a [`Control`]: a [`Progress`] to report to and a cancel flag; the
//! library prints nothing and exits nothing, it returns an [`Error`].
//!
//! ```
//! use lowp_analysis::{Control, error_table, registry};
//!
//! // The error of sqrt and exp on every f16 input, as data.
//! let f16 = registry::lookup("f16")?;
//! let rows = error_table::run(&[f16], &["sqrt", "exp"], &Control::none())?;
//! assert_eq!(rows.len(), 2);
//! let sqrt = &rows[0];
//! assert_eq!((sqrt.format, sqrt.function), ("f16", "sqrt"));
//! // sqrt is correctly rounded: never more than half a unit in the last place off.
//! assert!(sqrt.exact.max_rel <= 2f64.powi(-11));
//! // The same rows as a table, in any style.
//! let table = error_table::table(&rows, error_table::View::All);
//! assert!(table.to_csv().starts_with("format,"));
//! # Ok::<(), lowp_analysis::Error>(())
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod accumulate;
pub mod bits;
pub mod conversion;
pub mod error;
pub mod error_table;
pub mod format_grid;
pub mod formats;
pub mod input;
pub mod inspect;
pub mod number;
pub mod output;
#[cfg(feature = "plot")]
pub mod plot;
pub mod progress;
pub mod registry;
pub mod report;
pub mod rounding;

pub use error::{Error, Result};
pub use progress::{Control, NoProgress, Progress};
