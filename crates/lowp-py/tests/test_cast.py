"""lowp.cast against ml_dtypes and NumPy, bit for bit, and against exact references."""

import threading

import ml_dtypes
import numpy as np
import pytest
from conftest import FORMATS, NAMES, all_bits, finite_values, lowp_bits, ml_bits, reference

import lowp

RNG = np.random.default_rng(20240607)


def e8m0_difference(x, name):
    """Where lowp and ml_dtypes 0.6.0 differ, as the README says: E8M0 of the float32
    subnormals in (2^-127, 1.5 * 2^-127), which ml_dtypes rounds up to 2^-126 and lowp to the
    nearer 2^-127."""
    if name != "f8e8m0fnu":
        return np.zeros(x.shape, dtype=bool)
    return (x > np.float32(2.0**-127)) & (x < np.float32(1.5 * 2.0**-127))


def signalling_f16(x, name):
    """Where lowp and NumPy differ on purpose: a signalling NaN into f16, which NumPy's software
    conversion keeps signalling and lowp quiets, as IEEE 754 and the F16C instructions do."""
    if name != "f16":
        return np.zeros(x.shape, dtype=bool)
    return np.isnan(x) & ((x.view(np.uint32) & 0x0040_0000) == 0)


def assert_same_as_ml_dtypes(x, name):
    """lowp's bits equal ml_dtypes' (NumPy's for f16) for every input, NaNs included: the sign
    kept on the canonical NaN (in f16 with the payload bits that fit), and in FP6 and FP4,
    which have no NaN, the zero of the opposite sign. The exceptions are the two documented
    differences above. The crate's tests/nan_inputs.rs checks NaNs on the same terms."""
    ours = lowp_bits(x, name)
    theirs = ml_bits(x, name)
    nan_in = np.isnan(x)
    differ = e8m0_difference(x, name) | signalling_f16(x, name)
    bad = (ours != theirs) & ~differ
    assert not bad.any(), (
        f"{name}: {bad.sum()} of {x.size} differ, e.g. input {x[bad][:5]!r} "
        f"(bits {x[bad][:5].view(np.uint32)}) lowp {ours[bad][:5]} ml_dtypes {theirs[bad][:5]}"
    )
    widened = lowp.cast(ours[nan_in], "float32", source=name)
    if name.startswith(("f6", "f4")):
        assert (widened == 0).all()
    else:
        assert np.isnan(widened).all()
    return ours


def edge_cases(name):
    """Every value of the format and its negative, the midpoints of neighbours and the float32s
    on either side of them, the overflow region, zeros, infinities, NaNs and float32
    subnormals."""
    v = finite_values(name).astype(np.float32)
    mids = ((v[:-1].astype(np.float64) + v[1:]) / 2).astype(np.float32)
    around = np.concatenate(
        [mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf))]
    )
    big = v.max() * np.float32([1.0, 1.03125, 1.0625, 1.0625 + 2**-20, 1.125, 1.5, 2.0, 1e3])
    special = np.float32(
        [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 3.4028235e38, -3.4028235e38,
         1e-45, -1e-45, 2.0**-126, 2.0**-127, 1.2 * 2.0**-127, 1.5 * 2.0**-127, 2.0**-149]
    )
    payloads = np.array([0x7F800001, 0x7FC00001, 0xFFBFFFFF, 0x7FFFFFFF, 0xFF800100],
                        dtype=np.uint32).view(np.float32)
    x = np.concatenate([v, -v, around, -around, big, -big, special, payloads])
    return x.astype(np.float32)


def test_float32_edge_cases_match_ml_dtypes(fmt):
    assert_same_as_ml_dtypes(edge_cases(fmt), fmt)


def test_float32_random_bit_patterns_match_ml_dtypes(fmt):
    # Uniform over all 2^32 patterns: every exponent, subnormals, infinities and NaN payloads.
    x = RNG.integers(0, 2**32, size=2_000_000, dtype=np.uint32).view(np.float32)
    assert_same_as_ml_dtypes(x, fmt)


