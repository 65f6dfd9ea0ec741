//! The reports of the `lowp` command, as a library: `lowp formats` ([`formats::table`]) and
//! `lowp inspect` ([`inspect::run`]), with the format registry and the table rendering they
//! share. The binary (`main.rs`) adds the command line and `lowp bench`; the Python module
//! (crate `lowp-py`) returns the same tables as `lowp.formats()` and `lowp.inspect()`, so both
//! show the same figures from one implementation.
#![forbid(unsafe_code)]

/// The README's examples, compiled and run as doc tests here, in the crate that depends on
/// every library crate of the workspace, so each example can use any of them.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

pub mod bits;
pub mod error;
pub mod formats;
pub mod input;
pub mod inspect;
pub mod number;
pub mod output;
pub mod registry;
pub mod rounding;
