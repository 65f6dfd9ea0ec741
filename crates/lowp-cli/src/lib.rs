//! The `lowp` command is a binary (`src/main.rs`); its reports live in the library crate
//! `lowp-analysis`. This library target only compiles the README's examples as doc tests.
#![forbid(unsafe_code)]

/// The README's examples, compiled and run as doc tests here, in the crate that depends on
/// every library crate of the workspace, so each example can use any of them.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;