def test_float32_random_values_in_range_match_ml_dtypes(fmt):
    # Values spread over the format's own range (and a little past it), where rounding
    # decides most.
    info = lowp.finfo(fmt)
    exps = RNG.uniform(info.minexp - info.nmant - 2, info.maxexp + 1, size=2_000_000)
    x = (RNG.standard_normal(2_000_000) * np.exp2(exps)).astype(np.float32)
    assert_same_as_ml_dtypes(x, fmt)


def test_e8m0_difference_is_the_documented_one():
    x = np.float32([1.25 * 2.0**-127, 1.4 * 2.0**-127])
    assert list(lowp_bits(x, "f8e8m0fnu")) == [0, 0]
    assert list(ml_bits(x, "f8e8m0fnu")) == [1, 1]


def test_f16_matches_numpy_too():
    x = RNG.integers(0, 2**32, size=1_000_000, dtype=np.uint32).view(np.float32)
    ours = lowp.cast(x, "f16")
    assert ours.dtype == np.float16
    snan = signalling_f16(x, "f16")  # quieted by lowp, as in assert_same_as_ml_dtypes
    assert np.array_equal(ours.view(np.uint16)[~snan], x[~snan].astype(np.float16).view(np.uint16))
    assert (ours.view(np.uint16)[snan] & 0x7E00 == 0x7E00).all()


def test_result_dtypes(fmt):
    x = np.float32([1.0, 2.0])
    y = lowp.cast(x, fmt)
    assert y.dtype == np.dtype(FORMATS[fmt][0])
    assert lowp.cast(x, fmt, bits=True).dtype == FORMATS[fmt][1]
    # ml_dtypes names and dtypes name the same target.
    assert lowp.cast(x, FORMATS[fmt][0]).dtype == y.dtype
    assert lowp.cast(x, np.dtype(FORMATS[fmt][0]).name).dtype == y.dtype


