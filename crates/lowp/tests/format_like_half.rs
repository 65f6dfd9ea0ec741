//! The formatting traits of `f16` and `bf16` print exactly what the `half` crate's print, on
//! every one of the 65,536 bit patterns of each, with every kind of flag: precision, width,
//! fill and alignment, sign, zero padding and the alternate form, in `Display`, `Debug`,
//! `LowerExp` and `UpperExp`, and the bit formats `{:x}`, `{:X}`, `{:b}`, `{:o}`. The other
//! formats follow the same rule (the value's f32, as the `float8` crate prints its FP8 types):
//! checked here against `f32` itself on every bit pattern.

use lowp::LowpFloat;

/// Asserts that `ours` and `theirs` print alike with every format string given.
macro_rules! same {
    ($what:expr, $ours:expr, $theirs:expr; $($f:literal),* $(,)?) => {$(
        let (a, b) = (format!($f, $ours), format!($f, $theirs));
        assert!(a == b, "{} {}: lowp {a:?}, half {b:?}", $what, $f);
    )*};
}

/// Every flag the formatting traits read, in each of the four traits, and precisions 0 to 12
/// and a long one (`{:.45}` reaches the last digit of the smallest bf16 subnormal's f32).
macro_rules! every_flag {
    ($what:expr, $ours:expr, $theirs:expr) => {
        same!($what, $ours, $theirs;
            "{}", "{:.0}", "{:.1}", "{:.2}", "{:.3}", "{:.4}", "{:.5}", "{:.6}", "{:.7}",
            "{:.8}", "{:.9}", "{:.10}", "{:.11}", "{:.12}", "{:.45}",
            "{:12}", "{:<12}|", "{:^12}|", "{:>12}", "{:*^16}", "{:+}", "{:012}", "{:+012.3}",
            "{:#}", "{:-^3}", "{:1}",
            "{:?}", "{:#?}", "{:.0?}", "{:.3?}", "{:+?}", "{:12?}", "{:<12?}|", "{:+016?}",
            "{:e}", "{:.0e}", "{:.2e}", "{:.9e}", "{:12e}", "{:+e}", "{:#e}", "{:012e}",
            "{:E}", "{:.3E}", "{:>14E}", "{:+E}",
            "{:x}", "{:X}", "{:b}", "{:o}", "{:#x}", "{:08b}", "{:>8X}", "{:#o}",
        );
    };
}

#[test]
fn f16_prints_as_half_on_every_bit_pattern() {
    for bits in 0..=u16::MAX {
        let what = format!("f16 {bits:#06x}");
        every_flag!(what, lowp::f16::from_bits(bits), half::f16::from_bits(bits));
    }
}

#[test]
fn bf16_prints_as_half_on_every_bit_pattern() {
    for bits in 0..=u16::MAX {
        let what = format!("bf16 {bits:#06x}");
        every_flag!(
            what,
            lowp::bf16::from_bits(bits),
            half::bf16::from_bits(bits)
        );
    }
}

/// What `half` prints for a value, written with `f32` alone: `Display` and `Debug` of the f32
/// with the flags, `{:e}`/`{:E}` of the f32 without them, the bits without them.
struct AsHalfWould(f32, u32);

/// `AsHalfWould`'s formatting traits: `$how` formats `$field` (`self.0`, the f32, or `self.1`,
/// the bits) either `with_flags` (the f32's own trait) or as the literal `$spec` alone.
macro_rules! as_half_would {
    ($($trait:ident: $field:tt $how:tt),* $(,)?) => {$(
        impl std::fmt::$trait for AsHalfWould {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                as_half_would!(@fmt self, f, $trait, $field, $how)
            }
        }
    )*};
    (@fmt $self:ident, $f:ident, $trait:ident, $field:tt, with_flags) => {
        std::fmt::$trait::fmt(&$self.$field, $f)
    };
    (@fmt $self:ident, $f:ident, $trait:ident, $field:tt, $spec:literal) => {
        write!($f, $spec, $self.$field)
    };
}

as_half_would!(
    Display: 0 with_flags, Debug: 0 with_flags, LowerExp: 0 "{:e}", UpperExp: 0 "{:E}",
    LowerHex: 1 "{:x}", UpperHex: 1 "{:X}", Binary: 1 "{:b}", Octal: 1 "{:o}",
);

/// The narrow formats print by the same rule as `f16` and `bf16`: their exact f32.
#[test]
fn every_other_format_prints_its_f32_as_half_would() {
    macro_rules! check {
        ($t:ident) => {
            for bits in 0..1u32 << lowp::$t::FORMAT.total_bits() {
                let x = lowp::$t::from_bits_u32(bits);
                let what = format!("{} {bits:#x}", stringify!($t));
                every_flag!(what, x, AsHalfWould(x.to_f32(), bits));
            }
        };
    }
    lowp::for_each_format!(check);
}

/// The checks above can fail: the shortest decimal, which `shortest()` prints, is not what
/// half prints.
#[test]
fn shortest_is_not_what_half_prints() {
    let x = lowp::f16::from_f32(0.1);
    assert_ne!(
        x.shortest().to_string(),
        half::f16::from_f32(0.1).to_string()
    );
    assert_eq!(x.shortest().to_string(), "0.1");
}
