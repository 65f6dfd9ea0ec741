"""lowp.finfo, lowp.formats, lowp.inspect and lowp.fit_report."""

import ml_dtypes
import numpy as np
import pytest
from conftest import FORMATS, NAMES

import lowp

FINFO_FIELDS = ["bits", "eps", "epsneg", "machep", "negep", "max", "min", "nexp", "nmant",
                "iexp", "maxexp", "minexp", "precision", "resolution", "tiny",
                "smallest_normal", "smallest_subnormal"]


def test_finfo_matches_ml_dtypes(fmt):
    ours = lowp.finfo(fmt)
    theirs = ml_dtypes.finfo(FORMATS[fmt][0])
    for field in FINFO_FIELDS:
        assert getattr(ours, field) == float(getattr(theirs, field)), field
    assert ours.dtype == theirs.dtype
    # By dtype and by ml_dtypes name too.
    assert lowp.finfo(FORMATS[fmt][0]).max == ours.max
    assert lowp.finfo(np.dtype(FORMATS[fmt][0]).name).eps == ours.eps
    assert fmt in repr(ours)


def test_formats_lists_every_format():
    rows = lowp.formats()
    assert [r["name"] for r in rows] == NAMES
    e4m3 = rows[NAMES.index("f8e4m3fn")]
    assert e4m3["max"] == 448.0 and e4m3["overflow"] == "nan" and e4m3["nan_bits"] == "0x7f"
    assert rows[NAMES.index("f8e8m0fnu")]["min_positive_subnormal"] is None
    for r in rows:
        assert r["max"] == lowp.finfo(r["name"]).max
        assert r["epsilon"] == lowp.finfo(r["name"]).eps


def test_inspect():
    rows = lowp.inspect("0.1")
    assert [r["format"] for r in rows] == NAMES
    bf = lowp.inspect(0.1, "bf16")
    assert len(bf) == 1 and bf[0]["bits"] == "0x3dcd" and bf[0]["status"] == "rounded"
    # A decimal is rounded once from its digits; its nearest float64 would round twice.
    r = lowp.inspect("1.00048828125000001", ["f16", "bf16"])
    assert r[0]["bits"] == "0x3c01" and r[0]["double_rounding"] is True
    assert r[1]["double_rounding"] is False
    # A float is rounded from its exact value (here the tie itself, which goes to even).
    assert lowp.inspect(1.00048828125, "f16")[0]["bits"] == "0x3c00"
    over = lowp.inspect(float("inf"), ["f16", "f8e4m3fn"])
    assert over[0]["value"] == np.inf and over[0]["status"] == "exact"
    assert over[1]["overflow"] == "nan"
    assert lowp.inspect(3, "f4e2m1fn")[0]["value"] == 3.0
    assert lowp.inspect(10**39, "bf16")[0]["status"] == "overflow"
    bits = lowp.inspect("0x3c00", ["bf16"], source="f16")
    assert bits[0]["from"] == "bits" and bits[1]["bits"] == "0x3f80"
    assert lowp.inspect(np.float32(0.5), ml_dtypes.float8_e5m2)[0]["value"] == 0.5


def test_inspect_errors():
    with pytest.raises(ValueError, match="--as|source"):
        lowp.inspect("0x3c00")
    with pytest.raises(ValueError, match="invalid value"):
        lowp.inspect("zero point one")
    with pytest.raises(ValueError, match="unknown format 'f7'.*f8e5m2fnuz"):
        lowp.inspect("1", "f7")
    with pytest.raises(TypeError):
        lowp.inspect([1.0])


def test_fit_report_counts():
    x = np.float32([0.5, 3.1, -700.0, 1e-4, 0.0])
    r = lowp.fit_report(x, "f8e4m3fn")
    assert r["format"] == "f8e4m3fn"
    assert (r["elements"], r["overflowed"], r["became_nan"], r["flushed_to_zero"]) == (5, 1, 1, 1)
    assert r["max_rel_error"] == 1.0
    assert r["amax"] == 700.0
    assert r["suggested_scale"] == 0.5
    sat = lowp.fit_report(x, "f8e4m3fn", saturate=True)
    assert sat["overflowed"] == 1 and sat["became_nan"] == 0
    g = lowp.fit_report(np.float64([3e-6, -1e-5, 2e-7]), "f8e5m2")
    assert g["suggested_scale"] == 2.0**32


@pytest.mark.parametrize("name", ["bf16", "f8e4m3fn", "f8e5m2", "f8e8m0fnu", "f4e2m1fn"])
def test_fit_report_agrees_with_cast(name):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(300_000) * np.exp2(rng.uniform(-30, 30, 300_000)))
    x = np.concatenate([x, [np.nan, np.inf, -np.inf, 0.0, -0.0]]).astype(np.float32)
    r = lowp.fit_report(x, name)
    y = lowp.cast(lowp.cast(x, name), "float64")
    x64 = x.astype(np.float64)
    finite = np.isfinite(x64)
    measured = finite & (x64 != 0) & np.isfinite(y)
    err = np.abs(y[measured] - x64[measured])
    assert r["elements"] == x.size
    assert r["nan_inputs"] == np.isnan(x).sum()
    assert r["infinite_inputs"] == np.isinf(x).sum()
    assert r["became_nan"] == (np.isnan(y) & ~np.isnan(x)).sum()
    assert r["flushed_to_zero"] == (finite & (x64 != 0) & (y == 0)).sum()
    assert r["exact"] == (finite & (y == x64)).sum()
    assert r["measured"] == measured.sum()
    assert r["max_abs_error"] == err.max()
    # Relative errors are divided in f32 and summed in f32 blocks (FitStats' documented
    # contract), so they agree to about 2^-23, not to the last bit.
    rel = err / np.abs(x64[measured])
    assert np.isclose(r["max_rel_error"], rel.max(), rtol=2.0**-22, atol=0)
    assert np.isclose(r["mean_rel_error"], rel.mean(), rtol=1e-6, atol=0)
    assert r["amax"] == np.abs(x64[finite]).max()
    # The same statistics from one thread (the error sums may differ in their last bits).
    one = lowp.fit_report(x, name, threads=1)
    for k in r:
        if k.endswith("_sum") or k.startswith("mean_"):
            assert np.isclose(r[k], one[k], rtol=1e-6)
        else:
            assert r[k] == one[k], k
    # A lowp-format array is measured from its exact values.
    typed = lowp.cast(x, "f16")
    assert lowp.fit_report(typed, name) == lowp.fit_report(typed.astype(np.float32), name)
