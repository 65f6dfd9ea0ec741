#!/usr/bin/env python3
"""What ml_dtypes (and NumPy, for float16) make of NaNs, for lowp's test of NaN conversions.

Prints, as Rust constants, the bits ml_dtypes gives for NaN inputs of every sign, quiet and
signalling, with several payloads: from float32 and float64 into every format, from float16 and
bfloat16 NaNs into every format, and every format's NaN codes widened to float32 and float64.
crates/lowp/tests/nan_inputs.rs holds this output between its "generated" markers and checks
lowp against it on every conversion path. Usage (needs `pip install ml_dtypes==0.6.0 numpy`):

    python3 tools/ml_dtypes_nan.py > /tmp/nan_table.rs

then replace the test's generated block with it and run `cargo fmt`.

What it measured with ml_dtypes 0.6.0 and NumPy 2.4 on x86-64:

* bfloat16 and the FP8 formats: a NaN becomes the format's canonical NaN with the input's sign;
  the payload is dropped (FNUZ and E8M0 have their one NaN).
* float6_e2m3fn, float6_e3m2fn, float4_e2m1fn (no NaN): a NaN becomes a zero of the opposite
  sign, +NaN giving -0. Their `quiet_NaN()` is the -0 pattern, and a negative NaN gets its
  negation (ml_dtypes' mxfloat.h; the MX specification leaves the case to implementations).
* float16 (NumPy's own conversion, in software on x86-64 wheels): sign and top payload bits kept,
  and a signalling NaN stays signalling (with its lowest bit set if no payload bit survived).
* float64 sources go through float32 first for every ml_dtypes format (the finite values show
  it: they are rounded twice); NumPy's float64 to float16 is direct.
* Widening: bfloat16 shifts its bits (a signalling NaN stays signalling in float32), float16
  keeps sign and payload (signalling too), the FP8 formats give the canonical NaN of their sign,
  and the FNUZ formats' NaN (the -0 pattern) widens to a negative NaN.
"""
import sys
import warnings

import ml_dtypes
import numpy as np

# (lowp name, dtype, storage bits), in the order of lowp's `Format::ALL`.
FORMATS = [
    ("f16", np.float16, 16),
    ("bf16", ml_dtypes.bfloat16, 16),
    ("f8e4m3fn", ml_dtypes.float8_e4m3fn, 8),
    ("f8e5m2", ml_dtypes.float8_e5m2, 8),
    ("f8e4m3fnuz", ml_dtypes.float8_e4m3fnuz, 8),
    ("f8e5m2fnuz", ml_dtypes.float8_e5m2fnuz, 8),
    ("f8e4m3", ml_dtypes.float8_e4m3, 8),
    ("f8e3m4", ml_dtypes.float8_e3m4, 8),
    ("f8e8m0fnu", ml_dtypes.float8_e8m0fnu, 8),
    ("f6e2m3fn", ml_dtypes.float6_e2m3fn, 8),
    ("f6e3m2fn", ml_dtypes.float6_e3m2fn, 8),
    ("f4e2m1fn", ml_dtypes.float4_e2m1fn, 8),
]

# Positive NaNs; each is also tried with the sign bit set. The payload bits are chosen to land
# on the edges of what each narrower format keeps.
F32_NANS = [
    0x7FC00000,  # quiet, no payload
    0x7FC00001,  # quiet, lowest payload bit (below every narrower format)
    0x7FC02000,  # quiet, f16's lowest mantissa bit
    0x7FC10000,  # quiet, bf16's lowest mantissa bit
    0x7FE00000,  # quiet, top payload bit
    0x7FD55555,  # quiet, alternating payload
    0x7FFFFFFF,  # quiet, every payload bit
    0x7F800001,  # signalling, lowest payload bit
    0x7F802000,  # signalling, f16's lowest mantissa bit
    0x7F810000,  # signalling, bf16's lowest mantissa bit
    0x7FA00000,  # signalling, top payload bit
    0x7FBFFFFF,  # signalling, every payload bit
]
F64_NANS = [
    0x7FF8000000000000,  # quiet, no payload
    0x7FF8000000000001,  # quiet, lowest payload bit
    0x7FF8000010000000,  # quiet, the bit below f32's last
    0x7FF8000020000000,  # quiet, f32's lowest mantissa bit
    0x7FF8040000000000,  # quiet, f16's lowest mantissa bit
    0x7FFC000000000000,  # quiet, top payload bit
    0x7FFAAAAAAAAAAAAA,  # quiet, alternating payload
    0x7FFFFFFFFFFFFFFF,  # quiet, every payload bit
    0x7FF0000000000001,  # signalling, lowest payload bit
    0x7FF0000020000000,  # signalling, f32's lowest mantissa bit
    0x7FF0040000000000,  # signalling, f16's lowest mantissa bit
    0x7FF4000000000000,  # signalling, top payload bit
    0x7FF7FFFFFFFFFFFF,  # signalling, every payload bit
]
# NaNs of the 16-bit formats tried as sources (positive; negated too).
F16_NANS = [0x7E00, 0x7E01, 0x7FFF, 0x7C01, 0x7D00, 0x7DFF]
BF16_NANS = [0x7FC0, 0x7FC1, 0x7FFF, 0x7F81, 0x7FA0, 0x7FBF]


