"""lowp.convert to the block-quantized schemes (fp8-block, mxfp8, mxfp4, nvfp4) and back,
checked byte for byte against an independent NumPy + ml_dtypes quantizer written here.

The reference shares no code with lowp. It follows the layouts as the serving stacks define
them (DeepSeek-V3 fp8-block, OCP MX v1.0, gpt-oss MXFP4, NVIDIA ModelOpt NVFP4):

* the block scale from the block's largest magnitude `amax` (fp8-block: f32(amax / 448); MX:
  E8M0 of floor(log2(amax)) - emax, clamped to 0..254; nvfp4: e4m3(amax / (6 * scale_2)) with
  scale_2 = f32(amax_tensor / 2688), at least E4M3's smallest subnormal for a non-zero block);
* elements: the quotient x / scale in float64, rounded to nearest, ties to even, saturating.

Rounding is done by search among the format's values (every value and every midpoint of two
neighbours is exact in float64), not by ml_dtypes' casts: ml_dtypes 0.6.0 converts float64 to
float8 / float4 through float32 (`np.float64(1 + 2**-4 + 2**-40).astype(float8_e4m3fn)` gives 1,
not 1.125), a double rounding that gets quotients just beside a tie wrong. ml_dtypes decodes the
element and scale bytes (exactly) and `test_reference_rounding` checks the search against its
casts where those are exact. Blocks whose elements are all zero get scale 0 (fp8-block, nvfp4)
or E8M0 byte 0 (MX) and ±0 elements, as crates/lowp-io/src/quant/codec.rs documents.
"""

import json
import os
import struct

import ml_dtypes
import numpy as np
import pytest

import lowp

SCHEMES = ["fp8-block", "mxfp8", "mxfp4", "nvfp4"]
E4M3, E2M1 = ml_dtypes.float8_e4m3fn, ml_dtypes.float4_e2m1fn
TINY_F32 = np.float32(2.0**-149)

# ---------------------------------------------------------------------------------------------
# safetensors by hand
# ---------------------------------------------------------------------------------------------

ST_DTYPES = {"F64": np.float64, "F32": np.float32, "F16": np.float16,
             "BF16": ml_dtypes.bfloat16, "F8_E4M3": E4M3, "U8": np.uint8, "I64": np.int64}
ST_NAMES = {np.dtype(t): name for name, t in ST_DTYPES.items()}


def write_safetensors(path, tensors, metadata=None):
    """A safetensors file written by hand: 8-byte header length, JSON header, data."""
    header, blobs, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, array in tensors.items():
        array = np.asarray(array)
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": ST_NAMES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    """(tensors, metadata) of a safetensors file: each tensor a NumPy array of its dtype."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    metadata = header.pop("__metadata__", None) or {}
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        data = raw[8 + n + begin:8 + n + end]
        out[name] = np.frombuffer(data, ST_DTYPES[info["dtype"]]).reshape(info["shape"])
    return out, metadata


def assert_same_tensor(got, want, what):
    """Same dtype, same shape, same bytes; on a mismatch, says where."""
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    g = np.ascontiguousarray(got).view(np.uint8).reshape(-1)
    w = np.ascontiguousarray(want).view(np.uint8).reshape(-1)
    bad = np.flatnonzero(g != w)
    assert bad.size == 0, (
        f"{what}: {bad.size} of {g.size} bytes differ, first at byte {bad[0]}: "
        f"got {g[bad[0]]:#04x}, expected {w[bad[0]]:#04x}")


# ---------------------------------------------------------------------------------------------
# The reference quantizer
# ---------------------------------------------------------------------------------------------

def _values(dtype, codes):
    return np.arange(codes, dtype=np.uint8).view(dtype).astype(np.float64)


# Non-negative finite values of the element formats, ascending with their codes.
E4M3_POS = _values(E4M3, 0x7F)  # 0 .. 448 (0x7F is NaN)
E2M1_POS = _values(E2M1, 0x08)  # 0 .. 6
E4M3_ALL = _values(E4M3, 256)   # every byte, decoded (NaN for 0x7F, 0xFF)
E2M1_ALL = _values(E2M1, 16)
assert E4M3_POS[-1] == 448 and E2M1_POS[-1] == 6 and np.all(np.diff(E4M3_POS) > 0)


def round_codes(q, positive, sign_bit):
    """The codes of float64 `q` rounded to nearest, ties to the even code (the even
    significand), saturating at the largest value; the sign of a zero is kept."""
    a = np.minimum(np.abs(q), positive[-1])
    hi = np.searchsorted(positive, a, side="left")  # first value >= a
    lo = np.maximum(np.where(positive[hi] == a, hi, hi - 1), 0)  # last value <= a
    mid = (positive[lo] + positive[hi]) / 2
    code = np.where(a < mid, lo, np.where(a > mid, hi, np.where(lo % 2 == 0, lo, hi)))
    return (code | np.where(np.signbit(q), sign_bit, 0)).astype(np.uint8)


def e4m3_codes(q):
    return round_codes(q, E4M3_POS, 0x80)


def e2m1_codes(q):
    return round_codes(q, E2M1_POS, 0x08)


def block_cols(scheme):
    return {"fp8-block": 128, "mxfp8": 32, "mxfp4": 32, "nvfp4": 16}[scheme]


