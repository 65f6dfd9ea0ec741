//! The reports of the `lowp` command, as a library: `lowp formats` ([`formats::table`]) and
//! `lowp inspect` ([`inspect::run`]), with the format registry and the table rendering they
//! share. The binary (`main.rs`) adds the command line and `lowp bench`; the Python module
//! (crate `lowp-py`) returns the same tables as `lowp.formats()` and `lowp.inspect()`, so both
//! show the same figures from one implementation.
#![forbid(unsafe_code)]

pub mod bits;
pub mod error;
pub mod formats;
pub mod input;
pub mod inspect;
pub mod number;
pub mod output;
pub mod registry;
pub mod rounding;
