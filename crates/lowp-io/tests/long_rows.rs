//! Tensors whose rows, or fp8-block's bands of 128 rows, are longer than a thread's tile: lowp
//! quantizes and decodes them in tiles that cut the rows (and reads an fp8-channel row's scale
//! from passes over its pieces), and the result must be what the codec gives the whole rows
//! held in memory at once, byte for byte, with every rounding and scale search. The sizes are
//! the smallest past the tile budgets: rows of 600,000 f32s (2.4 MB) and fp8-block bands of
//! 128 x 20,096.

use lowp_io::layouts::Layout;
use lowp_io::quant::{self, ElementRounding, QuantOptions, ScaleSearch, Scheme};
use lowp_io::{FloatType, Options, Target};
use safetensors::Dtype;
use safetensors::tensor::TensorView;
use std::path::{Path, PathBuf};

mod common;
use common::{Rng, f32s, read};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lowp-long-rows-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Values of every scale: Gaussian, with rows of their own magnitude, an outlier now and
/// then, a zero run and a subnormal here and there.
fn values(rows: usize, cols: usize, rng: &mut Rng) -> Vec<f32> {
    let mut out = Vec::with_capacity(rows * cols);
    for r in 0..rows {
        let row_scale = 2f64.powi(r as i32 % 7 - 3);
        for c in 0..cols {
            let v = match rng.below(1000) {
                0 => rng.gauss() * 40.0,
                1 => 1e-40,
                _ if (c / 4096) % 9 == 5 => 0.0,
                _ => rng.gauss(),
            };
            out.push((v * row_scale) as f32);
        }
    }
    out
}

/// The codec on whole rows held in memory: element data and the codec's scales (fp8-block
/// band by band of 128 rows, as the codec takes them), and nvfp4's `scale_2`.
fn whole_rows(
    scheme: Scheme,
    opts: &QuantOptions,
    x: &[f32],
    rows: usize,
    cols: usize,
) -> (Vec<u8>, Vec<u8>, f32) {
    let scale_2 = if scheme == Scheme::Nvfp4 {
        quant::nvfp4_pow2_tensor_scale(quant::amax(x))
    } else {
        0.0
    };
    let mut data = vec![0u8; rows * scheme.data_row_bytes(cols)];
    let mut scales = vec![0u8; scheme.scale_bytes(rows, cols)];
    let band = if scheme == Scheme::Fp8Block {
        128
    } else {
        rows
    };
    for r in (0..rows).step_by(band) {
        let h = band.min(rows - r);
        let d = r * scheme.data_row_bytes(cols);
        let s = r / scheme.block_rows() * scheme.scale_row_bytes(cols);
        quant::quantize(
            scheme,
            opts,
            &x[r * cols..(r + h) * cols],
            cols,
            (r * cols) as u64,
            scale_2,
            &mut data[d..d + h * scheme.data_row_bytes(cols)],
            &mut scales[s..s + scheme.scale_bytes(h, cols)],
        )
        .unwrap();
    }
    (data, scales, scale_2)
}

/// Quantizes `x` (rows x cols) with lowp into compressed-tensors' layout, checks every byte
/// against [`whole_rows`], decodes it back to f32 with lowp and checks that against the codec's
/// exact decoding of the whole rows, rounded once.
fn round_trip(dir: &Path, scheme: Scheme, opts: QuantOptions, rows: usize, cols: usize, x: &[f32]) {
    let input = dir.join("in.safetensors");
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    let view = TensorView::new(Dtype::F32, vec![rows, cols], &bytes).unwrap();
    safetensors::serialize_to_file([("x.weight", view)], None, &input).unwrap();
    let quantized = dir.join("q.safetensors");
    let _ = std::fs::remove_file(&quantized);
    let mut o = Options::new(&input, Some(quantized.clone()), Target::Scheme(scheme));
    o.layout = Some(Layout::CompressedTensors);
    o.quant = opts;
    lowp_io::convert(&o).unwrap();
    let got = read(&quantized);
    let (data, scales, scale_2) = whole_rows(scheme, &opts, x, rows, cols);
    let what = format!("{scheme} {opts:?}");
    let data_name = match scheme {
        Scheme::Mxfp4 | Scheme::Nvfp4 => "x.weight_packed",
        _ => "x.weight",
    };
    assert!(got[data_name].2 == data, "{what}: element data differ");
    assert!(got["x.weight_scale"].2 == scales, "{what}: scales differ");

    let decoded = dir.join("d.safetensors");
    let _ = std::fs::remove_file(&decoded);
    let back = Options::new(&quantized, Some(decoded.clone()), FloatType::F32);
    lowp_io::convert(&back).unwrap();
    let mut exact = vec![0f64; rows * cols];
    let band = if scheme == Scheme::Fp8Block {
        128
    } else {
        rows
    };
    let multiply = if scheme == Scheme::Nvfp4 { 1.0 } else { 0.0 };
    for r in (0..rows).step_by(band) {
        let h = band.min(rows - r);
        let d = r * scheme.data_row_bytes(cols);
        let s = r / scheme.block_rows() * scheme.scale_row_bytes(cols);
        quant::dequantize_f64(
            scheme,
            &data[d..d + h * scheme.data_row_bytes(cols)],
            &scales[s..s + scheme.scale_bytes(h, cols)],
            cols,
            multiply,
            &mut exact[r * cols..(r + h) * cols],
        )
        .unwrap();
    }
    // compressed-tensors stores nvfp4's global scale, the inverse of `scale_2`.
    let global = if scheme == Scheme::Nvfp4 {
        1.0 / scale_2 as f64
    } else {
        1.0
    };
    let want: Vec<f32> = exact.iter().map(|v| (v / global) as f32).collect();
    let back = f32s(&read(&decoded)["x.weight"].2);
    let first_bad = back
        .iter()
        .zip(&want)
        .position(|(a, b)| a.to_bits() != b.to_bits());
    assert_eq!(first_bad, None, "{what}: decoded values differ");
}