def to_blocks(scheme, x):
    """float64 `x` [..., R, C] as blocks [..., block elements], zero-padded to whole blocks:
    fp8-block [matrices, R/128, C/128, 128*128], the others [rows, C/bc, bc]."""
    x = np.asarray(x, np.float64)
    c = x.shape[-1]
    if scheme == "fp8-block":
        r = x.shape[-2]
        m = x.reshape(-1, r, c)
        nbr, nbc = -(-r // 128), -(-c // 128)
        p = np.zeros((m.shape[0], nbr * 128, nbc * 128))
        p[:, :r, :c] = m
        return p.reshape(-1, nbr, 128, nbc, 128).transpose(0, 1, 3, 2, 4).reshape(-1, nbr, nbc, 128 * 128)
    bc = block_cols(scheme)
    rows = x.reshape(-1, c)
    nb = -(-c // bc)
    p = np.zeros((rows.shape[0], nb * bc))
    p[:, :c] = rows
    return p.reshape(-1, nb, bc)


def from_blocks(scheme, b, shape):
    """The inverse of to_blocks: [..., R, C], padding dropped."""
    r, c = shape[-2], shape[-1]
    if scheme == "fp8-block":
        m, nbr, nbc, _ = b.shape
        full = b.reshape(m, nbr, nbc, 128, 128).transpose(0, 1, 3, 2, 4).reshape(m, nbr * 128, nbc * 128)
        return full[:, :r, :c].reshape(shape)
    return b.reshape(b.shape[0], -1)[:, :c].reshape(shape)


def nvfp4_scale_2(x):
    amax = float(np.max(np.abs(x))) if np.size(x) else 0.0
    if amax == 0:
        return np.float32(0)
    return np.clip(np.float32(amax / 2688.0), TINY_F32, np.finfo(np.float32).max)


def spec_scales(scheme, blocks, scale_2):
    """Each block's scale by the scheme's formula, as stored: f32 (fp8-block) or the byte."""
    amax = np.abs(blocks).max(axis=-1)
    if scheme == "fp8-block":
        s = np.maximum((amax / 448.0).astype(np.float32), TINY_F32)
        return np.where(amax == 0, np.float32(0), s).astype(np.float32)
    if scheme in ("mxfp8", "mxfp4"):
        emax = 8 if scheme == "mxfp8" else 2
        _, e = np.frexp(amax)  # amax = m * 2^e, 0.5 <= m < 1: floor(log2(amax)) = e - 1
        return np.where(amax == 0, 0, np.clip(e - 1 - emax + 127, 0, 254)).astype(np.uint8)
    if scale_2 == 0:
        return np.zeros(amax.shape, np.uint8)
    s = e4m3_codes(amax / (6.0 * np.float64(scale_2)))  # one f64 division, then e4m3
    return np.where(amax == 0, 0, np.maximum(s, 1)).astype(np.uint8)


def divisors(scheme, scales, scale_2):
    """What each block's elements are divided by, exactly, in float64."""
    if scheme == "fp8-block":
        return scales.astype(np.float64)
    if scheme in ("mxfp8", "mxfp4"):
        return np.ldexp(1.0, scales.astype(np.int64) - 127)
    return E4M3_ALL[scales] * np.float64(scale_2)  # 4 x 24 significant bits: exact


def element_codes(scheme, blocks, div):
    """The elements of every block, x / div rounded (±0 where the divisor is 0)."""
    d = div[..., None]
    q = np.where(d == 0, blocks * 0.0, blocks / np.where(d == 0, 1.0, d))  # x * 0 keeps the sign
    return e4m3_codes(q) if scheme in ("fp8-block", "mxfp8") else e2m1_codes(q)


def ref_quantize(scheme, x, scales=None):
    """(codes, scales, scale_2) in block layout; `scales` given: the elements for those."""
    blocks = to_blocks(scheme, x)
    scale_2 = nvfp4_scale_2(x) if scheme == "nvfp4" else None
    if scales is None:
        scales = spec_scales(scheme, blocks, scale_2)
    return element_codes(scheme, blocks, divisors(scheme, scales, scale_2)), scales, scale_2


def pack_fp4(codes):
    """[rows, blocks, bc] nibbles -> [rows, blocks * bc / 2] bytes, the even element low."""
    flat = codes.reshape(codes.shape[0], -1)
    return (flat[:, 0::2] | (flat[:, 1::2] << 4)).astype(np.uint8)


def ref_tensors(scheme, name, shape, codes, scales, scale_2):
    """The tensors storing weight `name` of `shape`, per the layouts of the brief."""
    lead, c = list(shape[:-1]), shape[-1]
    nb = -(-c // block_cols(scheme))
    if scheme == "fp8-block":
        grid = list(shape[:-2]) + [-(-shape[-2] // 128), nb]
        return {name: from_blocks(scheme, codes, shape).astype(np.uint8).view(E4M3),
                f"{name}_scale_inv": scales.reshape(grid).astype(np.float32)}
    if scheme == "mxfp8":
        return {name: from_blocks(scheme, codes, shape).astype(np.uint8).view(E4M3),
                f"{name}_scale": scales.reshape(lead + [nb])}
    if scheme == "mxfp4":
        return {f"{name}.blocks": pack_fp4(codes).reshape(lead + [nb, 16]),
                f"{name}.scales": scales.reshape(lead + [nb])}
    return {name: pack_fp4(codes).reshape(lead + [nb * 8]),
            f"{name}_scale": scales.reshape(lead + [nb]).view(E4M3),
            f"{name}_scale_2": np.asarray(scale_2, np.float32).reshape(())}


def ref_decode_f32(scheme, codes, scales, scale_2, shape):
    """What the reference decoders compute, in f32."""
    if scheme == "fp8-block":
        v = E4M3_ALL[codes].astype(np.float32) * scales.astype(np.float32)[..., None]
    elif scheme in ("mxfp8", "mxfp4"):
        table = E4M3_ALL if scheme == "mxfp8" else E2M1_ALL
        v = (table[codes] * divisors(scheme, scales, None)[..., None]).astype(np.float32)  # exact, one rounding
        v[scales == 255] = np.nan
    else:
        per_block = E4M3_ALL[scales].astype(np.float32) * np.float32(scale_2)  # f32 product first
        v = E2M1_ALL[codes].astype(np.float32) * per_block[..., None]
    return from_blocks(scheme, v, shape)


def ref_decode_f64(scheme, codes, scales, scale_2):
    """The exact values written, in float64 (block layout)."""
    table = E4M3_ALL if scheme in ("fp8-block", "mxfp8") else E2M1_ALL
    return table[codes] * divisors(scheme, scales, scale_2)[..., None]


def ref_figures(scheme, x, codes, scales, scale_2):
    """(sqnr_db, rel_frobenius_error, clipped_blocks, blocks) as the report defines them."""
    blocks = to_blocks(scheme, x)
    xhat = ref_decode_f64(scheme, codes, scales, scale_2)
    signal = float(np.sum(blocks * blocks))
    noise = float(np.sum((blocks - xhat) ** 2))
    sqnr = np.inf if noise == 0 else 10 * np.log10(signal / noise)
    rel = 0.0 if noise == 0 else np.sqrt(noise / signal)
    div = divisors(scheme, scales, scale_2)
    amax = np.abs(blocks).max(axis=-1)
    scaled = amax / np.where(div == 0, np.inf, div)
    clipped = scaled > 464 if scheme in ("fp8-block", "mxfp8") else scaled >= 7
    return sqnr, rel, int(np.sum(clipped)), int(np.prod(div.shape))


def stored_scales(scheme, name, out, shape):
    """The block scales lowp wrote for weight `name`, in block layout."""
    if scheme == "fp8-block":
        s = out[f"{name}_scale_inv"]
        return s.reshape(-1, s.shape[-2], s.shape[-1]).copy()
    key = {"mxfp8": f"{name}_scale", "mxfp4": f"{name}.scales", "nvfp4": f"{name}_scale"}[scheme]
    s = out[key]
    return np.ascontiguousarray(s).view(np.uint8).reshape(-1, s.shape[-1]).copy()


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------

def model_tensors():
    """Weights of awkward shapes and values, plus tensors no scheme touches."""
    rng = np.random.default_rng(2024)
    a = rng.normal(0, 0.02, (64, 96)).astype(np.float32)
    b = (rng.standard_t(3, (130, 200)) * 0.05).astype(np.float32)
    b[0] = 0.0
    b[0, 1::3] = -0.0  # a zero row: zero MX and nvfp4 blocks, their -0 kept
    b[128:, 128:] = 0.0
    b[129, 130::2] = -0.0  # the bottom-right fp8 block (2 x 72) is zero
    b[1] = rng.integers(-64, 65, 200) * 2.0**-6  # a grid: many quotients exactly on ties
    b[2, 0] = 56.0  # 448 / 8: the first fp8 block's scale_inv is 1/8, so b[1]'s ties stay ties
    b[3, :40] = rng.normal(0, 1, 40) * 2.0**-10  # a block far below the others
    e = rng.normal(0, 0.1, (3, 40, 50)).astype(np.float32)
    e[0, 0] = (rng.normal(0, 1, 50) * 1e-39).astype(np.float32)  # f32 subnormals: E8M0 byte 0
    e[2] = (rng.normal(0, 1, (40, 50)) * 1e-42).astype(np.float32)  # a whole subnormal matrix
    e[1, 5] = 3.0  # outlier rows that clip E2M1 / E4M3 blocks under the MX rule
    e[1, 6, :32] = np.float32(1.9375 * 2)  # amax/2^E = 7.75 for mxfp4 (clipped), 496 for mxfp8
    lm = rng.normal(0, 1, (5, 50)).astype(ml_dtypes.bfloat16)
    return {
        "near_ties.weight": near_ties(rng),
        "a.weight": a,
        "norm.weight": np.ones(96, np.float32),
        "b.bias": rng.normal(0, 1, 200).astype(np.float32),
        "b.weight": b,
        "experts.weight": e,
        "pos_table": rng.normal(0, 1, (4, 96)).astype(np.float32),
        "head.proj.weight": lm,
        "ids": np.arange(6, dtype=np.int64),
    }


def near_ties(rng):
    """Values whose quotients lie within float32's precision of a tie, on either side, but not
    on it: x = f32(t * d) for ties t of the element format and the divisor d a block will get.
    A quotient computed in f32, or rounded to f32 before the element format (as ml_dtypes
    does from float64), lands on the tie and goes to even; the correct rounding does not.
    Rows 0-7 aim at fp8-block's scale (the tensor is one 128x128 block of amax 1.3), rows
    8-15 at nvfp4's (scale_2 from that amax, each 16-block's scale from its first element);
    for the MX schemes they are just values."""
    x = np.zeros((16, 128), np.float32)
    amax = float(np.float32(1.3))  # as stored
    s = np.float64(np.float32(amax / 448))
    ties = (E4M3_POS[1:-1] + E4M3_POS[2:]) / 2  # between two positive values
    ties = ties[ties >= 0.5]
    t = rng.choice(ties, (8, 128)) * rng.choice([-1, 1], (8, 128))
    x[:8] = (t * s).astype(np.float32)
    x[0, 0] = amax
    scale_2 = np.float64(np.float32(amax / 2688))
    e2m1_ties = (E2M1_POS[:-1] + E2M1_POS[1:]) / 2
    blocks = x[8:].reshape(8, 8, 16)
    first = rng.uniform(0.1, 1.2, (8, 8)).astype(np.float32)
    scale = E4M3_ALL[np.maximum(e4m3_codes(first / (6 * scale_2)), 1)]
    t = rng.choice(e2m1_ties, (8, 8, 16)) * rng.choice([-1, 1], (8, 8, 16))
    blocks[:] = (t * (scale * scale_2)[..., None]).astype(np.float32)
    blocks[:, :, 0] = first
    x[8:] = blocks.reshape(8, 128)
    return x


# >= 2-D tensors whose names end in "weight": what every scheme quantizes.
WEIGHTS = ["near_ties.weight", "a.weight", "b.weight", "experts.weight", "head.proj.weight"]


def expected_output(scheme, tensors):
    """Every tensor of the quantized file, per the reference, and the padded shapes."""
    out, padded = {}, {}
    for name, x in tensors.items():
        if name not in WEIGHTS:
            out[name] = x
            continue
        codes, scales, scale_2 = ref_quantize(scheme, x.astype(np.float64))
        out.update(ref_tensors(scheme, name, x.shape, codes, scales, scale_2))
        if scheme in ("mxfp4", "nvfp4") and x.shape[-1] % block_cols(scheme):
            padded[f"lowp.shape.{name}"] = list(x.shape)
    return out, padded


def shape_metadata(metadata):
    return {k: json.loads(v) for k, v in metadata.items() if k.startswith("lowp.shape.")}


@pytest.fixture
def model(tmp_path):
    tensors = model_tensors()
    path = tmp_path / "model.safetensors"
    write_safetensors(path, tensors, {"format": "pt"})
    return path, tensors


@pytest.fixture(params=SCHEMES)
def scheme(request):
    return request.param


# ---------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------

def test_reference_rounding():
    """The reference's rounding agrees with ml_dtypes' casts where those are exact (inputs
    that are float32 values), and is right where ml_dtypes double-rounds."""
    rng = np.random.default_rng(5)
    for codes, dtype, top in ((e4m3_codes, E4M3, 448), (e2m1_codes, E2M1, 6)):
        x = np.concatenate([rng.normal(0, top / 4, 5000), rng.uniform(-top, top, 5000),
                            np.arange(-2 * top, 2 * top, 1 / 64), [0.0, -0.0]]).astype(np.float32)
        want = np.clip(x, -top, top).astype(dtype).view(np.uint8)
        assert np.array_equal(codes(x.astype(np.float64)), want)
    # Just above a tie, by less than float32 can tell: up, whatever ml_dtypes says.
    assert E4M3_ALL[e4m3_codes(np.float64(1 + 2**-4 + 2**-40))] == 1.125
    assert E4M3_ALL[e4m3_codes(np.float64(1 + 2**-4))] == 1.0
    assert E2M1_ALL[e2m1_codes(np.float64(0.25 + 2**-40))] == 0.5
    assert e2m1_codes(np.float64(-0.25)) == 0x08  # -0: the sign of a zero is kept


def test_near_ties_are_where_shortcuts_go_wrong():
    """The data really holds quotients that a float32 quotient (or ml_dtypes' cast of the
    float64 one) rounds the wrong way, so matching the reference on them means something."""
    x = near_ties(np.random.default_rng(0)).astype(np.float64)
    for scheme in ("fp8-block", "nvfp4"):
        codes, scales, scale_2 = ref_quantize(scheme, x)
        blocks = to_blocks(scheme, x)
        div = divisors(scheme, scales, scale_2)[..., None]
        dtype, top = (E4M3, 448) if scheme == "fp8-block" else (E2M1, 6)
        q32 = blocks.astype(np.float32) / div.astype(np.float32)
        wrong_f32 = np.clip(q32, -top, top).astype(dtype).view(np.uint8) != codes
        wrong_ml = np.clip(blocks / div, -top, top).astype(dtype).view(np.uint8) != codes
        assert wrong_f32.sum() > 100 and wrong_ml.sum() > 100, scheme


def test_quantized_bytes_match_the_reference(model, scheme, tmp_path):
    src, tensors = model
    dst = tmp_path / f"model_{scheme}.safetensors"
    report = lowp.convert(src, dst, to=scheme)
    out, metadata = read_safetensors(dst)
    want, padded = expected_output(scheme, tensors)
    assert sorted(out) == sorted(want)
    for name in want:
        assert_same_tensor(out[name], want[name], f"{scheme} {name}")
    assert shape_metadata(metadata) == padded
    if scheme in ("mxfp4", "nvfp4"):  # the shapes that must be padded are
        assert set(padded) == {"lowp.shape.b.weight", "lowp.shape.experts.weight",
                               "lowp.shape.head.proj.weight"}

    by_name = {r["name"]: r for r in report}
    assert list(by_name) == list(tensors)
    for name, x in tensors.items():
        r = by_name[name]
        assert r["shape"] == list(x.shape)
        if name not in WEIGHTS:
            assert r["scheme"] is None and r["verdict"] == "kept", name
            continue
        codes, scales, scale_2 = ref_quantize(scheme, x.astype(np.float64))
        sqnr, rel, clipped, blocks = ref_figures(scheme, x.astype(np.float64), codes, scales, scale_2)
        assert r["scheme"] == scheme
        assert r["elements"] == x.size
        assert (r["blocks"], r["clipped_blocks"]) == (blocks, clipped), name
        assert r["sqnr_db"] == pytest.approx(sqnr, rel=1e-9), name
        assert r["rel_frobenius_error"] == pytest.approx(rel, rel=1e-9), name
        nbytes = sum(t.nbytes for t in ref_tensors(scheme, name, x.shape, codes, scales, scale_2).values())
        assert r["bytes_per_param"] == pytest.approx(nbytes / x.size, rel=1e-12), name
        assert r["verdict"] in ("ok", "warn")
    # The outlier rows of experts.weight clip under the MX rules (amax / 2^E = 7.75, 496).
    if scheme in ("mxfp8", "mxfp4"):
        assert by_name["experts.weight"]["clipped_blocks"] > 0


def test_edge_blocks(model, tmp_path):
    """The edge cases the layouts define, spelled out (the byte comparison covers them too)."""
    src, tensors = model
    b, e = tensors["b.weight"], tensors["experts.weight"]
    for scheme in SCHEMES:
        dst = tmp_path / f"{scheme}.safetensors"
        lowp.convert(src, dst, to=scheme)
        out, _ = read_safetensors(dst)
        bs = stored_scales(scheme, "b.weight", out, b.shape)
        es = stored_scales(scheme, "experts.weight", out, e.shape)
        if scheme == "fp8-block":
            assert bs.shape == (1, 2, 2) and es.shape == (3, 1, 1)
            assert bs[0, 1, 1] == 0  # the all-zero block
            assert bs[0, 0, 0] == np.float32(56.0 / 448)
            data = out["b.weight"].view(np.uint8)
            assert np.array_equal(data[128:, 128:], np.where(np.signbit(b[128:, 128:]), 0x80, 0))
            # A matrix of f32 subnormals: scale_inv = f32(amax / 448), itself subnormal.
            amax = np.abs(e[2]).astype(np.float64).max()
            assert es[2, 0, 0] == np.float32(amax / 448) and 0 < es[2, 0, 0] < 2.0**-126
        elif scheme in ("mxfp8", "mxfp4"):
            assert np.all(bs[0] == 0)  # zero blocks: E8M0 byte 0
            assert np.all(es[0] == 0)  # subnormal row: exponent clamped to E8M0's smallest
            emax = 8 if scheme == "mxfp8" else 2
            _, exp = np.frexp(np.abs(b[1, :32]).max())
            assert bs[1, 0] == exp - 1 - emax + 127
        else:
            assert np.all(bs[0] == 0)
            assert np.all(es[0] == 1)  # tiny non-zero blocks: E4M3's smallest subnormal
            s2 = out["b.weight_scale_2"]
            assert s2.shape == () and s2 == np.float32(56.0 / 2688)
        if scheme == "mxfp4":
            row0 = out["b.weight.blocks"][0].reshape(-1)
            # -0 at elements 1, 4, 7, ... (sign nibble 8), +0 padding beyond column 200.
            nib = np.stack([row0 & 0xF, row0 >> 4], axis=-1).reshape(-1)
            assert np.array_equal(nib[:200], np.where(np.signbit(b[0]), 8, 0))
            assert np.all(nib[200:] == 0)


def test_e8m0_clamps_at_254_for_f64_sources(tmp_path):
    """2^200 needs an E8M0 exponent beyond 127: the scale clamps at 254 and elements saturate."""
    x = np.full((2, 40), 2.0**200)
    x[1, :] = -(2.0**-1000)  # and one far below 2^-127: byte 0, elements round to -0
    x[0, 1] = 2.0**190
    src = tmp_path / "huge.safetensors"
    write_safetensors(src, {"w.weight": x})
    for scheme, top in (("mxfp8", 0x7E), ("mxfp4", 0x7)):
        dst = tmp_path / f"huge_{scheme}.safetensors"
        (r,) = lowp.convert(src, dst, to=scheme)
        out, _ = read_safetensors(dst)
        codes, scales, _ = ref_quantize(scheme, x)
        for name, t in ref_tensors(scheme, "w.weight", x.shape, codes, scales, None).items():
            assert_same_tensor(out[name], t, f"{scheme} {name}")
        assert np.array_equal(scales, [[254, 254], [0, 0]])
        assert r["clipped_blocks"] == 2 and r["blocks"] == 4
        if scheme == "mxfp8":
            data = out["w.weight"].view(np.uint8)
            assert data[0, 0] == top and np.all(data[1] == 0x80)


def test_nan_and_infinity_mark_their_blocks(tmp_path):
    """A block holding NaN or infinity gets a scale that says so (E8M0 255, E4M3 NaN, f32
    NaN or +inf), its finite elements are what its finite values alone give, an infinity
    becomes ±MAX and a NaN the element NaN (E4M3) or, E2M1 having none, the zero of the
    opposite sign (-0 for this +NaN, as ml_dtypes gives it); the report fails the tensor
    and decoding gives NaN for the whole block (codec.rs's documented choice)."""
    rng = np.random.default_rng(9)
    w = rng.normal(0, 1, (2, 64)).astype(np.float32)
    w[0, 3] = np.nan
    w[1, 40] = -np.inf
    inf_only = rng.normal(0, 1, (2, 64)).astype(np.float32)
    inf_only[1, 40] = np.inf
    src = tmp_path / "nonfinite.safetensors"
    write_safetensors(src, {"w.weight": w, "i.weight": inf_only})
    for scheme in SCHEMES:
        dst = tmp_path / f"nonfinite_{scheme}.safetensors"
        report = {r["name"]: r for r in lowp.convert(src, dst, to=scheme)}
        out, _ = read_safetensors(dst)
        r = report["w.weight"]
        assert r["verdict"] == "fail" and r["sqnr_db"] is None, scheme
        finite = np.where(np.isfinite(w), w, 0).astype(np.float64)
        codes, scales, scale_2 = ref_quantize(scheme, finite)
        flat_nan = to_blocks(scheme, np.isnan(w).astype(np.float64)) > 0
        flat_inf = to_blocks(scheme, np.isinf(w).astype(np.float64)) > 0
        e4m3 = scheme in ("fp8-block", "mxfp8")
        codes[flat_nan] = 0x7F if e4m3 else 0x8
        codes[flat_inf] = 0xFE if e4m3 else 0xF  # -inf: -MAX
        marked = flat_nan.any(-1) | flat_inf.any(-1)
        got_scales = stored_scales(scheme, "w.weight", out, w.shape)
        if scheme == "fp8-block":
            assert np.isnan(got_scales[0, 0, 0])
        else:
            assert np.array_equal(marked, got_scales == (255 if scheme != "nvfp4" else 0x7F))
            assert np.array_equal(got_scales[~marked], scales[~marked])
        assert np.array_equal(stored_codes(scheme, "w.weight", out, w.shape), codes), scheme
        if scheme == "nvfp4":  # scale_2 from the finite values
            assert out["w.weight_scale_2"] == nvfp4_scale_2(finite)
        if scheme == "fp8-block":
            assert stored_scales(scheme, "i.weight", out, w.shape)[0, 0, 0] == np.inf
        back = tmp_path / f"nonfinite_{scheme}_back.safetensors"
        lowp.convert(dst, back, to="f32")
        decoded = to_blocks(scheme, read_safetensors(back)[0]["w.weight"])
        assert np.all(np.isnan(decoded[marked][..., :]) | (to_blocks(scheme, np.ones(w.shape)) == 0)[marked])
        assert not np.any(np.isnan(decoded[~marked]))


def test_decoding_matches_the_reference_decoders(model, scheme, tmp_path):
    src, tensors = model
    q = tmp_path / f"q_{scheme}.safetensors"
    lowp.convert(src, q, to=scheme)
    for to, dtype in (("f32", np.float32), ("bf16", ml_dtypes.bfloat16), ("f64", np.float64)):
        dst = tmp_path / f"back_{scheme}_{to}.safetensors"
        report = lowp.convert(q, dst, to=to)
        out, metadata = read_safetensors(dst)
        assert sorted(out) == sorted(tensors)  # the original names, scale tensors gone
        assert shape_metadata(metadata) == {}
        assert {r["name"] for r in report} == set(tensors)
        for name in WEIGHTS:
            x = tensors[name]
            codes, scales, scale_2 = ref_quantize(scheme, x.astype(np.float64))
            if to == "f64":
                want = from_blocks(scheme, ref_decode_f64(scheme, codes, scales, scale_2), x.shape)
            else:
                want = ref_decode_f32(scheme, codes, scales, scale_2, x.shape).astype(dtype)
            assert_same_tensor(out[name], want, f"{scheme} -> {to} {name}")
            assert {r["name"]: r for r in report}[name]["shape"] == list(x.shape)
        assert_same_tensor(out["ids"], tensors["ids"], "ids")
        for name in ("norm.weight", "b.bias", "pos_table"):
            assert_same_tensor(out[name], tensors[name].astype(dtype), name)


def test_requantizing_a_quantized_file_keeps_it(model, tmp_path):
    src, _ = model
    q = tmp_path / "q.safetensors"
    lowp.convert(src, q, to="mxfp4")
    again = tmp_path / "again.safetensors"
    report = lowp.convert(q, again, to="nvfp4")
    a, ma = read_safetensors(q)
    b, mb = read_safetensors(again)
    assert sorted(a) == sorted(b) and ma == mb
    for name in a:
        assert_same_tensor(b[name], a[name], name)
    by_name = {r["name"]: r for r in report}
    assert by_name["b.weight"]["verdict"] == "kept"
    assert "already mxfp4" in by_name["b.weight"]["why"]


def test_only_and_keep_choose_what_is_quantized(model, tmp_path):
    src, tensors = model
    dst = tmp_path / "only.safetensors"
    report = lowp.convert(src, dst, to="mxfp8", only=["pos_*", "*.weight"], keep=["b.*", "head.*"])
    out, _ = read_safetensors(dst)
    quantized = {r["name"] for r in report if r["scheme"] == "mxfp8"}
    # only matches a 2-D tensor not named "...weight"; a 1-D match is never quantized.
    assert quantized == {"pos_table", "near_ties.weight", "a.weight", "experts.weight"}
    x = tensors["pos_table"].astype(np.float64)
    codes, scales, _ = ref_quantize("mxfp8", x)
    for name, want in ref_tensors("mxfp8", "pos_table", x.shape, codes, scales, None).items():
        assert_same_tensor(out[name], want, name)
    for name in ("b.weight", "norm.weight"):  # kept: stored as f32
        assert_same_tensor(out[name], tensors[name], name)
    assert_same_tensor(out["head.proj.weight"], tensors["head.proj.weight"].astype(np.float32), "head.proj")
    assert "b.weight_scale" not in out and "head.proj.weight_scale" not in out


def test_embeddings_and_lm_head_stay_unless_only_names_them(tmp_path):
    rng = np.random.default_rng(3)
    tensors = {name: rng.normal(0, 1, (8, 64)).astype(np.float32)
               for name in ("model.embed_tokens.weight", "lm_head.weight", "model.layers.0.mlp.weight")}
    src = tmp_path / "m.safetensors"
    write_safetensors(src, tensors)
    report = {r["name"]: r for r in lowp.convert(src, None, to="nvfp4")}
    assert report["model.layers.0.mlp.weight"]["scheme"] == "nvfp4"
    for name in ("model.embed_tokens.weight", "lm_head.weight"):
        assert report[name]["verdict"] == "kept" and "embedding or output head" in report[name]["why"]
    chosen = {r["name"]: r for r in lowp.convert(src, None, to="nvfp4", only=["*"])}
    assert all(r["scheme"] == "nvfp4" for r in chosen.values())


def test_rest_converts_the_tensors_left_unquantized(model, tmp_path):
    src, tensors = model
    dst = tmp_path / "rest.safetensors"
    lowp.convert(src, dst, to="fp8-block", rest="bf16", keep=["*norm*"])
    out, _ = read_safetensors(dst)
    for name in ("b.bias", "pos_table"):
        assert_same_tensor(out[name], tensors[name].astype(ml_dtypes.bfloat16), name)
    assert_same_tensor(out["norm.weight"], tensors["norm.weight"], "norm.weight")
    assert_same_tensor(out["ids"], tensors["ids"], "ids")
    assert out["a.weight"].dtype == E4M3 and "a.weight_scale_inv" in out


# ---------------------------------------------------------------------------------------------
# Model directories
# ---------------------------------------------------------------------------------------------

SHARD_1 = ["near_ties.weight", "a.weight", "norm.weight", "b.bias"]
SHARD_2 = ["b.weight", "experts.weight", "pos_table", "head.proj.weight", "ids"]
CONFIG = {"architectures": ["ToyForCausalLM"], "hidden_size": 96, "torch_dtype": "float32"}
TOKENIZER = '{"model": {"vocab": {"héllo": 0, "wörld": 1}}}\n'.encode()


@pytest.fixture
def model_dir(tmp_path):
    tensors = model_tensors()
    d = tmp_path / "model"
    d.mkdir()
    names = {}
    for i, members in enumerate((SHARD_1, SHARD_2)):
        shard = f"model-0000{i + 1}-of-00002.safetensors"
        write_safetensors(d / shard, {n: tensors[n] for n in members}, {"format": "pt"})
        names.update({n: shard for n in members})
    total = sum(t.nbytes for t in tensors.values())
    (d / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": total}, "weight_map": names}))
    (d / "config.json").write_text(json.dumps(CONFIG))
    (d / "tokenizer.json").write_bytes(TOKENIZER)
    return d, tensors


def read_model_dir(d):
    """Every tensor of an indexed model directory, checking the index against the shards, and
    the union of the shards' padded-shape metadata."""
    index = json.loads((d / "model.safetensors.index.json").read_text())
    weight_map = index["weight_map"]
    tensors, metadata, where = {}, {}, {}
    for shard in sorted(set(weight_map.values())):
        t, m = read_safetensors(d / shard)
        for name in t:
            assert name not in tensors, f"{name} in two shards"
            where[name] = shard
        tensors.update(t)
        metadata.update(shape_metadata(m))
    assert where == weight_map  # every tensor of every shard, each where it is
    shards = sorted(p for p in os.listdir(d) if p.endswith(".safetensors"))
    assert shards == sorted(set(weight_map.values()))
    assert index["metadata"]["total_size"] > 0
    return tensors, metadata, where


def quantization_config_checks(scheme, config):
    qc = config.get("quantization_config")
    if scheme == "fp8-block":
        assert qc["quant_method"] == "fp8" and qc["weight_block_size"] == [128, 128]
    elif scheme == "mxfp4":
        assert qc["quant_method"] == "mxfp4"
    elif scheme == "nvfp4":
        assert qc["quant_algo"] == "NVFP4"
    # Every 2-D+ weight was quantized: none is listed as left out.
    if qc is not None:
        skipped = qc.get("modules_to_not_convert", qc.get("exclude_modules"))
        assert skipped == []


def test_model_directory_round_trip(model_dir, scheme, tmp_path):
    src, tensors = model_dir
    dst = tmp_path / f"model_{scheme}"
    report = lowp.convert(src, dst, to=scheme)
    assert {r["name"] for r in report} == set(tensors)
    out, padded, where = read_model_dir(dst)
    want, want_padded = expected_output(scheme, tensors)
    assert sorted(out) == sorted(want)
    for name in want:
        assert_same_tensor(out[name], want[name], f"{scheme} {name}")
    assert padded == want_padded
    for name in WEIGHTS:  # a weight and its scales share a shard
        parts = [n for n in want if n == name or n.startswith(name + "_") or n.startswith(name + ".")]
        assert len({where[p] for p in parts}) == 1, parts
    # Each padded weight's shape is recorded in the shard that holds it.
    for key in want_padded:
        name = key[len("lowp.shape."):]
        shard_of = where[name if name in where else name + ".blocks"]
        _, m = read_safetensors(dst / shard_of)
        assert key in m, f"{key} not in the metadata of {shard_of}, which holds the weight"
    config = json.loads((dst / "config.json").read_text())
    assert {k: v for k, v in config.items() if k != "quantization_config"} == CONFIG
    quantization_config_checks(scheme, config)
    if scheme == "mxfp8":
        assert "quantization_config" not in config
    assert (dst / "tokenizer.json").read_bytes() == TOKENIZER
    if scheme == "nvfp4":
        hf = json.loads((dst / "hf_quant_config.json").read_text())
        assert hf["quantization"]["quant_algo"] == "NVFP4"

    back = tmp_path / f"back_{scheme}"
    report = lowp.convert(dst, back, to="bf16")
    out, padded, _ = read_model_dir(back)
    assert sorted(out) == sorted(tensors) and padded == {}
    for name, x in tensors.items():
        if name in WEIGHTS:
            codes, scales, scale_2 = ref_quantize(scheme, x.astype(np.float64))
            w = ref_decode_f32(scheme, codes, scales, scale_2, x.shape).astype(ml_dtypes.bfloat16)
        elif x.dtype == np.int64:
            w = x
        else:
            w = x.astype(ml_dtypes.bfloat16)
        assert_same_tensor(out[name], w, f"{scheme} -> bf16 {name}")
    config = json.loads((back / "config.json").read_text())
    assert config == CONFIG  # the quantization_config is gone with the quantization
    assert (back / "tokenizer.json").read_bytes() == TOKENIZER
    assert not (back / "hf_quant_config.json").exists()


def test_shard_size_splits_but_keeps_each_weight_whole(model_dir, tmp_path):
    src, tensors = model_dir
    dst = tmp_path / "small_shards"
    lowp.convert(src, dst, to="nvfp4", shard_size=8000)
    out, padded, where = read_model_dir(dst)
    assert len(set(where.values())) > 2
    want, want_padded = expected_output("nvfp4", tensors)
    assert sorted(out) == sorted(want) and padded == want_padded
    for name in WEIGHTS:
        assert len({where[n] for n in (name, name + "_scale", name + "_scale_2")}) == 1
    back = tmp_path / "small_back"
    lowp.convert(dst, back, to="f32")
    out, _, _ = read_model_dir(back)
    for name in WEIGHTS:
        assert out[name].shape == tensors[name].shape, name


def test_single_file_directory(tmp_path):
    d = tmp_path / "one"
    d.mkdir()
    tensors = model_tensors()
    write_safetensors(d / "model.safetensors", tensors)
    (d / "config.json").write_text(json.dumps(CONFIG))
    dst = tmp_path / "one_q"
    lowp.convert(d, dst, to="mxfp4")
    assert sorted(os.listdir(dst)) == ["config.json", "model.safetensors"]
    out, metadata = read_safetensors(dst / "model.safetensors")
    want, padded = expected_output("mxfp4", tensors)
    assert sorted(out) == sorted(want) and shape_metadata(metadata) == padded
    for name in want:
        assert_same_tensor(out[name], want[name], name)


# ---------------------------------------------------------------------------------------------
# Malformed inputs
# ---------------------------------------------------------------------------------------------

def _bad_files():
    u8 = lambda *s: np.zeros(s, np.uint8)
    f8 = lambda *s: np.zeros(s, np.uint8).view(E4M3)
    one = np.float32(1).reshape(())
    return {
        "blocks without scales": ({"w.blocks": u8(4, 2, 16)}, None, "missing"),
        "mxfp4 scales of the wrong shape": ({"w.blocks": u8(4, 2, 16), "w.scales": u8(4, 3)}, None,
                                            "do not match"),
        "mxfp4 scales not bytes": ({"w.blocks": u8(4, 2, 16),
                                    "w.scales": np.zeros((4, 2), np.float32)}, None, "E8M0"),
        "nvfp4 data of the wrong length": ({"w": u8(4, 12), "w_scale": f8(4, 2), "w_scale_2": one},
                                           None, "whole blocks"),
        "nvfp4 scales of the wrong shape": ({"w": u8(4, 16), "w_scale": f8(4, 3), "w_scale_2": one},
                                            None, "block scales"),
        "nvfp4 scale_2 without scale": ({"w": u8(4, 16), "w_scale_2": one}, None, "missing"),
        "fp8-block scales of the wrong shape": ({"w": f8(130, 40), "w_scale_inv": np.ones((1, 1), np.float32)},
                                                None, "128x128"),
        "mxfp8 scales of the wrong shape": ({"w": f8(4, 64), "w_scale": u8(4, 3)}, None, "MXFP8"),
        "padded shape that does not fit": ({"w.blocks": u8(4, 2, 16), "w.scales": u8(4, 2)},
                                           {"lowp.shape.w": "[4, 100]"}, "does not fit"),
        "padded shape that is not one": ({"w.blocks": u8(4, 2, 16), "w.scales": u8(4, 2)},
                                         {"lowp.shape.w": "four by sixty"}, "not a shape"),
    }


@pytest.mark.parametrize("case", list(_bad_files()))
def test_malformed_quantized_files_raise_and_write_nothing(case, tmp_path):
    tensors, metadata, match = _bad_files()[case]
    src = tmp_path / "bad.safetensors"
    write_safetensors(src, tensors, metadata)
    before = sorted(os.listdir(tmp_path))
    for to in ("f32", "mxfp4"):
        with pytest.raises(OSError, match=match):
            lowp.convert(src, tmp_path / "out.safetensors", to=to)
        with pytest.raises(OSError, match=match):
            lowp.convert(src, None, to=to)
        assert sorted(os.listdir(tmp_path)) == before


def test_malformed_shard_leaves_no_directory(model_dir, tmp_path):
    src, tensors = model_dir
    write_safetensors(src / "model-00002-of-00002.safetensors",
                      {"b.weight.blocks": np.zeros((4, 2, 16), np.uint8)})
    index = json.loads((src / "model.safetensors.index.json").read_text())
    index["weight_map"] = {n: f for n, f in index["weight_map"].items() if f.startswith("model-00001")}
    index["weight_map"]["b.weight.blocks"] = "model-00002-of-00002.safetensors"
    (src / "model.safetensors.index.json").write_text(json.dumps(index))
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(OSError, match="missing"):
        lowp.convert(src, tmp_path / "out", to="bf16")
    assert sorted(os.listdir(tmp_path)) == before


def test_bad_options_raise_value_error(model, tmp_path):
    src, _ = model
    with pytest.raises(ValueError, match="rounding"):
        lowp.convert(src, None, to="mxfp4", rounding="up")
    with pytest.raises(ValueError, match="scale_search"):
        lowp.convert(src, None, to="mxfp4", scale_search="best")
    with pytest.raises(ValueError):
        lowp.convert(src, None, to="mxfp6")
    with pytest.raises(ValueError):
        lowp.convert(src, tmp_path / "x.safetensors", to="nvfp4", shard_size=1000)


# ---------------------------------------------------------------------------------------------
# Scale search, stochastic rounding, dry runs
# ---------------------------------------------------------------------------------------------

def _candidates_ok(scheme, spec, chosen, amax):
    """Whether each chosen scale is one the search may try."""
    if scheme in ("mxfp8", "mxfp4"):
        return np.abs(chosen.astype(int) - spec.astype(int)) <= 1
    if scheme == "nvfp4":
        return (np.abs(chosen.astype(int) - spec.astype(int)) <= 3) & (chosen < 0x7F)
    factors = np.array([1.0, 0.99, 0.98, 0.97, 0.96, 0.95, 0.94, 0.93, 0.92, 0.91, 0.90])
    tries = np.maximum((amax[..., None] / 448.0 * factors).astype(np.float32), TINY_F32)
    return np.any(tries == chosen[..., None], axis=-1) | ((amax == 0) & (chosen == 0))


def test_mse_scale_search_is_never_worse(model, scheme, tmp_path):
    src, tensors = model
    spec_report = lowp.convert(src, tmp_path / "spec.safetensors", to=scheme)
    dst = tmp_path / "mse.safetensors"
    mse_report = lowp.convert(src, dst, to=scheme, scale_search="mse")
    out, _ = read_safetensors(dst)
    spec_by, mse_by = ({r["name"]: r for r in rep} for rep in (spec_report, mse_report))
    improved = 0
    for name in WEIGHTS:
        x = tensors[name].astype(np.float64)
        assert mse_by[name]["sqnr_db"] >= spec_by[name]["sqnr_db"] - 1e-9, name
        improved += mse_by[name]["sqnr_db"] > spec_by[name]["sqnr_db"] + 1e-6
        # The elements are the nearest ones for the scales the search chose...
        chosen = stored_scales(scheme, name, out, x.shape)
        codes, scales, scale_2 = ref_quantize(scheme, x, scales=chosen)
        for t, want in ref_tensors(scheme, name, x.shape, codes, scales, scale_2).items():
            assert_same_tensor(out[t], want, f"mse {scheme} {t}")
        # ... those scales are among the candidates, and no block got worse.
        blocks = to_blocks(scheme, x)
        spec_codes, spec_scales_, _ = ref_quantize(scheme, x)
        assert np.all(_candidates_ok(scheme, spec_scales_, chosen, np.abs(blocks).max(-1))), name
        err = lambda c, s: np.sum((blocks - ref_decode_f64(scheme, c, s, scale_2)) ** 2, axis=-1)
        e_mse, e_spec = err(codes, chosen), err(spec_codes, spec_scales_)
        assert np.all(e_mse <= e_spec * (1 + 1e-12)), name
        sqnr, _, clipped, _ = ref_figures(scheme, x, codes, chosen, scale_2)
        assert mse_by[name]["sqnr_db"] == pytest.approx(sqnr, rel=1e-9)
        assert mse_by[name]["clipped_blocks"] == clipped
    if scheme in ("mxfp4", "nvfp4"):  # FP4's coarse steps leave room: the search must find some
        assert improved >= 2


def test_stochastic_rounding_is_seeded_and_rounds_to_a_neighbour(model, scheme, tmp_path):
    src, tensors = model
    runs = {}
    for tag, seed in (("a", 7), ("b", 7), ("c", 8)):
        dst = tmp_path / f"sr_{tag}.safetensors"
        lowp.convert(src, dst, to=scheme, rounding="stochastic", seed=seed)
        runs[tag] = read_safetensors(dst)[0]
    nearest_path = tmp_path / "nearest.safetensors"
    lowp.convert(src, nearest_path, to=scheme)
    nearest = read_safetensors(nearest_path)[0]
    for t in runs["a"]:
        assert_same_tensor(runs["b"][t], runs["a"][t], f"same seed {t}")
    differ = [t for t in runs["a"] if runs["a"][t].tobytes() != runs["c"][t].tobytes()]
    data_names = {"fp8-block": WEIGHTS, "mxfp8": WEIGHTS, "nvfp4": WEIGHTS,
                  "mxfp4": [w + ".blocks" for w in WEIGHTS]}[scheme]
    assert set(differ) == set(data_names)  # only the elements differ, the scales are the same
    assert any(runs["a"][t].tobytes() != nearest[t].tobytes() for t in data_names)
    # Every element is one of the two values beside x / scale (or x / scale itself).
    out = runs["a"]
    for name in WEIGHTS:
        x = tensors[name].astype(np.float64)
        scales = stored_scales(scheme, name, out, x.shape)
        scale_2 = nvfp4_scale_2(x) if scheme == "nvfp4" else None
        blocks = to_blocks(scheme, x)
        div = divisors(scheme, scales, scale_2)[..., None]
        q = np.where(div == 0, blocks * 0.0, blocks / np.where(div == 0, 1, div))
        positive = E4M3_POS if scheme in ("fp8-block", "mxfp8") else E2M1_POS
        a = np.minimum(np.abs(q), positive[-1])
        hi = np.searchsorted(positive, a, side="left")
        lo = np.maximum(np.where(positive[hi] == a, hi, hi - 1), 0)
        got = stored_codes(scheme, name, out, x.shape)
        mag = got & (0x7F if scheme in ("fp8-block", "mxfp8") else 0x7)
        assert np.all((mag == lo) | (mag == hi)), name
        nonzero = mag != 0
        sign = got >= (0x80 if scheme in ("fp8-block", "mxfp8") else 0x8)
        assert np.array_equal(sign[nonzero], np.signbit(q)[nonzero]), name


def stored_codes(scheme, name, out, shape):
    """lowp's element codes of weight `name`, in block layout (padding as +0)."""
    if scheme in ("fp8-block", "mxfp8"):
        return to_blocks(scheme, out[name].view(np.uint8).astype(np.float64)).astype(np.uint8)
    data = out[name + ".blocks"] if scheme == "mxfp4" else out[name]
    flat = data.reshape(int(np.prod(shape[:-1])), -1)
    nib = np.stack([flat & 0xF, flat >> 4], axis=-1).reshape(flat.shape[0], -1)
    return nib.reshape(flat.shape[0], -1, block_cols(scheme))


def test_dry_run_reports_what_a_real_run_does(model, scheme, tmp_path):
    src, _ = model
    before = sorted(os.listdir(tmp_path))
    for kw in ({}, {"scale_search": "mse"}, {"rounding": "stochastic", "seed": 3}):
        dry = lowp.convert(src, None, to=scheme, **kw)
        assert sorted(os.listdir(tmp_path)) == before
        real = lowp.convert(src, tmp_path / "real.safetensors", to=scheme, **kw)
        os.remove(tmp_path / "real.safetensors")
        assert len(dry) == len(real)
        for d, r in zip(dry, real):
            assert d == r, (kw, d["name"], {k: (d[k], r.get(k)) for k in d if d[k] != r.get(k)})


def test_dry_run_of_a_model_directory(model_dir, tmp_path):
    src, _ = model_dir
    before = sorted(os.listdir(tmp_path))
    dry = lowp.convert(src, None, to="nvfp4")
    assert sorted(os.listdir(tmp_path)) == before
    real = lowp.convert(src, tmp_path / "real", to="nvfp4")
    assert dry == real
