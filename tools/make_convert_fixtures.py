#!/usr/bin/env python3
"""Writes the small checkpoints that `lowp convert`'s tests read, with the Python packages
people use to write real ones: safetensors (its NumPy API, fed ml_dtypes arrays for BF16 and
FP8) and NumPy itself (.npy in both byte orders and both memory orders, .npz stored and
compressed).

The files are committed under crates/lowp-cli/tests/data/, so the tests need no Python; run
this again only to change them:

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install safetensors numpy ml_dtypes
    /tmp/venv/bin/python tools/make_convert_fixtures.py

Every value is deterministic (a seeded generator), and each tensor mixes ordinary values with
the ones a conversion must get right: ties, values beyond each format's range, subnormals,
zeros of both signs, infinities and NaN.
"""

import os

import ml_dtypes
import numpy as np
from safetensors.numpy import save_file

OUT = os.path.join(os.path.dirname(__file__), "..", "crates", "lowp-cli", "tests", "data")

SPECIAL = [
    0.0, -0.0, 1.0, -1.0, 0.1, 1.0 / 3.0,
    1.0 + 2.0**-8, 1.0 + 2.0**-9 + 2.0**-20,  # a bf16 tie, and just above one
    448.0, 464.0, 465.0, 1000.0, -1e5,         # around E4M3's range
    57344.0, 61440.0, 65504.0, 65520.0, 7e4,   # around E5M2's and f16's range
    1e-3, 2.0**-9, 2.0**-10, 2.0**-16, 2.0**-17, 6e-8, 1e-8, 1e-30,  # subnormals, underflow
    3e38, -3.4e38,
    float("inf"), float("-inf"), float("nan"),
]


def values(rng, n, scale=1.0):
    """`n` float64 values: the special ones, then normal samples times `scale`."""
    out = np.array(SPECIAL + list(rng.standard_normal(max(n - len(SPECIAL), 0)) * scale))
    return out[:n] if n < len(SPECIAL) else out


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20240607)

    # A small f32 "model": weights, a norm, a bias with a wide range, integer ids, a mask,
    # a scalar and an empty tensor, with metadata.
    model = {
        "embed.weight": values(rng, 96, 0.02).astype(np.float32).reshape(8, 12),
        "layers.0.attn.q.weight": (rng.standard_normal((16, 8)) * 0.05).astype(np.float32),
        "layers.0.norm.weight": (1.0 + rng.standard_normal(16) * 0.01).astype(np.float32),
        "layers.0.mlp.bias": (rng.standard_normal(40) * 300.0).astype(np.float32),
        "layers.0.tiny": (rng.standard_normal(24) * 1e-6).astype(np.float32),
        "position_ids": np.arange(10, dtype=np.int64),
        "mask": (rng.standard_normal(7) > 0),
        "temperature": np.array(0.7, dtype=np.float32),
        "empty": np.zeros((0, 3), dtype=np.float32),
    }
    save_file(model, os.path.join(OUT, "model_f32.safetensors"),
              metadata={"format": "pt", "source": "lowp fixtures"})

    # Every float type safetensors names, as a converter meets them on the way back.
    v = values(rng, 40, 10.0)
    mixed = {
        "f64": v.reshape(5, 8),
        "f32": v.astype(np.float32),
        "f16": v.astype(np.float16),
        "bf16": v.astype(np.float32).astype(ml_dtypes.bfloat16),
        "e4m3": v.astype(np.float32).astype(ml_dtypes.float8_e4m3fn),
        "e5m2": v.astype(np.float32).astype(ml_dtypes.float8_e5m2),
        "i8": np.arange(-4, 4, dtype=np.int8),
    }
    save_file(mixed, os.path.join(OUT, "mixed.safetensors"))

    # NumPy: C and Fortran order, both byte orders, f2/f4/f8, and a non-float array.
    a = values(rng, 48, 100.0).reshape(6, 8)
    np.save(os.path.join(OUT, "c_f32.npy"), a.astype("<f4"))
    np.save(os.path.join(OUT, "fortran_f64_be.npy"), np.asfortranarray(a.astype(">f8")))
    np.save(os.path.join(OUT, "half_be.npy"), a.astype(">f2"))
    np.save(os.path.join(OUT, "ints.npy"), np.arange(12, dtype="<i4").reshape(3, 4))
    arrays = {
        "w": a.astype("<f4"),
        "b": np.asfortranarray(a.T.astype(">f8")),
        "h": a[:2].astype("<f2"),
        "ids": np.arange(5, dtype="<u2"),
    }
    np.savez(os.path.join(OUT, "arrays.npz"), **arrays)
    np.savez_compressed(os.path.join(OUT, "arrays_compressed.npz"), **arrays)


if __name__ == "__main__":
    with np.errstate(over="ignore"):  # the overflows to inf are wanted
        main()
