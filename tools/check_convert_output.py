#!/usr/bin/env python3
"""Checks a file written by `lowp convert` from Python: reads it with the safetensors package
(`safetensors.deserialize`, since `load_file` cannot read BF16 or FP8 back) or NumPy, and
compares every tensor with ml_dtypes' conversion of the input.

    python3 tools/check_convert_output.py IN OUT TYPE [--scaled]

TYPE is lowp's name of the type converted to (bf16, f16, f8e4m3fn, f8e5m2, f32, f64). Only
tensors that were f32 or narrower are compared bit for bit: ml_dtypes rounds f64 through f32
(twice), lowp once. With --scaled, FP8 tensors are checked against `NAME.scale`: the stored
values times the scale must equal ml_dtypes' conversion of the input divided by the scale.
Prints one line per tensor and exits 1 on any mismatch.
"""

import sys

import ml_dtypes
import numpy as np
import safetensors

TYPES = {
    "bf16": ml_dtypes.bfloat16, "f16": np.float16, "f8e4m3fn": ml_dtypes.float8_e4m3fn,
    "f8e5m2": ml_dtypes.float8_e5m2, "f32": np.float32, "f64": np.float64,
}
ST = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16, "BF16": ml_dtypes.bfloat16,
    "F8_E4M3": ml_dtypes.float8_e4m3fn, "F8_E5M2": ml_dtypes.float8_e5m2,
    "I64": np.int64, "I32": np.int32, "I8": np.int8, "U8": np.uint8, "BOOL": np.bool_,
}


def read_safetensors(path):
    with open(path, "rb") as f:
        items = safetensors.deserialize(f.read())
    return {name: np.frombuffer(bytes(t["data"]), ST[t["dtype"]]).reshape(t["shape"])
            for name, t in items}


def same_bits(a, b):
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    scaled = "--scaled" in sys.argv
    src, out, to = args[0], args[1], TYPES[args[2]]
    if src.endswith(".safetensors"):
        a, b = read_safetensors(src), read_safetensors(out)
    elif src.endswith(".npz"):
        a, b = dict(np.load(src)), dict(np.load(out))
    else:
        a, b = {"array": np.load(src)}, {"array": np.load(out)}
    bad = 0
    for name, x in a.items():
        y = b[name]
        if x.dtype.kind not in "fV" and x.dtype != ml_dtypes.bfloat16 or x.dtype == np.float64:
            ok = same_bits(x, y) if x.dtype != np.float64 or y.dtype == np.float64 else True
            print(f"{name}: {x.dtype} -> {y.dtype} {'kept' if ok else 'CHANGED'}")
            bad += not ok
            continue
        wide = x.astype(np.float32)
        if scaled and f"{name}.scale" in b:
            s = np.float32(b[f"{name}.scale"])
            want = (wide / s).astype(to)
            ok = same_bits(want, y)
        elif y.dtype == x.dtype:
            ok = same_bits(x, y)
        else:
            ok = same_bits(wide.astype(to), y)
        print(f"{name}: {x.dtype} -> {y.dtype} {'ok' if ok else 'MISMATCH'}")
        bad += not ok
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
