//! The parity cases with `half` renamed to `lowp`: a renaming switch builds and behaves alike.

use lowp as subject;

/// Which crate the cases run against.
const LOWP: bool = true;

include!("../cases/mod.rs");
