use subject::{bf16, f16};

#[test]
fn num_traits_float_and_friends() {
    use num_traits::{Bounded, Float, FloatConst, Num, NumCast, One, ToPrimitive, Zero};
    fn hypotenuse<F: Float>(a: F, b: F) -> F {
        (a * a + b * b).sqrt()
    }
    assert_eq!(
        hypotenuse(f16::from_f32(3.0), f16::from_f32(4.0)).to_f32(),
        5.0
    );
    assert_eq!(Float::powi(bf16::from_f32(2.0), 10).to_f32(), 1024.0);
    assert_eq!(Float::floor(f16::from_f32(-1.5)).to_f32(), -2.0);
    assert_eq!(<f16 as Float>::max_value().to_bits(), f16::MAX.to_bits());
    assert!(<f16 as Float>::nan().is_nan());
    assert_eq!(<f16 as Zero>::zero(), f16::ZERO);
    assert_eq!(<bf16 as One>::one(), bf16::ONE);
    assert_eq!(<f16 as Bounded>::min_value(), f16::MIN);
    assert_eq!(<f16 as FloatConst>::PI(), f16::PI);
    assert_eq!(
        <f16 as Num>::from_str_radix("1.5", 10).unwrap().to_f32(),
        1.5
    );
    assert_eq!(f16::from_f32(300.7).to_i32(), Some(300));
    assert_eq!(f16::from_f32(-1.0).to_u8(), None);
    assert_eq!(f16::INFINITY.to_i64(), None);
    assert_eq!(<f16 as NumCast>::from(2.5f64).unwrap().to_f32(), 2.5);
    assert_eq!(
        <bf16 as num_traits::FromPrimitive>::from_u8(7)
            .unwrap()
            .to_f32(),
        7.0
    );
}

#[test]
fn num_traits_as_primitive() {
    use num_traits::AsPrimitive;
    let x: f16 = AsPrimitive::<f16>::as_(3u8);
    assert_eq!(x.to_f32(), 3.0);
    let y: f32 = AsPrimitive::<f32>::as_(bf16::from_f32(1.5));
    assert_eq!(y, 1.5);
    let z: bf16 = AsPrimitive::<bf16>::as_(f16::from_f32(0.5));
    assert_eq!(z.to_f32(), 0.5);
    // 2^24 + 2^16 + 1 lies just above the tie between two bf16 neighbours: rounded once it
    // goes up; through f32 (half) it first lands on the tie, which goes to even.
    let n: bf16 = AsPrimitive::<bf16>::as_(16_842_753u64);
    assert_eq!(n.to_f64(), differs(16_777_216.0, 16_908_288.0));
}

#[test]
fn num_traits_bytes() {
    use num_traits::{FromBytes, ToBytes};
    let two = f16::from_f32(2.0);
    assert_eq!(ToBytes::to_le_bytes(&two), [0x00, 0x40]);
    assert_eq!(ToBytes::to_be_bytes(&two), [0x40, 0x00]);
    assert_eq!(<f16 as FromBytes>::from_le_bytes(&[0x00, 0x40]), two);
    assert_eq!(
        <bf16 as FromBytes>::from_be_bytes(&[0x40, 0x00]).to_f32(),
        2.0
    );
}

#[test]
fn bytemuck_casts() {
    let halves = [f16::ONE, f16::from_f32(2.0)];
    let bits: &[u16] = bytemuck::cast_slice(&halves);
    assert_eq!(bits, [0x3c00, 0x4000]);
    let back: &[bf16] = bytemuck::cast_slice(&[0x3f80u16]);
    assert_eq!(back[0], bf16::ONE);
    let zeroed: f16 = bytemuck::Zeroable::zeroed();
    assert_eq!(zeroed.to_bits(), 0);
}

#[test]
fn zerocopy_views() {
    use zerocopy::{FromBytes, IntoBytes};
    let x = f16::ONE;
    assert_eq!(x.as_bytes(), 0x3c00u16.to_ne_bytes());
    let y = bf16::read_from_bytes(&0x4000u16.to_ne_bytes()).unwrap();
    assert_eq!(y.to_f32(), 2.0);
    let words = [0x3c00u16, 0, 0x4000];
    let many = <[f16]>::ref_from_bytes(words.as_bytes()).unwrap();
    assert_eq!(many[2].to_f32(), 2.0);
    assert_eq!(many.len(), 3);
}

#[test]
fn serde_writes_the_bits() {
    assert_eq!(serde_json::to_string(&f16::ONE).unwrap(), "15360");
    assert_eq!(serde_json::to_string(&bf16::NEG_ONE).unwrap(), "49024");
    let back: f16 = serde_json::from_str("15360").unwrap();
    assert_eq!(back, f16::ONE);
    let v: Vec<bf16> = serde_json::from_str("[16256, 16384]").unwrap();
    assert_eq!(v.iter().map(|x| x.to_f32()).collect::<Vec<_>>(), [1.0, 2.0]);
}

#[test]
fn serde_as_f32_and_as_string() {
    #[derive(serde::Serialize)]
    struct Weights {
        #[serde(serialize_with = "f16::serialize_as_f32")]
        scale: f16,
        #[serde(serialize_with = "bf16::serialize_as_string")]
        bias: bf16,
    }
    let w = Weights {
        scale: f16::from_f32(0.5),
        bias: bf16::from_f32(-1.5),
    };
    assert_eq!(
        serde_json::to_string(&w).unwrap(),
        r#"{"scale":0.5,"bias":"-1.5"}"#
    );
    // half's plain Deserialize of JSON reads bits only, so it cannot read these forms back;
    // lowp reads a float or a string as the value (an integer is still the bits).
    let x = serde_json::from_str::<f16>("0.5").ok().map(f16::to_f32);
    let y = serde_json::from_str::<bf16>("\"-1.5\"")
        .ok()
        .map(bf16::to_f32);
    assert_eq!((x, y), differs((None, None), (Some(0.5), Some(-1.5))));
}

