use subject::slice::{HalfBitsSliceExt, HalfFloatSliceExt};
use subject::vec::{HalfBitsVecExt, HalfFloatVecExt};
use subject::{bf16, f16};

#[test]
fn the_prelude_brings_the_types_and_the_traits() {
    use subject::prelude::*;
    let v: Vec<f16> = Vec::from_f32_slice(&[0.5]);
    let b: &[bf16] = [0x3f80u16].reinterpret_cast();
    assert_eq!((v.to_f32_vec()[0], b.to_f32_vec()[0]), (0.5, 1.0));
}

#[test]
fn converting_slices() {
    let src = [1.0f32, 0.1, 65520.0, -0.0, f32::NAN];
    let mut halves = [f16::ZERO; 5];
    halves.convert_from_f32_slice(&src);
    let expected: Vec<u16> = src.iter().map(|&x| f16::from_f32(x).to_bits()).collect();
    assert_eq!(halves.map(f16::to_bits)[..4], expected[..4]);
    assert!(halves[4].is_nan());

    let mut wide = [0f32; 5];
    halves.convert_to_f32_slice(&mut wide);
    assert_eq!(wide[..4], [1.0, 0.0999755859375, f32::INFINITY, -0.0]);
    let mut wide64 = [0f64; 5];
    halves.convert_to_f64_slice(&mut wide64);
    assert_eq!(wide64[1], 0.0999755859375);

    let mut b = [bf16::ZERO; 3];
    b.convert_from_f64_slice(&[1.0, 1e-3, -1e40]);
    assert_eq!(
        b.to_f32_vec(),
        vec![1.0, 0.00099945068359375, f32::NEG_INFINITY]
    );
    assert_eq!(b.to_f64_vec()[0], 1.0);
}

#[test]
#[should_panic]
fn converting_into_a_slice_of_another_length_panics() {
    let mut halves = [f16::ZERO; 2];
    halves.convert_from_f32_slice(&[1.0, 2.0, 3.0]);
}

#[test]
fn reinterpreting_slices() {
    let halves = [f16::ONE, f16::NEG_ZERO];
    let bits: &[u16] = halves.reinterpret_cast();
    assert_eq!(bits, [0x3c00, 0x8000]);

    let mut halves = [f16::ZERO; 2];
    halves.reinterpret_cast_mut()[0] = 0x4000;
    assert_eq!(halves[0].to_f32(), 2.0);

    let raw = [0x3f80u16, 0xc000];
    let b: &[bf16] = raw.reinterpret_cast();
    assert_eq!(b[1].to_f32(), -2.0);
    let mut raw = [0u16; 2];
    raw.reinterpret_cast_mut::<f16>()[1] = f16::NEG_ONE;
    assert_eq!(raw, [0, 0xbc00]);
}

#[test]
fn vectors() {
    let v = Vec::<f16>::from_f32_slice(&[1.0, 2.0]);
    assert_eq!(v.clone().reinterpret_into(), vec![0x3c00u16, 0x4000]);
    let v = Vec::<bf16>::from_f64_slice(&[0.5, 3.0e38]);
    assert_eq!(v[0].to_f32(), 0.5);
    let halves: Vec<f16> = vec![0x3c00u16, 0xfc00].reinterpret_into();
    assert_eq!(halves[1], f16::NEG_INFINITY);
}
