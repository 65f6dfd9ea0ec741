//! `rand` support.
