//! The math functions, computed in f64 and rounded once.
