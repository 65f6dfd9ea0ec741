//! Element-wise functions of the lowp formats by table: the correctly rounded value of the
//! function at every bit pattern of the format, computed once per process on first use.
//!
//! A lowp format has at most 2^16 values, so a function of one element is fully described by
//! a table of at most 64 Ki entries (128 KiB, which stays in L2 cache while a kernel runs).
//! Each entry is [`Function::apply`], lowp's scalar function, which is correctly rounded for
//! every input of every format (lowp's `tests/math_correct_rounding.rs` proves it input by
//! input). So the kernels return exactly the scalar functions' bits, and a lookup is also
//! faster than evaluating the function (`cargo bench -p lowp-tensor --bench unary`).

use lowp::LowpFloat;
use lowp::math::Function;
use std::sync::OnceLock;

/// The number of lowp formats with a table slot (`lowp::Format::ALL`).
const FORMATS: usize = lowp::Format::ALL.len();
/// The number of functions with a table slot.
const FUNCTIONS: usize = Function::ALL.len();

/// The tables built so far: the result bits of function `f` at every bit pattern of format
/// `i`, at `[i][f.index()]`.
static TABLES: [[OnceLock<Box<[u16]>>; FUNCTIONS]; FORMATS] =
    [const { [const { OnceLock::new() }; FUNCTIONS] }; FORMATS];

/// The table of `f` for `T`, built on first use.
fn table<T: LowpFloat>(f: Function) -> &'static [u16] {
    let format = lowp::Format::ALL
        .iter()
        .position(|fmt| fmt.name == T::FORMAT.name)
        .expect("every LowpFloat's format is in lowp::Format::ALL");
    TABLES[format][f.index()].get_or_init(|| {
        (0..1u32 << T::FORMAT.total_bits())
            .map(|bits| f.apply(T::from_bits_u32(bits)).to_bits_u32() as u16)
            .collect()
    })
}

/// `dst[i] = f(src[i])`, correctly rounded, by lookup in `f`'s table for `T`.
///
/// # Panics
/// If the lengths differ (a kernel bug, never user input).
pub(crate) fn map<T: LowpFloat>(f: Function, src: &[T], dst: &mut [T]) {
    assert_eq!(src.len(), dst.len(), "lowp-tensor: block lengths differ");
    let table = table::<T>(f);
    // A mask rather than a bounds check: the table has an entry for every bit pattern.
    let mask = table.len() - 1;
    for (d, s) in dst.iter_mut().zip(src) {
        *d = T::from_bits_u32(u32::from(table[s.to_bits_u32() as usize & mask]));
    }
}
