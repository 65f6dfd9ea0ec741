//! The parity cases against the `half` crate itself: each states half's behaviour.

use half as subject;

/// Which crate the cases run against.
const LOWP: bool = false;

include!("../cases/mod.rs");