#[test]
fn rand_distr_sampling() {
    use rand::{Rng, SeedableRng};
    use rand_distr::{Distribution, Normal, StandardNormal, StandardUniform, Uniform};
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let u: f16 = rng.sample(StandardUniform);
    assert!((0.0..=1.0).contains(&u.to_f32()));
    let n: bf16 = rng.sample(StandardNormal);
    assert!(n.is_finite());
    let range = Uniform::new(f16::from_f32(2.0), f16::from_f32(3.0)).unwrap();
    for _ in 0..100 {
        let x = range.sample(&mut rng).to_f32();
        assert!((2.0..=3.0).contains(&x), "{x}");
    }
    let normal = Normal::new(bf16::ZERO, bf16::ONE).unwrap();
    let mean: f32 = (0..2000)
        .map(|_| normal.sample(&mut rng).to_f32())
        .sum::<f32>()
        / 2000.0;
    assert!(mean.abs() < 0.1, "{mean}");
}

#[test]
fn num_traits_methods_keep_their_signatures_with_method_syntax() {
    // With the traits in scope, a half user calls them as methods. Any inherent method of the
    // same name takes precedence, so each must have the trait's signature and meaning; the
    // annotated types make a different signature a compile error.
    use core::num::FpCategory;
    use num_traits::{Float, FromPrimitive, NumCast, ToPrimitive};
    let x = f16::from_f32(2.5);
    let y = f16::from_f32(-0.75);
    let s: [f16; 6] = [
        f16::nan(),
        f16::infinity(),
        f16::neg_infinity(),
        f16::neg_zero(),
        f16::min_value(),
        f16::max_value(),
    ];
    assert_eq!(s[5], f16::MAX);
    let t: [f16; 2] = [f16::min_positive_value(), f16::epsilon()];
    assert_eq!(t, [f16::MIN_POSITIVE, f16::EPSILON]);
    let flags: [bool; 7] = [
        x.is_nan(),
        x.is_infinite(),
        x.is_finite(),
        x.is_normal(),
        x.is_subnormal(),
        x.is_sign_positive(),
        x.is_sign_negative(),
    ];
    assert_eq!(flags, [false, false, true, true, false, true, false]);
    let c: FpCategory = x.classify();
    assert_eq!(c, FpCategory::Normal);
    let unary: [f16; 11] = [
        x.floor(),
        x.ceil(),
        x.round(),
        x.trunc(),
        x.fract(),
        y.abs(),
        y.signum(),
        x.recip(),
        x.sqrt(),
        x.cbrt(),
        x.to_degrees(),
    ];
    assert_eq!(
        unary.map(|v| v.to_f32())[..7],
        [2.0, 3.0, 3.0, 2.0, 0.5, 0.75, -1.0]
    );
    let exps: [f16; 6] = [x.exp(), x.exp2(), x.ln(), x.log2(), x.log10(), x.exp_m1()];
    assert_eq!(exps[1].to_f32(), 5.65625);
    let trig: [f16; 12] = [
        x.sin(),
        x.cos(),
        x.tan(),
        y.asin(),
        y.acos(),
        x.atan(),
        x.sinh(),
        x.cosh(),
        x.tanh(),
        x.asinh(),
        x.acosh(),
        y.atanh(),
    ];
    assert!(trig.iter().all(|v| v.is_finite()));
    let binary: [f16; 10] = [
        x.powi(2),
        x.powf(y),
        x.log(x),
        x.max(y),
        x.min(y),
        x.clamp(y, f16::ONE),
        x.abs_sub(y),
        x.hypot(y),
        x.atan2(y),
        x.copysign(y),
    ];
    assert_eq!(binary[0].to_f32(), 6.25);
    assert_eq!(binary[6].to_f32(), 3.25);
    let fused: f16 = x.mul_add(x, y);
    assert_eq!(fused.to_f32(), 5.5);
    let (sin, cos): (f16, f16) = x.sin_cos();
    assert_eq!((sin, cos), (x.sin(), x.cos()));
    let more: [f16; 2] = [x.ln_1p(), x.to_radians()];
    assert!(more[0].is_finite());
    let decoded: (u64, i16, i8) = x.integer_decode();
    // Both mean 2.5; half decodes the value's f32, lowp the format's own significand.
    assert_eq!(decoded, differs((10485760, -22, 1), (1280, -9, 1)));
    let ints: (Option<i32>, Option<u8>, Option<i64>, Option<u64>) =
        (x.to_i32(), y.to_u8(), x.to_i64(), x.to_u64());
    assert_eq!(ints, (Some(2), Some(0), Some(2), Some(2)));
    // `to_f32`, `to_f64`, `from_f32` and `from_f64` are inherent in both crates, so they
    // return the plain value, not num-traits' `Option`.
    let floats: (f32, f64, Option<f64>) = (x.to_f32(), x.to_f64(), ToPrimitive::to_f64(&x));
    assert_eq!(floats, (2.5, 2.5, Some(2.5)));
    let from: (Option<f16>, Option<f16>, f16) =
        (f16::from_i32(3), f16::from_u64(70000), f16::from_f64(0.5));
    assert_eq!(from.0.unwrap().to_f32(), 3.0);
    assert!(from.1.unwrap().is_infinite());
    let cast: Option<bf16> = <bf16 as NumCast>::from(7u16);
    assert_eq!(cast.unwrap().to_f32(), 7.0);
}
