//! `num_traits` support.
