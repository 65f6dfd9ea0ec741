//! The parity cases with `half` renamed to `lowp`: a renaming switch builds and behaves alike.

// The cases call the operators on references and compare NaNs on purpose (those are the impls
// under test), and write exact binary values in full.
#![allow(
    clippy::op_ref,
    clippy::neg_cmp_op_on_partial_ord,
    clippy::excessive_precision
)]
use lowp as subject;

/// Which crate the cases run against.
const LOWP: bool = true;

include!("../cases/mod.rs");