def test_without_ml_dtypes_results_are_bits(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ml_dtypes", None)  # import ml_dtypes now fails
    x = np.float32([0.1, 448.0])
    y = lowp.cast(x, "f8e4m3fn")
    assert y.dtype == np.uint8
    assert list(y) == [0x1D, 0x7E]
    assert lowp.cast(x, "bf16").dtype == np.uint16
    assert lowp.cast(x, "f16").dtype == np.float16  # NumPy's own
    back = lowp.cast(y, "float32", source="f8e4m3fn")
    assert list(back) == [0.1015625, 448.0]


# --- float64 sources: rounded once -----------------------------------------------------------


def test_float64_directed_cases_of_double_rounding():
    x = np.array([1 + 2**-8 + 2**-40])
    assert lowp_bits(x, "bf16")[0] == 0x3F81
    assert ml_bits(x, "bf16")[0] == 0x3F80  # ml_dtypes rounds through float32: twice
    y = np.array([1.0625 + 2**-40])
    assert lowp_bits(y, "f8e4m3fn")[0] == 0x39
    assert ml_bits(y, "f8e4m3fn")[0] == 0x38
    z = np.array([1 + 2**-11 + 2**-40])
    assert lowp.cast(z, "f16").view(np.uint16)[0] == 0x3C01
    assert z.astype(np.float16).view(np.uint16)[0] == 0x3C01  # NumPy's f64 -> f16 is direct


def test_float64_rounds_once_against_exact_reference(fmt):
    info = lowp.finfo(fmt)
    lo = info.smallest_subnormal if fmt == "f8e8m0fnu" else -info.max
    v = finite_values(fmt)
    # Values near the midpoints of neighbours, nudged by amounts float32 cannot hold: where
    # rounding through float32 first goes wrong.
    mids = (v[:-1] + v[1:]) / 2
    nudge = mids * 2.0**-40
    x = np.concatenate([mids + nudge, mids - nudge, mids,
                        RNG.uniform(lo, info.max, 200_000)])
    x = x[(x >= lo) & (x <= info.max)]
    for rounding in ["nearest", "zero", "up", "down"]:
        got = lowp.cast(lowp.cast(x, fmt, rounding=rounding), "float64")
        want = reference(x, fmt, rounding)
        assert np.array_equal(got, want), (fmt, rounding, x[got != want][:5])
    # Where float32 holds the value exactly, ml_dtypes agrees.
    exact32 = x.astype(np.float32).astype(np.float64) == x
    ours = lowp_bits(x[exact32], fmt)
    assert np.array_equal(ours, ml_bits(x[exact32].astype(np.float32), fmt))
    # ... and the nudged midpoints are where ml_dtypes double-rounds (not E8M0, whose ties
    # round up either way; not f16, which NumPy converts from float64 directly).
    if fmt not in ("f8e8m0fnu", "f16"):
        nudged = mids + nudge
        nudged = nudged[(nudged <= info.max) & (np.abs(nudged) > info.tiny)]
        assert (lowp_bits(nudged, fmt) != ml_bits(nudged, fmt)).any()


def test_float32_directed_rounding_against_exact_reference(fmt):
    info = lowp.finfo(fmt)
    lo = info.smallest_subnormal if fmt == "f8e8m0fnu" else -info.max
    x = RNG.uniform(lo, info.max, 300_000).astype(np.float32)
    x = np.concatenate([x, finite_values(fmt).astype(np.float32)])
    x = x[(x >= lo) & (x <= info.max)]
    for rounding in ["nearest", "zero", "up", "down"]:
        got = lowp.cast(lowp.cast(x, fmt, rounding=rounding), "float64")
        want = reference(x.astype(np.float64), fmt, rounding)
        assert np.array_equal(got, want), (fmt, rounding)


# --- saturation, round trips, formats to formats --------------------------------------------


def test_saturate_equals_clipping_first(fmt):
    info = lowp.finfo(fmt)
    x = edge_cases(fmt)
    x = np.concatenate([x, RNG.standard_normal(100_000).astype(np.float32) * info.max * 4])
    finite_or_inf = ~np.isnan(x)
    lo = None if fmt == "f8e8m0fnu" else -info.max
    clipped = np.clip(x, lo, info.max).astype(np.float32)
    for rounding in ["nearest", "zero", "up", "down"]:
        sat = lowp_bits(x, fmt, saturate=True, rounding=rounding)
        ref = lowp_bits(clipped, fmt, rounding=rounding)
        assert np.array_equal(sat[finite_or_inf], ref[finite_or_inf]), rounding
    nan_in = lowp.cast(np.float32([np.nan]), fmt, saturate=True)
    if fmt.startswith(("f6", "f4")):
        assert lowp.cast(nan_in, "float32")[0] == 0  # no NaN in FP6/FP4: as ml_dtypes
    else:
        assert np.isnan(lowp.cast(nan_in, "float32")[0])


def test_round_trips_every_pattern(fmt):
    bits = all_bits(fmt)
    for wide in ["float32", "float64"]:
        values = lowp.cast(bits, wide, source=fmt)
        assert values.dtype == wide
        expected = bits.view(FORMATS[fmt][0]).astype(wide)
        assert np.array_equal(values, expected, equal_nan=True)
        back = lowp.cast(values, fmt, bits=True)
        nan = np.isnan(values)
        assert np.array_equal(back[~nan], bits[~nan])
        assert np.isnan(lowp.cast(back[nan], "float32", source=fmt)).all()
    # From the format's own dtype, and the same format back: the bits, NaN payloads too.
    typed = bits.view(FORMATS[fmt][0])
    assert np.array_equal(lowp.cast(typed, "float32"), typed.astype(np.float32), equal_nan=True)
    assert np.array_equal(lowp.cast(typed, fmt, bits=True), bits)


@pytest.mark.parametrize("src", ["f16", "bf16", "f8e5m2", "f6e3m2fn", "f4e2m1fn"])
def test_between_formats_rounds_once_from_the_exact_value(src, fmt):
    bits = all_bits(src)
    typed = bits.view(FORMATS[src][0])
    wide = typed.astype(np.float32)
    nan = np.isnan(wide)
    for rounding in ["nearest", "up"]:
        direct = lowp.cast(typed, fmt, bits=True, rounding=rounding)
        via = lowp.cast(wide, fmt, bits=True, rounding=rounding)
        assert np.array_equal(direct[~nan], via[~nan])
        # The same from bits named with source=.
        named = lowp.cast(bits, fmt, source=src, bits=True, rounding=rounding)
        assert np.array_equal(named[~nan], via[~nan])


# --- stochastic rounding ----------------------------------------------------------------------


def test_stochastic_is_unbiased_in_the_mean():
    # 30% of the way from 1 to the next bf16: rounds up with probability 0.3.
    x = np.full(1_000_000, 1 + 0.3 * 2**-7, dtype=np.float32)
    y = lowp.cast(lowp.cast(x, "bf16", rounding="stochastic", seed=1), "float64")
    assert set(np.unique(y)) == {1.0, 1 + 2**-7}
    p = (y > 1).mean()
    assert abs(p - 0.3) < 5 * np.sqrt(0.3 * 0.7 / x.size)


def test_stochastic_mean_over_many_draws(fmt):
    info = lowp.finfo(fmt)
    lo = info.smallest_subnormal if fmt == "f8e8m0fnu" else -info.max / 2
    x = RNG.uniform(lo, info.max / 2, 64).astype(np.float32)
    draws = 4000
    tiled = np.tile(x, draws)
    y = lowp.cast(lowp.cast(tiled, fmt, rounding="stochastic", seed=7), "float64")
    y = y.reshape(draws, x.size)
    down = reference(x.astype(np.float64), fmt, "down")
    up = reference(x.astype(np.float64), fmt, "up")
    # Every draw is one of the two neighbours, and their mean is the value.
    assert ((y == down) | (y == up)).all()
    gap = np.where(up > down, up - down, 1.0)
    err = (y.mean(axis=0) - x) / gap
    assert np.abs(err).max() < 5 * 0.5 / np.sqrt(draws)


def test_stochastic_seeds():
    x = RNG.standard_normal(300_000).astype(np.float32)
    a = lowp_bits(x, "f8e5m2", rounding="stochastic", seed=5)
    assert np.array_equal(a, lowp_bits(x, "f8e5m2", rounding="stochastic", seed=5))
    assert not np.array_equal(a, lowp_bits(x, "f8e5m2", rounding="stochastic", seed=6))
    assert not np.array_equal(lowp_bits(x, "f8e5m2", rounding="stochastic"),
                              lowp_bits(x, "f8e5m2", rounding="stochastic"))
    # Element i's bits depend on (seed, i) only: the same on any number of threads, and a
    # prefix of the array rounds as the whole does.
    for threads in [1, 2, 3, None]:
        assert np.array_equal(
            a, lowp_bits(x, "f8e5m2", rounding="stochastic", seed=5, threads=threads))
    assert np.array_equal(a[:1000],
                          lowp_bits(x[:1000], "f8e5m2", rounding="stochastic", seed=5))


# --- threads, layouts, the GIL ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["bf16", "f8e4m3fn", "f4e2m1fn"])
@pytest.mark.parametrize("rounding", ["nearest", "zero", "stochastic"])
def test_thread_counts_agree(name, rounding):
    x = RNG.standard_normal(1_000_003).astype(np.float32) * 100
    seed = 3 if rounding == "stochastic" else None
    one = lowp_bits(x, name, rounding=rounding, seed=seed, threads=1)
    for threads in [None, 2, 5]:
        assert np.array_equal(one, lowp_bits(x, name, rounding=rounding, seed=seed,
                                             threads=threads, saturate=False))
        back = lowp.cast(one, "float32", source=name, threads=threads)
        assert np.array_equal(back, lowp.cast(one, "float32", source=name, threads=1),
                              equal_nan=True)


def test_shapes_and_orders():
    x = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    y = lowp.cast(x, "bf16")
    assert y.shape == (3, 4, 5) and y.flags.c_contiguous
    assert np.array_equal(y.view(np.uint16), ml_bits(x, "bf16"))
    f = np.asfortranarray(x)
    yf = lowp.cast(f, "bf16")
    assert yf.flags.f_contiguous and yf.shape == f.shape
    assert np.array_equal(yf.view(np.uint16), ml_bits(f, "bf16"))
    assert np.array_equal(lowp.cast(yf, "float32"), yf.astype(np.float32))
    scalar = lowp.cast(np.array(0.1, dtype=np.float32), "f8e4m3fn")
    assert scalar.shape == () and float(scalar) == 0.1015625
    empty = lowp.cast(np.zeros((0, 3), dtype=np.float64), "f8e5m2")
    assert empty.shape == (0, 3)
    ro = np.arange(10, dtype=np.float32)
    ro.flags.writeable = False
    assert list(lowp.cast(ro, "f16")) == list(range(10))


def test_float_targets():
    x = RNG.standard_normal(1000)
    assert np.array_equal(lowp.cast(x, "float32"), x.astype(np.float32))
    assert np.array_equal(lowp.cast(x.astype(np.float32), np.float64),
                          x.astype(np.float32).astype(np.float64))


def test_threads_convert_concurrently():
    # The GIL is released while converting: several Python threads convert at once and each
    # gets its own right answer.
    xs = [RNG.standard_normal(500_000).astype(np.float32) for _ in range(4)]
    results = [None] * len(xs)

    def work(i):
        results[i] = lowp_bits(xs[i], "bf16", threads=1)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for x, r in zip(xs, results):
        assert np.array_equal(r, ml_bits(x, "bf16"))


def test_every_name_ml_dtypes_uses():
    x = np.float32([1.5])
    for name in NAMES:
        dt = np.dtype(FORMATS[name][0])
        assert lowp.cast(x, dt.name).dtype == dt
    assert lowp.cast(x, "bfloat16").dtype == ml_dtypes.bfloat16
    assert lowp.cast(x, "half").dtype == np.float16


def test_out_arrays():
    x = RNG.standard_normal((64, 33)).astype(np.float32)
    y = np.empty(x.shape, dtype=ml_dtypes.bfloat16)
    assert lowp.cast(x, "bf16", out=y) is y
    assert np.array_equal(y.view(np.uint16), ml_bits(x, "bf16"))
    b = np.empty(x.shape, dtype=np.uint8)
    assert lowp.cast(x, "f8e4m3fn", rounding="up", out=b) is b
    assert np.array_equal(b, lowp_bits(x, "f8e4m3fn", rounding="up"))
    back = np.empty(x.shape, dtype=np.float64)
    assert lowp.cast(y, "float64", out=back) is back
    assert np.array_equal(back, y.astype(np.float64))
    f = np.asfortranarray(x)
    fy = np.empty_like(f, dtype=np.float16)
    lowp.cast(f, "f16", out=fy)
    assert np.array_equal(fy, f.astype(np.float16))


def test_bad_out_arrays():
    x = np.float32([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match=r"out has shape \[4\], the array \[2, 2\]"):
        lowp.cast(x, "bf16", out=np.empty(4, dtype=np.uint16))
    with pytest.raises(TypeError, match="out has dtype uint8; a bf16 result needs the format's own dtype or uint16"):
        lowp.cast(x, "bf16", out=np.empty((2, 2), dtype=np.uint8))
    with pytest.raises(TypeError, match="a float32 result needs float32"):
        lowp.cast(x, "float32", out=np.empty((2, 2), dtype=np.float64))
    with pytest.raises(ValueError, match="contiguous in the input's order"):
        lowp.cast(x, "bf16", out=np.empty((2, 2), dtype=np.uint16, order="F"))
    ro = np.empty((2, 2), dtype=np.uint16)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        lowp.cast(x, "bf16", out=ro)
    with pytest.raises(TypeError, match="out= takes a NumPy array"):
        lowp.cast(x, "bf16", out=[0, 0, 0, 0])
    with pytest.raises(ValueError, match="bits= and out= together"):
        lowp.cast(x, "bf16", bits=True, out=np.empty((2, 2), dtype=np.uint16))
    h = np.ones(8, dtype=np.float16)
    with pytest.raises(ValueError, match="overlap"):
        lowp.cast(h, "bf16", out=h.view(np.uint16))
