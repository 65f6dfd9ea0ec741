//! The parity cases against the `half` crate itself: each states half's behaviour.

// The cases call the operators on references and compare NaNs on purpose (those are the impls
// under test), and write exact binary values in full.
#![allow(
    clippy::op_ref,
    clippy::neg_cmp_op_on_partial_ord,
    clippy::excessive_precision
)]
use half as subject;

/// Which crate the cases run against.
const LOWP: bool = false;

include!("../cases/mod.rs");