#[test]
fn rows_longer_than_a_tile_quantize_and_decode_as_whole_rows() {
    let dir = scratch("rows");
    let mut rng = Rng(11);
    let (rows, cols) = (2, 600_000);
    let x = values(rows, cols, &mut rng);
    let stochastic = ElementRounding::Stochastic { seed: 5 };
    for scheme in [
        Scheme::Fp8Channel,
        Scheme::Mxfp8,
        Scheme::Mxfp4,
        Scheme::Nvfp4,
    ] {
        for (rounding, search) in [
            (ElementRounding::Nearest, ScaleSearch::Spec),
            (stochastic, ScaleSearch::Spec),
            (ElementRounding::Nearest, ScaleSearch::Mse),
        ] {
            let opts = QuantOptions {
                rounding,
                search,
                ..QuantOptions::default()
            };
            round_trip(&dir, scheme, opts, rows, cols, &x);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fp8_block_bands_wider_than_a_tile_quantize_and_decode_as_whole_bands() {
    let dir = scratch("bands");
    let mut rng = Rng(12);
    // Two bands, the second of 2 rows; 157 blocks across, compressed-tensors taking whole
    // groups of columns only.
    let (rows, cols) = (130, 157 * 128);
    let x = values(rows, cols, &mut rng);
    for (rounding, search) in [
        (ElementRounding::Nearest, ScaleSearch::Spec),
        (ElementRounding::Stochastic { seed: 9 }, ScaleSearch::Mse),
    ] {
        let opts = QuantOptions {
            rounding,
            search,
            ..QuantOptions::default()
        };
        round_trip(&dir, Scheme::Fp8Block, opts, rows, cols, &x);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_long_row_is_one_block_whose_bad_scale_any_piece_may_find() {
    // fp8-channel rows of 600,000 values decode in pieces; each row is still one block. Row 0
    // gets a NaN scale, row 1 (all zero in its first pieces, not after) a zero scale, row 2
    // keeps its own: 2 of 3 blocks are bad, whichever piece saw it.
    let dir = scratch("bad-scales");
    let (rows, cols) = (3, 600_000);
    let mut x = values(rows, cols, &mut Rng(13));
    x[cols..cols + 560_000].fill(0.0);
    let input = dir.join("in.safetensors");
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    let view = TensorView::new(Dtype::F32, vec![rows, cols], &bytes).unwrap();
    safetensors::serialize_to_file([("x.weight", view)], None, &input).unwrap();
    let quantized = dir.join("q.safetensors");
    let mut o = Options::new(
        &input,
        Some(quantized.clone()),
        Target::Scheme(Scheme::Fp8Channel),
    );
    o.layout = Some(Layout::CompressedTensors);
    lowp_io::convert(&o).unwrap();
    let mut tensors = read(&quantized);
    let scale = &mut tensors.get_mut("x.weight_scale").unwrap().2;
    scale[..4].copy_from_slice(&f32::NAN.to_le_bytes());
    scale[4..8].copy_from_slice(&0f32.to_le_bytes());
    let corrupt = dir.join("corrupt.safetensors");
    let views: Vec<(String, TensorView<'_>)> = tensors
        .iter()
        .map(|(n, (d, s, b))| (n.clone(), TensorView::new(*d, s.clone(), b).unwrap()))
        .collect();
    safetensors::serialize_to_file(views, None, &corrupt).unwrap();
    let report = lowp_io::convert(&Options::new(&corrupt, None, FloatType::BF16)).unwrap();
    let check = report.tensors[0].scale_check.unwrap();
    assert_eq!((check.blocks, check.bad), (3, 2));
    std::fs::remove_dir_all(&dir).unwrap();
}
