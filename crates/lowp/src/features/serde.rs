//! `serde` support.
