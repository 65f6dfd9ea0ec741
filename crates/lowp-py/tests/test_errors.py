"""Bad inputs raise Python exceptions with messages that say what to do."""

import numpy as np
import pytest

import lowp

X = np.float32([1.0, 2.0, 3.0])


def test_unknown_format_names_the_valid_ones():
    with pytest.raises(ValueError, match=r"unknown format 'f7'; valid formats: f16, bf16.*f4e2m1fn"):
        lowp.cast(X, "f7")
    with pytest.raises(ValueError, match="float8_e4m3b11fnuz"):
        lowp.cast(X, "float8_e4m3b11fnuz")
    with pytest.raises(ValueError, match="unknown format"):
        lowp.fit_report(X, "int8")
    with pytest.raises(ValueError, match="for float32 use numpy.finfo"):
        lowp.finfo("float32")
    with pytest.raises(ValueError, match="float64 is not a lowp format; valid formats: f16"):
        lowp.fit_report(X, np.float64)
    with pytest.raises(TypeError, match="by name"):
        lowp.cast(X, 3.5)


def test_wrong_dtypes_are_explained():
    with pytest.raises(TypeError, match="cannot read arrays of dtype int32.*float32, float64"):
        lowp.cast(np.arange(3, dtype=np.int32), "bf16")
    with pytest.raises(TypeError, match="uint8 array holds the bits of which format.*source="):
        lowp.cast(np.zeros(3, dtype=np.uint8), "float32")
    with pytest.raises(TypeError, match=r'source="bf16" needs the uint16 bits'):
        lowp.cast(np.zeros(3, dtype=np.uint8), "float32", source="bf16")
    with pytest.raises(TypeError, match="byte order"):
        lowp.cast(X.astype(">f4"), "bf16")
    with pytest.raises(TypeError, match="takes a NumPy array, not list"):
        lowp.cast([1.0, 2.0], "bf16")
    with pytest.raises(TypeError, match="complex64"):
        lowp.fit_report(X.astype(np.complex64), "bf16")


def test_non_contiguous_arrays_are_explained():
    a = np.arange(16, dtype=np.float32).reshape(4, 4)
    with pytest.raises(ValueError, match=r"contiguous.*strides \[16, 4\].*ascontiguousarray"):
        lowp.cast(a[:, :2], "bf16")
    with pytest.raises(ValueError, match="contiguous"):
        lowp.cast(a[::2], "bf16")
    # A transpose is Fortran-ordered: that is fine.
    assert lowp.cast(a.T, "bf16").shape == (4, 4)


def test_bad_options():
    with pytest.raises(ValueError, match="unknown rounding 'nearest_even'; valid: nearest, zero"):
        lowp.cast(X, "bf16", rounding="nearest_even")
    with pytest.raises(ValueError, match="seed= is for rounding=\"stochastic\" only"):
        lowp.cast(X, "bf16", seed=1)
    with pytest.raises(ValueError, match="seed must be an int in 0..2\\*\\*64"):
        lowp.cast(X, "bf16", rounding="stochastic", seed=-1)
    with pytest.raises(ValueError, match="seed must be an int"):
        lowp.cast(X, "bf16", rounding="stochastic", seed=1.5)
    with pytest.raises(ValueError, match="threads must be at least 1"):
        lowp.cast(X, "bf16", threads=0)
    with pytest.raises(ValueError, match="threads must be None or a positive int"):
        lowp.cast(X, "bf16", threads=-2)
    with pytest.raises(ValueError, match="casts to float32 and float64 are exact"):
        lowp.cast(X, "float64", rounding="up")
    with pytest.raises(ValueError, match="casts to float32"):
        lowp.cast(X, "float32", saturate=True)
