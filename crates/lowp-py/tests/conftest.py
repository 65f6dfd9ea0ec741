"""Shared helpers: the formats, their ml_dtypes types, and exact references built from them."""

import ml_dtypes
import numpy as np
import pytest

import lowp

# lowp name -> (ml_dtypes / NumPy type, storage integer type).
FORMATS = {
    "f16": (np.float16, np.uint16),
    "bf16": (ml_dtypes.bfloat16, np.uint16),
    "f8e4m3fn": (ml_dtypes.float8_e4m3fn, np.uint8),
    "f8e5m2": (ml_dtypes.float8_e5m2, np.uint8),
    "f8e4m3fnuz": (ml_dtypes.float8_e4m3fnuz, np.uint8),
    "f8e5m2fnuz": (ml_dtypes.float8_e5m2fnuz, np.uint8),
    "f8e4m3": (ml_dtypes.float8_e4m3, np.uint8),
    "f8e3m4": (ml_dtypes.float8_e3m4, np.uint8),
    "f8e8m0fnu": (ml_dtypes.float8_e8m0fnu, np.uint8),
    "f6e2m3fn": (ml_dtypes.float6_e2m3fn, np.uint8),
    "f6e3m2fn": (ml_dtypes.float6_e3m2fn, np.uint8),
    "f4e2m1fn": (ml_dtypes.float4_e2m1fn, np.uint8),
}
NAMES = list(FORMATS)


@pytest.fixture(params=NAMES)
def fmt(request):
    """Each lowp format name in turn."""
    return request.param


def width(name):
    """Bits per value."""
    return {"f16": 16, "bf16": 16, "f6e2m3fn": 6, "f6e3m2fn": 6, "f4e2m1fn": 4}.get(name, 8)


def all_bits(name):
    """Every bit pattern of the format, in its storage type."""
    return np.arange(2 ** width(name), dtype=FORMATS[name][1])


def ml_bits(x, name):
    """ml_dtypes' (NumPy's for f16) conversion of `x`, as bits."""
    dtype, store = FORMATS[name]
    return x.astype(dtype).view(store)


def lowp_bits(x, name, **kw):
    """lowp's conversion of `x`, as bits."""
    return lowp.cast(x, name, bits=True, **kw)


def finite_values(name):
    """The format's finite values as sorted float64s, one per value (-0 dropped)."""
    widened = lowp.cast(all_bits(name), "float64", source=name)
    v = np.unique(widened[np.isfinite(widened)])
    return v


def reference(x, name, rounding):
    """The exact rounding of float64 `x` (finite, within the format's range) into the format, by
    search among its values: every value of these formats and every midpoint of two neighbours
    is exact in float64, so the comparisons below are exact."""
    v = finite_values(name)
    hi = np.clip(np.searchsorted(v, x, side="left"), 0, len(v) - 1)  # first v >= x
    lo = np.clip(np.where(v[hi] == x, hi, hi - 1), 0, len(v) - 1)  # last v <= x
    down, up = v[lo], v[hi]
    if rounding == "down":
        r = down
    elif rounding == "up":
        r = up
    elif rounding == "zero":
        r = np.where(x < 0, up, down)
    else:
        mid = (down + up) / 2
        bits_lo = lowp.cast(down, name, bits=True)
        even_lo = (bits_lo & 1) == 0
        # Among the two, the even one is the one whose last significand bit is 0; E8M0's
        # powers of two have no significand bits, and there ml_dtypes (and lowp) round the
        # tie up.
        if name == "f8e8m0fnu":
            even_lo = np.zeros_like(even_lo)
        r = np.where(x < mid, down, np.where(x > mid, up, np.where(even_lo, down, up)))
    return r
