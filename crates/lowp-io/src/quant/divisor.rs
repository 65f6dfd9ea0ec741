//! What an element of a block is worth, and the segments a row's blocks are handled in: what
//! the codec and its f32 routes (`nearest_f32`) share.

/// Elements of a row handled at a time by the row-wise schemes (32 MX or 64 nvfp4 blocks):
/// small enough for stack buffers and L1, large enough to amortise lowp's dispatch.
pub(super) const SEG: usize = 1024;

/// Blocks of a row-wise segment.
pub(super) const SEG_BLOCKS: usize = SEG / 16;

/// What an element of a block is worth: `x̂ = q * step`, and `q = round(x / step)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Divisor {
    /// The scale is zero: every element is ±0 with its value's sign (a NaN stays NaN);
    /// nothing is divided by zero.
    Zero,
    /// The scale is `2^e` (MX): `q = round(x * 2^-e)`.
    Pow2(i32),
    /// The scale is this positive finite f64 of at most 28 significant bits: `q = round(x /
    /// d)` from the f64 quotient (exact, by the lemma of the codec's module doc).
    Div(f64),
}

impl Divisor {
    /// The value of one unit of an element.
    pub(super) fn step(self) -> f64 {
        match self {
            Divisor::Zero => 0.0,
            Divisor::Pow2(e) => pow2_f64(e),
            Divisor::Div(d) => d,
        }
    }
}

/// An element under a zero scale: ±0 with the sign of `x`, infinities included (never
/// `inf * 0`, whose NaN's sign is the CPU's choice); a NaN stays itself.
#[inline]
pub fn zeroed(x: f64) -> f64 {
    if x.is_nan() { x } else { 0f64.copysign(x) }
}

/// `2^k` as an f64, for `-1022 <= k <= 1023`.
#[inline]
pub(super) fn pow2_f64(k: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}
