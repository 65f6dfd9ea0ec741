// The cases, included by `tests/with_half.rs` and `tests/with_lowp.rs` after they name the crate
// under test `subject` and set `LOWP`. Written once against half 2.7's documented API.

/// `half` where the crate under test is half, `lowp` where it is lowp: the two answers of a
/// case where lowp differs on purpose (each listed in docs/migrating-from-half.md).
#[allow(dead_code)]
fn differs<T>(half: T, lowp: T) -> T {
    if LOWP { lowp } else { half }
}

/// Values, constants, classification, comparison and arithmetic.
mod values {
    use super::*;
    include!("values.rs");
}

/// Parsing and formatting.
mod text {
    use super::*;
    include!("text.rs");
}

/// `HalfFloatSliceExt`, `HalfBitsSliceExt`, `HalfFloatVecExt`, `HalfBitsVecExt`.
mod slices {
    use super::*;
    include!("slices.rs");
}

/// The optional features' traits: num-traits, bytemuck, zerocopy, serde, rand_distr.
mod features {
    use super::*;
    include!("features.rs");
}
