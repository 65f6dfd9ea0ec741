#!/usr/bin/env python3
"""Times lowp.cast against NumPy's astype(float16) and ml_dtypes' astype, in one run.

    python crates/lowp-py/bench.py [--n 67108864] [--reps 5]

Converts N float32 values (64Mi by default: 256 MiB in) to each format and back, with
NumPy/ml_dtypes and with lowp on one thread (threads=1) and on all cores (threads=None), each
making a new array as astype does, and with lowp on one thread into an existing array (out=,
which spares the page faults of fresh memory). Each timed call's result dies before the next
call, so lowp's new arrays reuse the memory of the last one (lowp.output_cache); "no cache"
is lowp on all cores with that cache off (lowp.set_output_cache(0)), so that every result
takes fresh pages, as astype's do from 32 MiB up. Prints the best time of --reps runs, the
throughput (bytes read + written per second) and the ratios reference time / lowp time:
"1T" is the single-threaded speedup, whose goal is 4x or more. Every lowp result
is checked against the reference's bits first (NaN payloads aside).
"""

import argparse
import os
import time

import ml_dtypes
import numpy as np

import lowp

# (lowp name, reference dtype, reference library)
FORMATS = [
    ("f16", np.float16, "numpy"),
    ("bf16", ml_dtypes.bfloat16, "ml_dtypes"),
    ("f8e4m3fn", ml_dtypes.float8_e4m3fn, "ml_dtypes"),
    ("f8e5m2", ml_dtypes.float8_e5m2, "ml_dtypes"),
    ("f4e2m1fn", ml_dtypes.float4_e2m1fn, "ml_dtypes"),
]


def best(f, reps):
    """The shortest of `reps` timed calls of f (the first call is a warm-up)."""
    f()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return min(times)


def uncached(f):
    """f, run with lowp's output cache off, so that its result takes fresh memory."""
    def run():
        limit = lowp.set_output_cache(0)
        try:
            return f()
        finally:
            lowp.set_output_cache(limit)
    return run


def same_bits(a, b):
    """Equal bits, NaN payloads aside."""
    a_bits = a.view(np.uint16 if a.itemsize == 2 else np.uint8)
    b_bits = b.view(a_bits.dtype)
    nan = np.isnan(a.astype(np.float32))
    return np.array_equal(a_bits[~nan], b_bits[~nan]) and np.isnan(b[nan].astype(np.float32)).all()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=64 << 20, help="float32 values (default 64Mi)")
    p.add_argument("--reps", type=int, default=5, help="timed runs per case; the best counts")
    args = p.parse_args()

    rng = np.random.default_rng(0)
    x = (rng.standard_normal(args.n, dtype=np.float32) * 8).astype(np.float32)
    print(f"{args.n} float32 values ({x.nbytes >> 20} MiB); lowp path {lowp.simd_path()}, "
          f"{os.cpu_count()} cores; numpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}; "
          f"best of {args.reps}")
    header = (f"{'format':<9} {'dir':<4} {'reference':>15} {'lowp 1T':>15} {'lowp all':>15} "
              f"{'lowp 1T out=':>15} {'no cache':>15} {'1T':>6} {'all':>6} {'out=':>6} "
              f"{'no c.':>6}")
    print(header)
    print("-" * len(header))
    ratios_1t = []
    for name, dtype, ref_lib in FORMATS:
        ref = x.astype(dtype)
        assert same_bits(ref, lowp.cast(x, name)), name
        assert np.array_equal(lowp.cast(ref, "float32"), ref.astype(np.float32), equal_nan=True)
        out_bytes = ref.nbytes
        out_to, out_back = np.empty_like(ref), np.empty_like(x)
        for direction, ref_f, one_f, all_f, into_f in [
            ("to", lambda: x.astype(dtype), lambda: lowp.cast(x, name, threads=1),
             lambda: lowp.cast(x, name), lambda: lowp.cast(x, name, threads=1, out=out_to)),
            ("back", lambda: ref.astype(np.float32), lambda: lowp.cast(ref, "float32", threads=1),
             lambda: lowp.cast(ref, "float32"),
             lambda: lowp.cast(ref, "float32", threads=1, out=out_back)),
        ]:
            t_ref, t_one, t_all, t_into, t_cold = (
                best(f, args.reps) for f in (ref_f, one_f, all_f, into_f, uncached(all_f)))
            moved = x.nbytes + out_bytes

            def cell(t):
                return f"{t * 1e3:6.1f}ms {moved / t / 1e9:4.1f}GB/s"

            print(f"{name:<9} {direction:<4} {cell(t_ref):>15} {cell(t_one):>15} {cell(t_all):>15} "
                  f"{cell(t_into):>15} {cell(t_cold):>15} {t_ref / t_one:5.1f}x "
                  f"{t_ref / t_all:5.1f}x {t_ref / t_into:5.1f}x {t_ref / t_cold:5.1f}x  ({ref_lib})")
            if direction == "to":
                ratios_1t.append(t_ref / t_one)
    print(f"single-threaded lowp.cast vs the reference, float32 -> format: "
          f"{min(ratios_1t):.1f}x to {max(ratios_1t):.1f}x")


if __name__ == "__main__":
    main()