def with_negatives(bits, width):
    return bits + [b | 1 << (width - 1) for b in bits]


def storage(width):
    return {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[width]


def cast(values, dtype, width):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return [int(b) for b in values.astype(dtype).view(storage(width))]


def nan_codes(dtype, width):
    """Every NaN code of an 8-bit format; the chosen ones of the 16-bit formats."""
    if width == 16:
        return with_negatives(F16_NANS if dtype is np.float16 else BF16_NANS, 16)
    codes = np.arange(256, dtype=np.uint8)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        nan = np.isnan(codes.view(dtype).astype(np.float32))
    return [int(c) for c in codes[nan]]


def rust_array(values, digits):
    return "[" + ", ".join(f"0x{v:0{digits}x}" for v in values) + "]"


def main():
    out = sys.stdout
    f32_in = with_negatives(F32_NANS, 32)
    f64_in = with_negatives(F64_NANS, 64)
    f16_in = with_negatives(F16_NANS, 16)
    bf16_in = with_negatives(BF16_NANS, 16)
    x32 = np.array(f32_in, dtype=np.uint32).view(np.float32)
    x64 = np.array(f64_in, dtype=np.uint64).view(np.float64)
    h = np.array(f16_in, dtype=np.uint16).view(np.float16)
    b = np.array(bf16_in, dtype=np.uint16).view(ml_dtypes.bfloat16)

    out.write(
        f"// Generated by tools/ml_dtypes_nan.py with ml_dtypes {ml_dtypes.__version__} and "
        f"NumPy {np.__version__}.\n"
    )
    out.write("/// NaN inputs as f32 bits: the positive ones, then the same negated.\n")
    out.write(f"const F32_NANS: [u32; {len(f32_in)}] = {rust_array(f32_in, 8)};\n")
    out.write("/// NaN inputs as f64 bits, positive then negated.\n")
    out.write(f"const F64_NANS: [u64; {len(f64_in)}] = {rust_array(f64_in, 16)};\n")
    out.write("/// f16 NaNs tried as a source, positive then negated.\n")
    out.write(f"const F16_NANS: [u16; {len(f16_in)}] = {rust_array(f16_in, 4)};\n")
    out.write("/// bf16 NaNs tried as a source, positive then negated.\n")
    out.write(f"const BF16_NANS: [u16; {len(bf16_in)}] = {rust_array(bf16_in, 4)};\n")

    tables = [
        ("FROM_F32", "`F32_NANS`", x32, len(f32_in)),
        ("FROM_F64", "`F64_NANS`", x64, len(f64_in)),
        ("FROM_F16", "`F16_NANS` (NumPy float16)", h, len(f16_in)),
        ("FROM_BF16", "`BF16_NANS`", b, len(bf16_in)),
    ]
    for name, what, src, n in tables:
        out.write(f"/// What each format's `astype` gives for {what}, in order.\n")
        out.write(f"const {name}: [(&str, [u16; {n}]); {len(FORMATS)}] = [\n")
        for fmt, dtype, width in FORMATS:
            out.write(f'    ("{fmt}", {rust_array(cast(src, dtype, width), width // 4)}),\n')
        out.write("];\n")

    out.write("/// A NaN code widened: (code, f32 bits, f64 bits).\n")
    out.write("type Widened = (u16, u32, u64);\n")
    out.write(
        "/// Each format's NaN codes (all of them in the 8-bit formats, `F16_NANS` and\n"
        "/// `BF16_NANS` in the 16-bit ones) widened.\n"
    )
    out.write(f"const WIDEN: [(&str, &[Widened]); {len(FORMATS)}] = [\n")
    for fmt, dtype, width in FORMATS:
        codes = nan_codes(dtype, width)
        v = np.array(codes, dtype=storage(width)).view(dtype)
        wide32 = cast(v, np.float32, 32) if codes else []
        wide64 = cast(v, np.float64, 64) if codes else []
        rows = ", ".join(
            f"(0x{c:0{width // 4}x}, 0x{w:08x}, 0x{d:016x})" for c, w, d in zip(codes, wide32, wide64)
        )
        out.write(f'    ("{fmt}", &[{rows}]),\n')
    out.write("];\n")


if __name__ == "__main__":
    main()
