//! Arithmetic: computed in f32 and rounded once.
