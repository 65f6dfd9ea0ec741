//! `half` support.
