#!/usr/bin/env python3
"""Digests of ml_dtypes' f32 conversions, for lowp's exhaustive conformance test.

For every format, converts all 2^32 float32 bit patterns with ml_dtypes (numpy's float16 for
f16) and hashes the results, so the Rust test can prove it agrees with ml_dtypes on every input
without Python in CI. Usage (needs `pip install ml_dtypes==0.6.0 numpy`):

    python3 tools/ml_dtypes_digest.py > crates/lowp/tests/data/ml_dtypes_f32.digest

The hash, which crates/lowp/tests/exhaustive_f32.rs computes the same way: inputs are taken in
order of their bit patterns, in blocks of 2^24. Each result is mapped to `bits + 1`, except that
a NaN result becomes the format's canonical NaN bits + 1 (payloads and NaN signs aside), and a
NaN input of a format without NaN (FP6, FP4, whose NaN handling ml_dtypes leaves unspecified)
counts as 0 + 1. A block hashes to h = sum(v_i * P^(N-1-i)) mod 2^64 (Horner's rule with P the
64-bit FNV prime), and 16 consecutive block hashes to one line the same way, giving 16 lines
per format.
"""
import sys

import ml_dtypes
import numpy as np

P = np.uint64(0x100000001B3)
BLOCK = 1 << 24
BLOCKS_PER_LINE = 16

# (lowp name, numpy dtype, storage bits, canonical NaN bits or None)
FORMATS = [
    ("f16", np.float16, 16, 0x7E00),
    ("bf16", ml_dtypes.bfloat16, 16, 0x7FC0),
    ("f8e4m3fn", ml_dtypes.float8_e4m3fn, 8, 0x7F),
    ("f8e5m2", ml_dtypes.float8_e5m2, 8, 0x7E),
    ("f8e4m3fnuz", ml_dtypes.float8_e4m3fnuz, 8, 0x80),
    ("f8e5m2fnuz", ml_dtypes.float8_e5m2fnuz, 8, 0x80),
    ("f8e4m3", ml_dtypes.float8_e4m3, 8, 0x7C),
    ("f8e3m4", ml_dtypes.float8_e3m4, 8, 0x78),
    ("f8e8m0fnu", ml_dtypes.float8_e8m0fnu, 8, 0xFF),
    ("f6e2m3fn", ml_dtypes.float6_e2m3fn, 8, None),
    ("f6e3m2fn", ml_dtypes.float6_e3m2fn, 8, None),
    ("f4e2m1fn", ml_dtypes.float4_e2m1fn, 8, None),
]


def horner(values):
    h = np.uint64(0)
    for v in values:
        h = h * P + np.uint64(v)
    return h


def powers():
    """pw[i] = P^(BLOCK-1-i) mod 2^64, so sum(v * pw) is Horner's rule over the block."""
    asc = np.empty(BLOCK, dtype=np.uint64)
    asc[0] = 1
    n, step = 1, P
    with np.errstate(over="ignore"):
        while n < BLOCK:
            asc[n : 2 * n] = asc[:n] * step
            step = step * step
            n *= 2
    return asc[::-1].copy()


def main():
    pw = powers()
    print(f"# ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}; see tools/ml_dtypes_digest.py")
    base = np.arange(BLOCK, dtype=np.uint32)
    for name, dtype, width, nan in FORMATS:
        blocks = []
        for b in range((1 << 32) // BLOCK):
            bits = base + np.uint32(b * BLOCK)
            x = bits.view(np.float32)
            with np.errstate(over="ignore", invalid="ignore"):
                y = x.astype(dtype)
            out = y.view(np.uint16 if width == 16 else np.uint8).astype(np.uint64)
            if nan is not None:
                out[np.isnan(y.astype(np.float32))] = nan
            else:
                out[np.isnan(x)] = 0
            with np.errstate(over="ignore"):
                blocks.append(np.sum((out + np.uint64(1)) * pw, dtype=np.uint64))
        with np.errstate(over="ignore"):
            for line in range(256 // BLOCKS_PER_LINE):
                h = horner(blocks[line * BLOCKS_PER_LINE : (line + 1) * BLOCKS_PER_LINE])
                print(f"{name} {line} {int(h):016x}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
