"""lowp.convert to the block-quantized schemes (fp8-block, fp8-channel, mxfp8, mxfp4, nvfp4) in
the loaders' layouts and back, checked byte for byte against an independent NumPy + ml_dtypes
quantizer written here.

The reference shares no code with lowp. It follows the schemes as the serving stacks define
them (DeepSeek-V3 fp8-block, compressed-tensors' FP8 per channel, OCP MX v1.0, NVIDIA NVFP4):

* the block scale from the block's largest magnitude `amax` (fp8-block, 128 x 128 blocks, and
  fp8-channel, one block per row: amax / 448 rounded to the scale's float type, at least its
  smallest subnormal; MX: E8M0 of floor(log2(amax)) - emax, clamped to 0..254; nvfp4:
  e4m3(amax / (6 * scale_2)), at least E4M3's smallest subnormal for a non-zero block);
* elements: the quotient x / scale in float64, rounded to nearest, ties to even, saturating.

and the layouts as the loaders read them, for a weight `W` `[R, C]`:

* compressed-tensors (every scheme; columns whole groups: 128 for fp8-block, 32 MX, 16 nvfp4):
  fp8-block `W` F8_E4M3 + `W_scale` `[ceil(R/128), C/128]`; fp8-channel `W` + `W_scale`
  `[R, 1]` (the fp8 scales in the source's dtype when it is bf16 or f16, chosen in that type,
  else F32); mxfp8 `W` + `W_scale` U8 `[R, C/32]`; mxfp4 `W_packed` U8 `[R, C/2]` + `W_scale`
  U8 `[R, C/32]`; nvfp4 `W_packed` + `W_scale` F8_E4M3 `[R, C/16]` + `W_global_scale` F32
  `[1]` = 1 / scale_2, where scale_2 is the smallest power of two at or above amax / 2688
  (2^-126 .. 2^127; 1 for a zero tensor): `x = q * s / global_scale`.
* transformers: fp8-block `W` + `W_scale_inv` F32 `[R/128, C/128]` (rows and columns whole
  blocks); mxfp8 `W` + `W_scale_inv` U8 `[R, C/32]`.
* modelopt: nvfp4 `W` U8 `[R, C/2]` + `W_scale` F8_E4M3 `[R, C/16]` + `W_scale_2` F32 `[]`
  with scale_2 = f32(amax / 2688): `x = q * s * scale_2`.

Without a config, a 2-D tensor named `*weight` is a linear weight (quantized) unless its name
says embedding (`embed`, `wte`, `wpe`: never quantized) or it is `lm_head*` (only when `only`
names it); 1-D and 3-D tensors, and those of other names, are kept, as are weights whose shape
the layout cannot hold. No FP4 padding is written, but earlier lowp outputs (gpt-oss's
`W.blocks` / `W.scales` and ModelOpt's NVFP4, padded to whole blocks with the shape in the
`lowp.shape.W` metadata) are still read.

Rounding is done by search among the format's values (every value and every midpoint of two
neighbours is exact in float64), not by ml_dtypes' casts: ml_dtypes 0.6.0 converts float64 to
float8 / float4 / bfloat16 through float32 (`np.float64(1 + 2**-4 + 2**-40).astype(float8_e4m3fn)`
gives 1, not 1.125), a double rounding that gets quotients just beside a tie wrong. ml_dtypes
decodes the element and scale bytes (exactly) and `test_reference_rounding` checks the search
against its casts where those are exact. Blocks whose elements are all zero get scale 0 (fp8,
nvfp4) or E8M0 byte 0 (MX) and ±0 elements, as crates/lowp-io/src/quant/codec.rs documents.

Decoding (to f32, bf16 or f64) computes each layout's exact value (q * scale, q * s * scale_2,
q * s / global_scale) and rounds it once to the target: the reference does the same, in float64
and then by the same search for bfloat16.
"""

import json
import os
import struct

import ml_dtypes
import numpy as np
import pytest

import lowp

SCHEMES = ["fp8-block", "fp8-channel", "mxfp8", "mxfp4", "nvfp4"]
CT = "compressed-tensors"
# Every (scheme, layout) lowp writes for linear weights.
LAYOUTS = [(s, CT) for s in SCHEMES] + [
    ("fp8-block", "transformers"), ("mxfp8", "transformers"), ("nvfp4", "modelopt")]
E4M3, E2M1, BF16 = ml_dtypes.float8_e4m3fn, ml_dtypes.float4_e2m1fn, ml_dtypes.bfloat16
TINY_F32 = np.float32(2.0**-149)
F32_MAX = float(np.finfo(np.float32).max)

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

def _values(dtype, codes, store=np.uint8):
    return np.arange(codes, dtype=store).view(dtype).astype(np.float64)


# Non-negative finite values of the formats, ascending with their codes.
E4M3_POS = _values(E4M3, 0x7F)  # 0 .. 448 (0x7F is NaN)
E2M1_POS = _values(E2M1, 0x08)  # 0 .. 6
BF16_POS = _values(BF16, 0x7F80, np.uint16)  # 0 .. bf16's largest finite (0x7F80 is inf)
F16_POS = _values(np.float16, 0x7C00, np.uint16)  # 0 .. 65504
E4M3_ALL = _values(E4M3, 256)   # every byte, decoded (NaN for 0x7F, 0xFF)
E2M1_ALL = _values(E2M1, 16)
for _pos in (E4M3_POS, E2M1_POS, BF16_POS, F16_POS):
    assert np.all(np.diff(_pos) > 0)
assert E4M3_POS[-1] == 448 and E2M1_POS[-1] == 6 and F16_POS[-1] == 65504


def round_codes(q, positive, sign_bit):
    """The codes of float64 `q` rounded to nearest, ties to the even code (the even
    significand), saturating at the largest value; the sign of a zero is kept (int64)."""
    a = np.minimum(np.abs(q), positive[-1])
    hi = np.searchsorted(positive, a, side="left")  # first value >= a
    lo = np.maximum(np.where(positive[hi] == a, hi, hi - 1), 0)  # last value <= a
    mid = (positive[lo] + positive[hi]) / 2
    code = np.where(a < mid, lo, np.where(a > mid, hi, np.where(lo % 2 == 0, lo, hi)))
    return code | np.where(np.signbit(q), sign_bit, 0)


def e4m3_codes(q):
    return round_codes(q, E4M3_POS, 0x80).astype(np.uint8)


def e2m1_codes(q):
    return round_codes(q, E2M1_POS, 0x08).astype(np.uint8)


def round_once(x, positive, dtype):
    """float64 `x` rounded once to the 16-bit float `dtype` (bf16 or f16) whose non-negative
    finite values are `positive`; infinities and NaN stay what they are. The values must lie
    within the type's range (a reference that needed overflow would be wrong here)."""
    x = np.asarray(x, np.float64)
    flat = x.reshape(-1)
    finite = np.isfinite(flat)
    assert np.all(np.abs(flat[finite]) <= positive[-1]), "beyond the type's range"
    codes = round_codes(np.where(finite, flat, 0.0), positive, 0x8000).astype(np.uint16)
    out = codes.view(dtype)
    out[~finite] = flat[~finite].astype(dtype)
    return out.reshape(x.shape)


def to_bf16(x):
    return round_once(x, BF16_POS, BF16)


def decoded_as(exact, dtype):
    """The exact float64 values `exact` stored as `dtype`, rounded once."""
    if dtype == np.float64:
        return exact.astype(np.float64)
    if dtype == np.float32:
        return exact.astype(np.float32)  # IEEE double -> float: one correct rounding
    return to_bf16(exact)


SCALE_DTYPES = {"f32": np.float32, "bf16": BF16, "f16": np.float16}


def scale_type(layout, source):
    """The float type of fp8 scales: the weight's own in compressed-tensors when it is bf16 or
    f16, f32 otherwise."""
    if layout == CT and source == BF16:
        return "bf16"
    if layout == CT and source == np.float16:
        return "f16"
    return "f32"


def fp8_scale(amax, stype, factor=1.0):
    """fp8's scale f(amax / 448 * factor) for amax > 0, rounded from that float64 to the
    scale type, then clamped to its smallest positive and largest finite value (float64)."""
    q = np.asarray(amax, np.float64) / 448.0 * factor
    if stype == "f32":
        s = q.astype(np.float32).astype(np.float64)
        return np.clip(s, float(TINY_F32), F32_MAX)
    positive = BF16_POS if stype == "bf16" else F16_POS
    codes = round_codes(q, positive, 0)  # saturating: beyond the largest it clamps to it
    return np.maximum(positive[codes], positive[1])


GROUP = {"fp8-block": 128, "fp8-channel": 1, "mxfp8": 32, "mxfp4": 32, "nvfp4": 16}


def block_cols(scheme, cols):
    return cols if scheme == "fp8-channel" else {"fp8-block": 128, "mxfp8": 32, "mxfp4": 32,
                                                 "nvfp4": 16}[scheme]


def to_blocks(scheme, x):
    """float64 `x` [..., R, C] as blocks [..., block elements], zero-padded to whole blocks:
    fp8-block [matrices, R/128, C/128, 128*128], the others [rows, C/bc, bc] (fp8-channel:
    one block of C per row)."""
    x = np.asarray(x, np.float64)
    c = x.shape[-1]
    if scheme == "fp8-block":
        r = x.shape[-2]
        m = x.reshape(-1, r, c)
        nbr, nbc = -(-r // 128), -(-c // 128)
        p = np.zeros((m.shape[0], nbr * 128, nbc * 128))
        p[:, :r, :c] = m
        return p.reshape(-1, nbr, 128, nbc, 128).transpose(0, 1, 3, 2, 4).reshape(-1, nbr, nbc, 128 * 128)
    bc = block_cols(scheme, c)
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


def finite_amax(x):
    x = np.abs(np.asarray(x, np.float64))
    x = x[np.isfinite(x)]
    return float(x.max()) if x.size else 0.0


def nvfp4_scale_2(x, layout):
    """nvfp4's per-tensor scale_2 (float64, an f32 value): ModelOpt's f32(amax / 2688), or
    compressed-tensors' smallest power of two at or above amax / 2688, whose inverse is exact."""
    amax = finite_amax(x)
    if layout == "modelopt":
        if amax == 0:
            return 0.0
        return float(np.clip(np.float32(amax / 2688.0), TINY_F32, F32_MAX))
    if amax == 0:
        return 1.0
    m, e = np.frexp(amax / 2688.0)  # amax / 2688 = m * 2^e, 0.5 <= m < 1, exact unless 2^k
    k = e - 1 if m == 0.5 else e
    return float(np.ldexp(1.0, int(np.clip(k, -126, 127))))


def spec_scales(scheme, blocks, scale_2, stype="f32"):
    """Each block's scale by the scheme's formula: the value (fp8, float64) or the byte."""
    amax = np.abs(blocks).max(axis=-1)
    if scheme in ("fp8-block", "fp8-channel"):
        return np.where(amax == 0, 0.0, fp8_scale(amax, stype))
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
    if scheme in ("fp8-block", "fp8-channel"):
        return scales.astype(np.float64)
    if scheme in ("mxfp8", "mxfp4"):
        return np.ldexp(1.0, scales.astype(np.int64) - 127)
    return E4M3_ALL[scales] * np.float64(scale_2)  # 4 x 24 significant bits: exact


def element_codes(scheme, blocks, div):
    """The elements of every block, x / div rounded (±0 where the divisor is 0)."""
    d = div[..., None]
    q = np.where(d == 0, blocks * 0.0, blocks / np.where(d == 0, 1.0, d))  # x * 0 keeps the sign
    return e4m3_codes(q) if is_e4m3(scheme) else e2m1_codes(q)


def is_e4m3(scheme):
    return scheme in ("fp8-block", "fp8-channel", "mxfp8")


def ref_quantize(scheme, x, layout=CT, stype="f32", scales=None):
    """(codes, scales, scale_2) in block layout; `scales` given: the elements for those."""
    blocks = to_blocks(scheme, x)
    scale_2 = nvfp4_scale_2(x, layout) if scheme == "nvfp4" else None
    if scales is None:
        scales = spec_scales(scheme, blocks, scale_2, stype)
    return element_codes(scheme, blocks, divisors(scheme, scales, scale_2)), scales, scale_2


def pack_fp4(codes):
    """[rows, blocks, bc] nibbles -> [rows, blocks * bc / 2] bytes, the even element low."""
    flat = codes.reshape(codes.shape[0], -1)
    return (flat[:, 0::2] | (flat[:, 1::2] << 4)).astype(np.uint8)


def data_name(scheme, layout, name):
    """The tensor holding weight `name`'s elements."""
    return f"{name}_packed" if layout == CT and scheme in ("mxfp4", "nvfp4") else name


def scale_name(scheme, layout, name):
    """The tensor holding weight `name`'s block scales."""
    return f"{name}_scale_inv" if layout == "transformers" else f"{name}_scale"


def ref_tensors(scheme, layout, name, shape, codes, scales, scale_2, stype="f32"):
    """The tensors storing the 2-D weight `name` of `shape` in `layout`."""
    r, c = shape
    data, scale = data_name(scheme, layout, name), scale_name(scheme, layout, name)
    if is_e4m3(scheme):
        out = {data: from_blocks(scheme, codes, shape).astype(np.uint8).view(E4M3)}
        if scheme == "mxfp8":
            out[scale] = scales.reshape(r, c // 32)
        else:
            grid = (r, 1) if scheme == "fp8-channel" else (-(-r // 128), c // 128)
            out[scale] = scales.reshape(grid).astype(SCALE_DTYPES[stype])  # exact: chosen in it
        return out
    if scheme == "mxfp4":
        return {data: pack_fp4(codes), scale: scales.reshape(r, c // 32)}
    out = {data: pack_fp4(codes), scale: scales.reshape(r, c // 16).view(E4M3)}
    if layout == CT:
        out[f"{name}_global_scale"] = np.array([1.0 / scale_2], np.float32)
    else:
        out[f"{name}_scale_2"] = np.asarray(scale_2, np.float32).reshape(())
    return out


def ref_decode_f64(scheme, codes, scales, scale_2):
    """The exact values written, in float64 (block layout); NaN for MX blocks of scale 255,
    IEEE products otherwise (a NaN or infinite fp8 scale, E4M3's NaN scale)."""
    table = E4M3_ALL if is_e4m3(scheme) else E2M1_ALL
    with np.errstate(invalid="ignore"):
        v = table[codes] * divisors(scheme, scales, scale_2)[..., None]
    if scheme in ("mxfp8", "mxfp4"):
        v[scales == 255] = np.nan
    return v


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
    clipped = scaled > 464 if is_e4m3(scheme) else scaled >= 7
    return sqnr, rel, int(np.sum(clipped)), int(np.prod(div.shape))


def stored_scales(scheme, layout, name, out):
    """The block scales lowp wrote for weight `name`, in block layout (fp8: float64 values)."""
    s = out[scale_name(scheme, layout, name)]
    if scheme == "fp8-block":
        return s.astype(np.float64).reshape(1, s.shape[-2], s.shape[-1])
    if scheme == "fp8-channel":
        return s.astype(np.float64).reshape(-1, 1)
    return np.ascontiguousarray(s).view(np.uint8).reshape(-1, s.shape[-1]).copy()


def stored_codes(scheme, layout, name, out, shape):
    """lowp's element codes of weight `name`, in block layout."""
    data = out[data_name(scheme, layout, name)]
    if is_e4m3(scheme):
        return to_blocks(scheme, data.view(np.uint8).astype(np.float64)).astype(np.uint8)
    flat = data.reshape(int(np.prod(shape[:-1])), -1)
    nib = np.stack([flat & 0xF, flat >> 4], axis=-1).reshape(flat.shape[0], -1)
    return nib.reshape(flat.shape[0], -1, block_cols(scheme, shape[-1]))


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------

def model_tensors():
    """Weights of awkward values (and shapes some layouts cannot hold), in f32, bf16 and f16,
    plus tensors no scheme touches."""
    rng = np.random.default_rng(2024)
    a = rng.normal(0, 0.02, (64, 128)).astype(np.float32)
    b = (rng.standard_t(3, (130, 256)) * 0.05).astype(np.float32)
    b[0] = 0.0
    b[0, 1::3] = -0.0  # a zero row: a zero block of every row-wise scheme, its -0 kept
    b[128:, 128:] = 0.0
    b[129, 130::2] = -0.0  # the bottom-right fp8 block (2 x 128) is zero
    b[1] = rng.integers(-64, 65, 256) * 2.0**-6  # a grid: many quotients exactly on ties
    b[2, 0] = 56.0  # 448 / 8: the first fp8 block's scale is 1/8, so b[1]'s ties stay ties
    b[3, :40] = rng.normal(0, 1, 40) * 2.0**-10  # a block far below the others
    c = rng.normal(0, 0.1, (128, 128)).astype(np.float32)  # whole 128 x 128 blocks
    c[0] = (rng.normal(0, 1, 128) * 1e-39).astype(np.float32)  # f32 subnormals: E8M0 byte 0
    c[5] = 3.0  # an outlier row
    c[6, :32] = np.float32(1.9375 * 2)  # amax/2^E = 7.75 for mxfp4 (clipped), 496 for mxfp8
    return {
        "near_ties.weight": near_ties(rng),
        "a.weight": a,
        "norm.weight": np.ones(128, np.float32),
        "b.bias": rng.normal(0, 1, 256).astype(np.float32),
        "b.weight": b,
        "c.weight": c,
        # A whole matrix of f32 subnormals.
        "subnormal.weight": (rng.normal(0, 1, (40, 128)) * 1e-39).astype(np.float32),
        # 48 columns: whole groups of 16 (nvfp4) but not of 32 (MX) nor 128 (fp8-block).
        "odd.weight": rng.normal(0, 1, (4, 48)).astype(np.float32),
        "half.weight": rng.normal(0, 0.5, (16, 128)).astype(np.float16),
        "experts.weight": rng.normal(0, 1, (2, 8, 32)).astype(np.float32),  # 3-D: kept
        "pos_table": rng.normal(0, 1, (4, 128)).astype(np.float32),  # not a weight: kept
        "head.proj.weight": rng.normal(0, 1, (128, 128)).astype(BF16),
        "ids": np.arange(6, dtype=np.int64),
    }


def near_ties(rng):
    """Values whose quotients lie within float32's precision of a tie, on either side, but not
    on it: x = f32(t * d) for ties t of the element format and the divisor d a block will get.
    A quotient computed in f32, or rounded to f32 before the element format (as ml_dtypes
    does from float64), lands on the tie and goes to even; the correct rounding does not.
    Rows 0-7 aim at fp8-block's scale (the tensor is one 128x128 block of amax 1.3) and
    fp8-channel's (each of those rows has amax 1.3 too), rows 8-15 at ModelOpt's nvfp4
    (scale_2 = f32(1.3 / 2688), each 16-block's scale from its first element); for the other
    schemes and layouts (compressed-tensors' power-of-two scale_2 makes every divisor a number
    of 4 bits, for which x = f32(t * d) is the tie itself) they are just values."""
    x = np.zeros((16, 128), np.float32)
    amax = float(np.float32(1.3))  # as stored
    s = np.float64(np.float32(amax / 448))
    ties = (E4M3_POS[1:-1] + E4M3_POS[2:]) / 2  # between two positive values
    ties = ties[ties >= 0.5]
    t = rng.choice(ties, (8, 128)) * rng.choice([-1, 1], (8, 128))
    x[:8] = (t * s).astype(np.float32)
    x[:8, 0] = amax
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


def is_float(x):
    return x.dtype in (np.float64, np.float32, np.float16, BF16)


def is_linear(name, shape):
    """Whether a tensor of a model without config is a linear weight, by name and shape."""
    return (len(shape) == 2 and name.endswith("weight") and not name.startswith("lm_head")
            and not any(k in name for k in ("embed", "wte", "wpe")))


def fits(scheme, layout, shape):
    """Whether the layout's loader can read a 2-D weight of `shape` in `scheme`."""
    r, c = shape
    if layout == "transformers" and scheme == "fp8-block":
        return r % 128 == 0 and c % 128 == 0
    return c % GROUP[scheme] == 0


def quantized_names(scheme, layout, tensors):
    """The weights a conversion without `only` quantizes."""
    return [n for n, x in tensors.items()
            if is_float(x) and is_linear(n, x.shape) and fits(scheme, layout, x.shape)]


def reference(scheme, layout, x, scales=None):
    """ref_quantize of the weight `x` in `layout`, with the scale type its dtype gives:
    (codes, scales, scale_2, scale type)."""
    stype = scale_type(layout, x.dtype)
    codes, scales, scale_2 = ref_quantize(scheme, x.astype(np.float64), layout, stype, scales)
    return codes, scales, scale_2, stype


def expected_output(scheme, layout, tensors, names=None):
    """Every tensor of the quantized file, per the reference; `names`: the weights quantized
    (those a conversion without `only` quantizes when None)."""
    names = quantized_names(scheme, layout, tensors) if names is None else names
    out = {}
    for name, x in tensors.items():
        if name not in names:
            out[name] = x
            continue
        codes, scales, scale_2, stype = reference(scheme, layout, x)
        out.update(ref_tensors(scheme, layout, name, x.shape, codes, scales, scale_2, stype))
    return out


def expected_decoded(scheme, layout, tensors, dtype, names=None):
    """Every tensor of the quantized file decoded to `dtype`: the weights' exact values rounded
    once, the float tensors left as they were converted, the integers as they are."""
    names = quantized_names(scheme, layout, tensors) if names is None else names
    out = {}
    for name, x in tensors.items():
        if name in names:
            codes, scales, scale_2, _ = reference(scheme, layout, x)
            exact = from_blocks(scheme, ref_decode_f64(scheme, codes, scales, scale_2), x.shape)
            out[name] = decoded_as(exact, dtype)
        elif is_float(x):
            out[name] = x.astype(dtype)  # from f32, bf16 or f16: one rounding at most
        else:
            out[name] = x
    return out


def module_of(name):
    """The module a loader's skip list names for tensor `name`."""
    if name.endswith(".weight"):
        return name[: -len(".weight")]
    return name.rsplit(".", 1)[0] if "." in name else name


def skip_list(tensors, quantized):
    """The modules of the tensors of 2 or more dimensions left unquantized, and lm_head."""
    done = {module_of(n) for n in quantized}
    left = {module_of(n) for n, x in tensors.items() if x.ndim >= 2 and module_of(n) not in done}
    return sorted(left | {"lm_head"})


def shape_metadata(metadata):
    return {k: v for k, v in metadata.items() if k.startswith("lowp.shape.")}


@pytest.fixture
def model(tmp_path):
    tensors = model_tensors()
    path = tmp_path / "model.safetensors"
    write_safetensors(path, tensors, {"format": "pt"})
    return path, tensors


@pytest.fixture(params=SCHEMES)
def scheme(request):
    return request.param


@pytest.fixture(params=LAYOUTS, ids=[f"{s}-{l}" for s, l in LAYOUTS])
def scheme_layout(request):
    return request.param


# ---------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------

def test_reference_rounding():
    """The reference's rounding agrees with ml_dtypes' and NumPy's casts where those are exact
    (inputs that are float32 values), and is right where ml_dtypes double-rounds."""
    rng = np.random.default_rng(5)
    for codes, dtype, top in ((e4m3_codes, E4M3, 448), (e2m1_codes, E2M1, 6)):
        x = np.concatenate([rng.normal(0, top / 4, 5000), rng.uniform(-top, top, 5000),
                            np.arange(-2 * top, 2 * top, 1 / 64), [0.0, -0.0]]).astype(np.float32)
        want = np.clip(x, -top, top).astype(dtype).view(np.uint8)
        assert np.array_equal(codes(x.astype(np.float64)), want)
    # bfloat16 and f16 (the fp8 scales' types in compressed-tensors, and bf16 decoding).
    bits = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    x = x[np.isfinite(x) & (np.abs(x) < 3e38)]
    x = np.concatenate([x, (rng.normal(0, 1, 5000) * 2.0**-130).astype(np.float32), [0, -0.0]])
    assert np.array_equal(to_bf16(x.astype(np.float64)).view(np.uint16), x.astype(BF16).view(np.uint16))
    h = x[np.abs(x) < 65504]
    assert np.array_equal(round_once(h.astype(np.float64), F16_POS, np.float16).view(np.uint16),
                          h.astype(np.float16).view(np.uint16))
    # Just above a tie, by less than float32 can tell: up, whatever ml_dtypes says.
    assert E4M3_ALL[e4m3_codes(np.float64(1 + 2**-4 + 2**-40))] == 1.125
    assert E4M3_ALL[e4m3_codes(np.float64(1 + 2**-4))] == 1.0
    assert E2M1_ALL[e2m1_codes(np.float64(0.25 + 2**-40))] == 0.5
    assert e2m1_codes(np.float64(-0.25)) == 0x08  # -0: the sign of a zero is kept
    assert to_bf16(np.float64(1 + 2**-8 + 2**-40)) == 1 + 2**-7
    assert np.float64(1 + 2**-8 + 2**-40).astype(BF16) == 1  # ml_dtypes' double rounding
    # fp8 scales: rounded from the float64 quotient, clamped to the type's smallest positive.
    assert fp8_scale(1e-45, "f32") == 2.0**-149 and fp8_scale(1e-45, "bf16") == 2.0**-133
    assert fp8_scale(448 * (1 + 2**-8 + 2**-30), "bf16") == 1 + 2**-7
    assert fp8_scale(1e300, "f16") == 65504
    # compressed-tensors' scale_2: the power of two at or above amax / 2688.
    assert nvfp4_scale_2(np.float32([2688.0]), CT) == 1.0
    assert nvfp4_scale_2(np.float64([2688.0 * (1 + 2**-40)]), CT) == 2.0
    assert nvfp4_scale_2(np.float32([1e-40]), CT) == 2.0**-126
    assert nvfp4_scale_2(np.zeros(3), CT) == 1.0 and nvfp4_scale_2(np.zeros(3), "modelopt") == 0


def test_near_ties_are_where_shortcuts_go_wrong():
    """The data really holds quotients that a float32 quotient (or ml_dtypes' cast of the
    float64 one) rounds the wrong way, so matching the reference on them means something."""
    x = near_ties(np.random.default_rng(0)).astype(np.float64)
    for scheme, layout in (("fp8-block", CT), ("fp8-channel", CT), ("nvfp4", "modelopt")):
        codes, scales, scale_2 = ref_quantize(scheme, x, layout)
        blocks = to_blocks(scheme, x)
        div = divisors(scheme, scales, scale_2)[..., None]
        dtype, top = (E4M3, 448) if scheme != "nvfp4" else (E2M1, 6)
        q32 = blocks.astype(np.float32) / div.astype(np.float32)
        wrong_f32 = np.clip(q32, -top, top).astype(dtype).view(np.uint8) != codes
        wrong_ml = np.clip(blocks / div, -top, top).astype(dtype).view(np.uint8) != codes
        assert wrong_f32.sum() > 100 and wrong_ml.sum() > 100, scheme


def test_quantized_bytes_match_the_reference(model, scheme, tmp_path):
    src, tensors = model
    dst = tmp_path / f"model_{scheme}.safetensors"
    report = lowp.convert(src, dst, to=scheme, layout=CT)
    out, metadata = read_safetensors(dst)
    want = expected_output(scheme, CT, tensors)
    assert sorted(out) == sorted(want)
    for name in want:
        assert_same_tensor(out[name], want[name], f"{scheme} {name}")
    assert shape_metadata(metadata) == {}  # nothing padded
    weights = quantized_names(scheme, CT, tensors)
    # The layout holds every 2-D weight but odd.weight's 48 columns where they are not groups.
    assert ("odd.weight" in weights) == (scheme in ("fp8-channel", "nvfp4"))
    assert len(weights) >= 7

    by_name = {r["name"]: r for r in report}
    assert list(by_name) == list(tensors)
    for name, x in tensors.items():
        r = by_name[name]
        assert r["shape"] == list(x.shape)
        if name not in weights:
            assert r["scheme"] is None and r["verdict"] == "kept", name
            continue
        codes, scales, scale_2, stype = reference(scheme, CT, x)
        sqnr, rel, clipped, blocks = ref_figures(scheme, x.astype(np.float64), codes, scales, scale_2)
        assert r["scheme"] == scheme
        assert r["elements"] == x.size
        assert (r["blocks"], r["clipped_blocks"]) == (blocks, clipped), name
        assert r["sqnr_db"] == pytest.approx(sqnr, rel=1e-9), name
        assert r["rel_frobenius_error"] == pytest.approx(rel, rel=1e-9), name
        parts = ref_tensors(scheme, CT, name, x.shape, codes, scales, scale_2, stype)
        assert r["bytes_per_param"] == pytest.approx(sum(t.nbytes for t in parts.values()) / x.size,
                                                     rel=1e-12), name
        assert r["verdict"] in ("ok", "warn")
    # Why each tensor was left.
    for name in ("norm.weight", "b.bias"):
        assert "1-D" in by_name[name]["why"]
    for name in ("experts.weight", "pos_table"):
        assert "not a linear weight" in by_name[name]["why"], name
    if "odd.weight" not in weights:
        assert f"48 columns are not whole groups of {GROUP[scheme]}" in by_name["odd.weight"]["why"]
    # The outlier rows of c.weight clip under the MX rules (amax / 2^E = 7.75, 496).
    if scheme in ("mxfp8", "mxfp4"):
        assert by_name["c.weight"]["clipped_blocks"] > 0


def test_fp8_scales_take_the_dtype_of_bf16_and_f16_weights(tmp_path):
    """compressed-tensors stores fp8 scales in the weights' own dtype (bf16, f16) and lowp
    chooses them in it: amax / 448 rounded once to that type, at least its smallest subnormal
    (a row of bf16 or f16 subnormals gets 2^-133 or 2^-24), the elements divided by that
    stored scale; f32 weights, and the transformers layout, keep f32 scales."""
    rng = np.random.default_rng(11)
    bf = rng.normal(0, 1, (64, 128)).astype(BF16)
    bf[0] = np.arange(1, 129, dtype=np.uint16).view(BF16)  # bf16 subnormals: amax 2^-126
    bf[1] = np.arange(1, 8, dtype=np.uint16).repeat(19)[:128].view(BF16)  # amax 7 * 2^-133
    half = rng.normal(0, 1, (64, 128)).astype(np.float16)
    half[0] = np.arange(1, 129, dtype=np.uint16).view(np.float16)  # f16 subnormals
    half[1] = np.arange(1, 8, dtype=np.uint16).repeat(19)[:128].view(np.float16)
    tensors = {"w.weight": rng.normal(0, 1, (64, 128)).astype(np.float32), "bf.weight": bf,
               "half.weight": half, "big.weight": rng.normal(0, 1, (128, 128)).astype(BF16)}
    src = tmp_path / "typed.safetensors"
    write_safetensors(src, tensors)
    for scheme, layout in (("fp8-block", CT), ("fp8-channel", CT), ("fp8-block", "transformers")):
        dst = tmp_path / f"{scheme}_{layout}.safetensors"
        lowp.convert(src, dst, to=scheme, layout=layout)
        out, _ = read_safetensors(dst)
        want = expected_output(scheme, layout, tensors)
        assert sorted(out) == sorted(want)
        for name in want:
            assert_same_tensor(out[name], want[name], f"{scheme} {layout} {name}")
        if layout == "transformers":
            assert out["big.weight_scale_inv"].dtype == np.float32
            assert "bf.weight_scale_inv" not in out  # 64 rows: not whole 128 x 128 blocks
            continue
        assert out["w.weight_scale"].dtype == np.float32
        assert out["bf.weight_scale"].dtype == BF16 and out["half.weight_scale"].dtype == np.float16
        if scheme == "fp8-channel":
            assert out["bf.weight_scale"][1, 0] == 2.0**-133  # 7 * 2^-133 / 448 clamps
            assert out["half.weight_scale"][1, 0] == 2.0**-24
        # The data tells the scale type apart: elements divided by the f32 scale differ.
        for name, stype in (("bf.weight", "bf16"), ("half.weight", "f16")):
            x = tensors[name].astype(np.float64)
            blocks = to_blocks(scheme, x)
            f32_codes = element_codes(scheme, blocks, spec_scales(scheme, blocks, None, "f32"))
            own_codes = element_codes(scheme, blocks, spec_scales(scheme, blocks, None, stype))
            assert np.sum(f32_codes != own_codes) >= 10, (scheme, name)


def test_edge_blocks(model, tmp_path):
    """The edge cases the layouts define, spelled out (the byte comparison covers them too)."""
    src, tensors = model
    b, c, sub = tensors["b.weight"], tensors["c.weight"], tensors["subnormal.weight"]
    for scheme in SCHEMES:
        dst = tmp_path / f"{scheme}.safetensors"
        lowp.convert(src, dst, to=scheme, layout=CT)
        out, _ = read_safetensors(dst)
        bs = stored_scales(scheme, CT, "b.weight", out)
        cs = stored_scales(scheme, CT, "c.weight", out)
        ss = stored_scales(scheme, CT, "subnormal.weight", out)
        if scheme == "fp8-block":
            assert out["b.weight_scale"].shape == (2, 2) and ss.shape == (1, 1, 1)
            assert bs[0, 1, 1] == 0  # the all-zero block
            assert bs[0, 0, 0] == np.float32(56.0 / 448)
            data = out["b.weight"].view(np.uint8)
            assert np.array_equal(data[128:, 128:], np.where(np.signbit(b[128:, 128:]), 0x80, 0))
            # A matrix of f32 subnormals: scale = f32(amax / 448), itself subnormal.
            amax = np.abs(sub).astype(np.float64).max()
            assert ss[0, 0, 0] == np.float32(amax / 448) and 0 < ss[0, 0, 0] < 2.0**-126
        elif scheme == "fp8-channel":
            assert out["b.weight_scale"].shape == (130, 1)
            assert bs[0, 0] == 0  # the zero row
            assert np.array_equal(out["b.weight"].view(np.uint8)[0], np.where(np.signbit(b[0]), 0x80, 0))
            assert bs[2, 0] == np.float32(56.0 / 448)
            amax = np.abs(sub).astype(np.float64).max(axis=1)
            assert np.array_equal(ss[:, 0], (amax / 448).astype(np.float32))
            assert np.all((0 < ss) & (ss < 2.0**-126))
        elif scheme in ("mxfp8", "mxfp4"):
            assert np.all(bs[0] == 0)  # zero blocks: E8M0 byte 0
            assert np.all(cs[0] == 0)  # subnormal row: exponent clamped to E8M0's smallest
            assert np.all(ss == 0)
            emax = 8 if scheme == "mxfp8" else 2
            _, exp = np.frexp(np.abs(b[1, :32]).max())
            assert bs[1, 0] == exp - 1 - emax + 127
        else:
            assert np.all(bs[0] == 0)
            assert np.all(cs[0] == 1)  # tiny non-zero blocks: E4M3's smallest subnormal
            # amax 56: 56 / 2688 = 0.0208 is at most 2^-5, whose inverse 32 is stored.
            g = out["b.weight_global_scale"]
            assert g.dtype == np.float32 and g.shape == (1,) and g[0] == 32.0
            # f32 subnormals: scale_2 clamps at 2^-126.
            assert out["subnormal.weight_global_scale"][0] == 2.0**126
        if scheme in ("mxfp4", "nvfp4"):
            row0 = out["b.weight_packed"][0]
            # -0 at elements 1, 4, 7, ... (sign nibble 8), no padding.
            nib = np.stack([row0 & 0xF, row0 >> 4], axis=-1).reshape(-1)
            assert np.array_equal(nib, np.where(np.signbit(b[0]), 8, 0))


def test_e8m0_clamps_at_254_for_f64_sources(tmp_path):
    """2^200 needs an E8M0 exponent beyond 127: the scale clamps at 254 and elements saturate."""
    x = np.full((2, 64), 2.0**200)
    x[1, :] = -(2.0**-1000)  # and one far below 2^-127: byte 0, elements round to -0
    x[0, 1] = 2.0**190
    src = tmp_path / "huge.safetensors"
    write_safetensors(src, {"w.weight": x})
    for scheme, top in (("mxfp8", 0x7E), ("mxfp4", 0x7)):
        dst = tmp_path / f"huge_{scheme}.safetensors"
        (r,) = lowp.convert(src, dst, to=scheme, layout=CT)
        out, _ = read_safetensors(dst)
        codes, scales, _ = ref_quantize(scheme, x)
        want = ref_tensors(scheme, CT, "w.weight", x.shape, codes, scales, None)
        assert sorted(out) == sorted(want)
        for name, t in want.items():
            assert_same_tensor(out[name], t, f"{scheme} {name}")
        assert np.array_equal(scales, [[254, 254], [0, 0]])
        assert r["clipped_blocks"] == 2 and r["blocks"] == 4
        if scheme == "mxfp8":
            data = out["w.weight"].view(np.uint8)
            assert data[0, 0] == top and np.all(data[1] == 0x80)


def test_nan_and_infinity_mark_their_blocks(tmp_path):
    """A block holding NaN or infinity gets a scale that says so (E8M0 255, E4M3 NaN, f32
    NaN, or +inf for a block of infinities and finite values), its finite elements are what
    its finite values alone give, an infinity becomes ±MAX and a NaN the element NaN (E4M3)
    or, E2M1 having none, the zero of the opposite sign (-0 for this +NaN, as ml_dtypes gives
    it); the report fails the tensor and decoding gives no finite value in such a block: NaN
    (codec.rs's documented choice), or under an infinite fp8 scale ±inf (and NaN for 0 * inf)."""
    rng = np.random.default_rng(9)
    w = rng.normal(0, 1, (2, 128)).astype(np.float32)
    w[0, 3] = np.nan
    w[1, 40] = -np.inf
    inf_only = rng.normal(0, 1, (2, 128)).astype(np.float32)
    inf_only[1, 40] = np.inf
    src = tmp_path / "nonfinite.safetensors"
    write_safetensors(src, {"w.weight": w, "i.weight": inf_only})
    for scheme in SCHEMES:
        dst = tmp_path / f"nonfinite_{scheme}.safetensors"
        report = {r["name"]: r for r in lowp.convert(src, dst, to=scheme, layout=CT)}
        out, _ = read_safetensors(dst)
        r = report["w.weight"]
        assert r["verdict"] == "fail" and r["sqnr_db"] is None, scheme
        finite = np.where(np.isfinite(w), w, 0).astype(np.float64)
        codes, scales, scale_2 = ref_quantize(scheme, finite)
        flat_nan = to_blocks(scheme, np.isnan(w).astype(np.float64)) > 0
        flat_inf = to_blocks(scheme, np.isinf(w).astype(np.float64)) > 0
        codes[flat_nan] = 0x7F if is_e4m3(scheme) else 0x8
        codes[flat_inf] = 0xFE if is_e4m3(scheme) else 0xF  # -inf: -MAX
        marked = flat_nan.any(-1) | flat_inf.any(-1)
        got_scales = stored_scales(scheme, CT, "w.weight", out)
        if scheme == "fp8-block":
            assert np.isnan(got_scales[0, 0, 0])
        elif scheme == "fp8-channel":
            assert np.isnan(got_scales[0, 0]) and got_scales[1, 0] == np.inf  # -inf only: +inf
        else:
            assert np.array_equal(marked, got_scales == (255 if scheme != "nvfp4" else 0x7F))
            assert np.array_equal(got_scales[~marked], scales[~marked])
        assert np.array_equal(stored_codes(scheme, CT, "w.weight", out, w.shape), codes), scheme
        if scheme == "nvfp4":  # scale_2 from the finite values
            assert out["w.weight_global_scale"][0] == 1 / nvfp4_scale_2(finite, CT)
        i_scales = stored_scales(scheme, CT, "i.weight", out)
        if scheme == "fp8-block":
            assert i_scales[0, 0, 0] == np.inf
        if scheme == "fp8-channel":
            assert np.isfinite(i_scales[0, 0]) and i_scales[1, 0] == np.inf
        back = tmp_path / f"nonfinite_{scheme}_back.safetensors"
        lowp.convert(dst, back, to="f32")
        got = read_safetensors(back)[0]["w.weight"]
        decoded = to_blocks(scheme, got)
        real = to_blocks(scheme, np.ones(w.shape)) > 0  # not padding of the reference's blocks
        assert not np.any(np.isfinite(decoded[marked[..., None] & real])), scheme
        assert np.all(np.isfinite(decoded[~marked])), scheme
        want = from_blocks(scheme, ref_decode_f64(scheme, codes, got_scales, scale_2), w.shape)
        want = want.astype(np.float32)
        assert np.array_equal(np.isnan(got), np.isnan(want)), scheme
        nan = np.isnan(want)  # NaN payloads aside, the same bytes
        assert_same_tensor(np.where(nan, np.float32(0), got), np.where(nan, np.float32(0), want),
                           f"{scheme} decoded")


def test_decoding_matches_the_reference_decoders(model, scheme, tmp_path):
    """Each weight's exact value, rounded once to f32, bf16 or f64."""
    src, tensors = model
    q = tmp_path / f"q_{scheme}.safetensors"
    lowp.convert(src, q, to=scheme, layout=CT)
    weights = quantized_names(scheme, CT, tensors)
    for to, dtype in (("f32", np.float32), ("bf16", BF16), ("f64", np.float64)):
        dst = tmp_path / f"back_{scheme}_{to}.safetensors"
        report = lowp.convert(q, dst, to=to)
        out, metadata = read_safetensors(dst)
        assert sorted(out) == sorted(tensors)  # the original names, scale tensors gone
        assert shape_metadata(metadata) == {}
        by_name = {r["name"]: r for r in report}
        assert set(by_name) == set(tensors)
        want = expected_decoded(scheme, CT, tensors, dtype)
        for name in tensors:
            assert_same_tensor(out[name], want[name], f"{scheme} -> {to} {name}")
        for name in weights:
            assert by_name[name]["shape"] == list(tensors[name].shape)


def test_other_layouts_match_the_reference(model, tmp_path):
    """transformers' fp8-block and mxfp8 (`W_scale_inv`) and ModelOpt's nvfp4 (`W_scale_2` =
    f32(amax / 2688), multiplied), byte for byte, and decoded with one rounding: ModelOpt's
    q * s * scale_2 rounded once, not q * f32(s * scale_2) (which the data tells apart)."""
    src, tensors = model
    for scheme, layout in (("fp8-block", "transformers"), ("mxfp8", "transformers"),
                           ("nvfp4", "modelopt")):
        dst = tmp_path / f"{scheme}_{layout}.safetensors"
        report = {r["name"]: r for r in lowp.convert(src, dst, to=scheme, layout=layout)}
        out, metadata = read_safetensors(dst)
        want = expected_output(scheme, layout, tensors)
        assert sorted(out) == sorted(want)
        for name in want:
            assert_same_tensor(out[name], want[name], f"{scheme} {layout} {name}")
        weights = quantized_names(scheme, layout, tensors)
        for name in tensors:
            assert (report[name]["scheme"] == scheme) == (name in weights), (layout, name)
        if layout == "transformers" and scheme == "fp8-block":
            assert weights == ["c.weight", "head.proj.weight"]
            assert "130 x 256 is not whole 128 x 128 blocks" in report["b.weight"]["why"]
            assert out["head.proj.weight_scale_inv"].dtype == np.float32  # f32 for a bf16 weight
        if scheme == "mxfp8":
            assert "48 columns are not whole blocks of 32" in report["odd.weight"]["why"]
        if layout == "modelopt":
            s2 = out["b.weight_scale_2"]
            assert s2.shape == () and s2 == np.float32(56.0 / 2688)
            assert not any(n.endswith(("_packed", "_global_scale")) for n in out)
        for to, dtype in (("f32", np.float32), ("bf16", BF16), ("f64", np.float64)):
            back = tmp_path / f"{scheme}_{layout}_{to}.safetensors"
            lowp.convert(dst, back, to=to)
            got, _ = read_safetensors(back)
            decoded = expected_decoded(scheme, layout, tensors, dtype)
            assert sorted(got) == sorted(decoded)
            for name in decoded:
                assert_same_tensor(got[name], decoded[name], f"{scheme} {layout} -> {to} {name}")
        if layout == "modelopt":  # the data tells one rounding from two
            x = tensors["near_ties.weight"]
            codes, scales, scale_2, _ = reference(scheme, layout, x)
            per_block = (E4M3_ALL[scales].astype(np.float32) * np.float32(scale_2))[..., None]
            twice = E2M1_ALL[codes].astype(np.float32) * per_block
            once = ref_decode_f64(scheme, codes, scales, scale_2).astype(np.float32)
            assert np.sum(twice != once) > 10


def double_rounding_cases(factors, scales):
    """The (factor, scale) pairs of the two grids whose exact product rounds to bf16 one way
    when rounded once and the other way through f32 (where f32 lands on a bf16 tie)."""
    v = factors[:, None] * scales[None, :]
    f = v.astype(np.float32)
    on_tie = (f.astype(np.float64) != v) & ((f.view(np.uint32) & 0xFFFF) == 0x8000)
    for i, j in np.argwhere(on_tie):
        if to_bf16(v[i, j]) != f[i, j].astype(BF16):
            yield factors[i], scales[j]


def test_decoding_rounds_the_exact_value_once(tmp_path):
    """q * scale (fp8, up to 28 significant bits) and ModelOpt's q * s * scale_2 (up to 31)
    are rounded once to bf16, not through f32: these weights hold a value for which the two
    differ (found by search: an f32 scale S, an element q, q * S just beside a bf16 tie)."""
    grid = 1 + np.arange(2**16) * 2.0**-23  # f32 values in [1, 2)
    mantissas = E4M3_POS[(E4M3_POS >= 1) & (E4M3_POS < 2)]
    # fp8: a row [A, X, 0, ...] of scale S = f32(A / 448), X = f32(q * S) gets element q.
    q, s = next((q, s) for q, s in double_rounding_cases(mantissas, grid)
                if np.float32(np.float64(np.float32(448 * s)) / 448) == s)
    fp8 = np.zeros((1, 128), np.float32)
    fp8[0, :2] = np.float32(448 * s), np.float32(q * s)
    # ModelOpt's nvfp4: scale_2 = f32(A / 2688); X = f32(6 * s0 * scale_2) in a block of its
    # own gets block scale s0 and element 6.
    six_s0, s2 = next((f, s) for f, s in double_rounding_cases(6 * mantissas, grid)
                      if np.float32(np.float64(np.float32(2688 * s)) / 2688) == s)
    nv = np.zeros((1, 32), np.float32)
    nv[0, 0], nv[0, 16] = np.float32(2688 * s2), np.float32(six_s0 * s2)
    for scheme, layout, x in (("fp8-block", CT, fp8), ("fp8-channel", CT, fp8),
                              ("nvfp4", "modelopt", nv)):
        tensors = {"w.weight": x}
        src, q = tmp_path / "once.safetensors", tmp_path / f"once_{scheme}.safetensors"
        write_safetensors(src, tensors)
        lowp.convert(src, q, to=scheme, layout=layout)
        codes, scales, scale_2, _ = reference(scheme, layout, x)
        exact = from_blocks(scheme, ref_decode_f64(scheme, codes, scales, scale_2), x.shape)
        twice = exact.astype(np.float32).astype(BF16)
        for to, dtype in (("bf16", BF16), ("f32", np.float32)):
            back = tmp_path / f"once_{scheme}_{to}.safetensors"
            lowp.convert(q, back, to=to)
            want = expected_decoded(scheme, layout, tensors, dtype)["w.weight"]
            assert_same_tensor(read_safetensors(back)[0]["w.weight"], want, f"{scheme} -> {to}")
            if to == "bf16":
                assert np.sum(twice.view(np.uint16) != want.view(np.uint16)) == 1, scheme


def test_old_padded_fp4_files_are_still_read(tmp_path):
    """Earlier lowp outputs padded FP4 rows to whole blocks and kept the shape in the metadata
    `lowp.shape.W`: gpt-oss's `W.blocks` / `W.scales` (2-D and 3-D) and ModelOpt's NVFP4.
    Decoding restores the shape and the values; without the metadata the padded shape comes
    back, its padding zero."""
    rng = np.random.default_rng(21)
    v = rng.normal(0, 1, (5, 50)).astype(np.float32)
    e = rng.normal(0, 1, (2, 3, 70)).astype(np.float32)
    n = rng.normal(0, 1, (4, 50)).astype(np.float32)
    tensors, shapes = {}, {}
    for name, x in (("v.weight", v), ("e.weight", e)):
        codes, scales, _ = ref_quantize("mxfp4", x)
        lead = list(x.shape[:-1])
        tensors[f"{name}.blocks"] = pack_fp4(codes).reshape(lead + [-1, 16])
        tensors[f"{name}.scales"] = scales.reshape(lead + [-1])
        shapes[f"lowp.shape.{name}"] = json.dumps(list(x.shape))
    codes, scales, scale_2 = ref_quantize("nvfp4", n, "modelopt")
    tensors["n.weight"] = pack_fp4(codes)  # [4, 32]: 64 columns
    tensors["n.weight_scale"] = scales.view(E4M3)  # [4, 4]
    tensors["n.weight_scale_2"] = np.asarray(scale_2, np.float32).reshape(())
    shapes["lowp.shape.n.weight"] = json.dumps([4, 50])
    assert tensors["v.weight.blocks"].shape == (5, 2, 16) and tensors["e.weight.blocks"].shape == (2, 3, 3, 16)
    sources = {"v.weight": ("mxfp4", v), "e.weight": ("mxfp4", e), "n.weight": ("nvfp4", n)}
    for with_metadata in (True, False):
        src = tmp_path / f"old_{with_metadata}.safetensors"
        write_safetensors(src, tensors, shapes if with_metadata else None)
        for to, dtype in (("f32", np.float32), ("f64", np.float64)):
            dst = tmp_path / f"old_{with_metadata}_{to}.safetensors"
            report = {r["name"]: r for r in lowp.convert(src, dst, to=to)}
            out, metadata = read_safetensors(dst)
            assert sorted(out) == sorted(sources) and shape_metadata(metadata) == {}
            for name, (scheme, x) in sources.items():
                codes, scales, scale_2 = ref_quantize(scheme, x, "modelopt")
                blocks = ref_decode_f64(scheme, codes, scales, scale_2)
                padded = list(x.shape[:-1]) + [blocks.shape[-2] * blocks.shape[-1]]
                full = blocks.reshape(padded)
                if with_metadata:
                    want = full[..., : x.shape[-1]]
                else:
                    want = full
                    assert np.all(full[..., x.shape[-1]:] == 0)
                assert_same_tensor(out[name], want.astype(dtype), f"{name} -> {to}")
                assert report[name]["shape"] == list(want.shape)
                assert np.max(np.abs(want[..., : x.shape[-1]] - x)) < 0.25 * np.max(np.abs(x))


def test_shapes_a_layout_cannot_hold_are_kept_and_none_at_all_is_an_error(tmp_path):
    rng = np.random.default_rng(4)
    tensors = {"w.weight": rng.normal(0, 1, (4, 40)).astype(np.float32),
               "v.weight": rng.normal(0, 1, (4, 64)).astype(np.float32)}
    src = tmp_path / "shapes.safetensors"
    write_safetensors(src, tensors)
    # mxfp8: 40 columns are not whole groups of 32; v.weight is quantized.
    report = {r["name"]: r for r in lowp.convert(src, None, to="mxfp8", layout=CT)}
    assert report["v.weight"]["scheme"] == "mxfp8"
    assert report["w.weight"]["verdict"] == "kept"
    assert "40 columns are not whole groups of 32" in report["w.weight"]["why"]
    # fp8-block needs whole groups of 128: nothing at all, a ValueError that says why.
    before = sorted(os.listdir(tmp_path))
    for scheme, layout, why in (("fp8-block", CT, "not whole groups of 128"),
                                ("fp8-block", "transformers", "not whole 128 x 128 blocks"),
                                ("nvfp4", "modelopt", None)):
        if why is None:  # 40 and 64 columns are whole groups of 16 (8 bytes): no error
            lowp.convert(src, tmp_path / "nv.safetensors", to=scheme, layout=layout)
            os.remove(tmp_path / "nv.safetensors")
            continue
        with pytest.raises(ValueError, match="no tensor of .* would be quantized") as err:
            lowp.convert(src, tmp_path / "none.safetensors", to=scheme, layout=layout)
        assert why in str(err.value)
        with pytest.raises(ValueError, match="would be quantized"):
            lowp.convert(src, None, to=scheme, layout=layout)
    assert sorted(os.listdir(tmp_path)) == before
    # 1-D and 3-D tensors only: nothing to quantize either.
    flat = tmp_path / "flat.safetensors"
    write_safetensors(flat, {"n.weight": np.ones(64, np.float32), "e.weight": np.ones((2, 4, 64), np.float32)})
    for scheme in SCHEMES:
        with pytest.raises(ValueError, match="would be quantized"):
            lowp.convert(flat, None, to=scheme)


def test_requantizing_a_quantized_file_is_refused(model, tmp_path):
    src, _ = model
    q = tmp_path / "q.safetensors"
    lowp.convert(src, q, to="mxfp4")
    before = sorted(os.listdir(tmp_path))
    for scheme in SCHEMES:
        with pytest.raises(ValueError, match="already holds quantized weights"):
            lowp.convert(q, tmp_path / "again.safetensors", to=scheme)
        with pytest.raises(ValueError, match="already holds quantized weights"):
            lowp.convert(q, None, to=scheme)
    assert sorted(os.listdir(tmp_path)) == before


def test_decoding_part_of_a_file_keeps_the_rest(model, tmp_path):
    """`only` decodes the weights it names in a single file; the others stay quantized."""
    src, tensors = model
    q = tmp_path / "q.safetensors"
    lowp.convert(src, q, to="nvfp4", layout=CT)
    dst = tmp_path / "part.safetensors"
    lowp.convert(q, dst, to="f32", only=["a.weight"])
    out, _ = read_safetensors(dst)
    quantized, _ = read_safetensors(q)
    want = expected_decoded("nvfp4", CT, tensors, np.float32)["a.weight"]
    assert_same_tensor(out["a.weight"], want, "a.weight")
    assert sorted(out) == sorted(["a.weight"] + [n for n in quantized if not n.startswith("a.weight")])
    for name in out:
        if name != "a.weight":
            assert_same_tensor(out[name], quantized[name], name)


def test_only_and_keep_choose_what_is_quantized(model, tmp_path):
    src, tensors = model
    dst = tmp_path / "only.safetensors"
    report = lowp.convert(src, dst, to="mxfp8", layout=CT, only=["pos_*", "*.weight"],
                          keep=["b.*", "head.*"])
    out, _ = read_safetensors(dst)
    by_name = {r["name"]: r for r in report}
    quantized = {r["name"] for r in report if r["scheme"] == "mxfp8"}
    # only matches pos_table, 2-D but not a linear weight, and 1-D and 3-D tensors: never
    # quantized; nor odd.weight, whose 48 columns are no groups of 32.
    assert quantized == {"near_ties.weight", "a.weight", "c.weight", "subnormal.weight", "half.weight"}
    assert "not a linear weight" in by_name["pos_table"]["why"]
    assert "not a linear weight" in by_name["experts.weight"]["why"]
    assert "groups of 32" in by_name["odd.weight"]["why"]
    want = expected_output("mxfp8", CT, tensors, names=quantized)
    for name in ("b.weight", "b.bias", "head.proj.weight"):  # keep: stored as f32
        want[name] = tensors[name].astype(np.float32)
        assert by_name[name]["scheme"] is None and by_name[name]["to"] == "F32", name
    assert "keep" in by_name["b.weight"]["why"]
    assert sorted(out) == sorted(want)
    for name in want:
        assert_same_tensor(out[name], want[name], name)


def test_embeddings_and_lm_head_stay_unless_only_names_them(tmp_path):
    rng = np.random.default_rng(3)
    tensors = {name: rng.normal(0, 1, (8, 64)).astype(np.float32)
               for name in ("model.embed_tokens.weight", "lm_head.weight", "model.layers.0.mlp.weight")}
    src = tmp_path / "m.safetensors"
    write_safetensors(src, tensors)
    for scheme in SCHEMES:
        if GROUP[scheme] > 64:  # 64 columns: not whole fp8 blocks
            continue
        report = {r["name"]: r for r in lowp.convert(src, None, to=scheme)}
        assert report["model.layers.0.mlp.weight"]["scheme"] == scheme
        assert report["model.embed_tokens.weight"]["verdict"] == "kept"
        assert "embedding" in report["model.embed_tokens.weight"]["why"]
        assert report["lm_head.weight"]["verdict"] == "kept"
        assert "output head" in report["lm_head.weight"]["why"]
        # only: the head is quantized, an embedding never.
        for only in (["*"], ["lm_head.weight", "model.embed_tokens.weight"]):
            dst = tmp_path / f"only_{scheme}.safetensors"
            chosen = {r["name"]: r for r in lowp.convert(src, dst, to=scheme, layout=CT, only=only)}
            assert chosen["lm_head.weight"]["scheme"] == scheme
            assert chosen["model.embed_tokens.weight"]["verdict"] == "kept"
            assert "embedding" in chosen["model.embed_tokens.weight"]["why"]
            names = [n for n in tensors if n == "lm_head.weight" or ("*" in only and "layers" in n)]
            out, _ = read_safetensors(dst)
            want = expected_output(scheme, CT, tensors, names=names)
            assert sorted(out) == sorted(want)
            for name in want:
                assert_same_tensor(out[name], want[name], f"{scheme} {only} {name}")
    # fp8-block: no 64-column weight fits; the error says so.
    with pytest.raises(ValueError, match="would be quantized"):
        lowp.convert(src, None, to="fp8-block")


def test_rest_converts_the_tensors_left_unquantized(model, tmp_path):
    src, tensors = model
    dst = tmp_path / "rest.safetensors"
    lowp.convert(src, dst, to="fp8-block", layout=CT, rest="bf16", keep=["norm.*"])
    out, _ = read_safetensors(dst)
    for name in ("b.bias", "pos_table", "experts.weight", "odd.weight"):
        assert_same_tensor(out[name], tensors[name].astype(BF16), name)
    assert_same_tensor(out["norm.weight"], tensors["norm.weight"], "norm.weight")
    assert_same_tensor(out["ids"], tensors["ids"], "ids")
    assert out["a.weight"].dtype == E4M3 and out["a.weight_scale"].dtype == np.float32
    assert out["head.proj.weight"].dtype == E4M3 and out["head.proj.weight_scale"].dtype == BF16


def test_default_layouts(model, tmp_path):
    """Without `layout`: transformers for fp8-block and mxfp8, compressed-tensors for the
    others (mxfp4 goes to transformers only for gpt-oss's experts)."""
    src, _ = model
    default = {"fp8-block": "transformers", "mxfp8": "transformers", "fp8-channel": CT,
               "mxfp4": CT, "nvfp4": CT}
    for scheme in SCHEMES:
        auto, named = tmp_path / f"{scheme}_auto.safetensors", tmp_path / f"{scheme}_named.safetensors"
        lowp.convert(src, auto, to=scheme)
        lowp.convert(src, named, to=scheme, layout=default[scheme])
        assert auto.read_bytes() == named.read_bytes(), scheme
    for scheme in ("fp8-channel", "mxfp4", "nvfp4"):
        with pytest.raises(ValueError, match="transformers"):
            lowp.convert(src, None, to=scheme, layout="transformers")
    for scheme in ("fp8-block", "fp8-channel", "mxfp8", "mxfp4"):
        with pytest.raises(ValueError, match="modelopt"):
            lowp.convert(src, None, to=scheme, layout="modelopt")


def test_modelopt_activation_amax_writes_input_scales(tmp_path):
    """activation_amax (nvfp4, modelopt): each quantized layer's `M.input_scale` = f32(amax /
    2688); decoding drops it. A layer without an amax, or another scheme, is a ValueError."""
    rng = np.random.default_rng(8)
    tensors = {"l0.weight": rng.normal(0, 1, (8, 32)).astype(np.float32),
               "l1.weight": rng.normal(0, 1, (8, 32)).astype(np.float32)}
    src = tmp_path / "w4a4.safetensors"
    write_safetensors(src, tensors)
    amax = tmp_path / "amax.json"
    amax.write_text(json.dumps({"l0": 3.5, "l1": 10.1}))
    dst = tmp_path / "w4a4_q.safetensors"
    lowp.convert(src, dst, to="nvfp4", layout="modelopt", activation_amax=amax)
    out, _ = read_safetensors(dst)
    want = expected_output("nvfp4", "modelopt", tensors)
    want["l0.input_scale"] = np.asarray(np.float32(3.5 / 2688)).reshape(())
    want["l1.input_scale"] = np.asarray(np.float32(10.1 / 2688)).reshape(())
    assert sorted(out) == sorted(want)
    for name in want:
        assert_same_tensor(out[name], want[name], name)
    back = tmp_path / "w4a4_back.safetensors"
    lowp.convert(dst, back, to="f32")
    got, _ = read_safetensors(back)
    assert sorted(got) == sorted(tensors)
    amax.write_text(json.dumps({"l0": 3.5}))
    with pytest.raises(ValueError, match="l1"):
        lowp.convert(src, None, to="nvfp4", layout="modelopt", activation_amax=amax)
    with pytest.raises(ValueError, match="modelopt"):
        lowp.convert(src, None, to="nvfp4", layout=CT, activation_amax=amax)
    with pytest.raises(ValueError, match="modelopt"):
        lowp.convert(src, None, to="mxfp4", activation_amax=amax)


# ---------------------------------------------------------------------------------------------
# Model directories
# ---------------------------------------------------------------------------------------------

SHARD_1 = ["near_ties.weight", "a.weight", "norm.weight", "b.bias", "odd.weight", "half.weight"]
SHARD_2 = ["b.weight", "c.weight", "subnormal.weight", "experts.weight", "pos_table",
           "head.proj.weight", "ids"]
CONFIG = {"architectures": ["ToyForCausalLM"], "hidden_size": 128, "torch_dtype": "float32"}
TOKENIZER = '{"model": {"vocab": {"héllo": 0, "wörld": 1}}}\n'.encode()


@pytest.fixture
def model_dir(tmp_path):
    tensors = model_tensors()
    assert sorted(SHARD_1 + SHARD_2) == sorted(tensors)
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


CT_FORMATS = {"fp8-block": "float-quantized", "fp8-channel": "float-quantized",
              "mxfp8": "mxfp8-quantized", "mxfp4": "mxfp4-pack-quantized",
              "nvfp4": "nvfp4-pack-quantized"}


def quantization_config_checks(scheme, layout, config, skipped):
    """The `quantization_config` of each layout: what its loader reads, and every module left
    unquantized (`skipped`, lm_head always) listed."""
    qc = config["quantization_config"]
    if layout == CT:
        assert qc["quant_method"] == "compressed-tensors"
        assert qc["format"] == CT_FORMATS[scheme]
        (group,) = qc["config_groups"].values()
        assert group["targets"] == ["Linear"]
        w = group["weights"]
        assert w["num_bits"] == (4 if scheme in ("mxfp4", "nvfp4") else 8) and w["type"] == "float"
        strategy, size = {"fp8-block": ("block", None), "fp8-channel": ("channel", None),
                          "mxfp8": ("group", 32), "mxfp4": ("group", 32),
                          "nvfp4": ("tensor_group", 16)}[scheme]
        assert (w["strategy"], w["group_size"]) == (strategy, size)
        if scheme == "fp8-block":
            assert w["block_structure"] == [128, 128]
        assert qc["ignore"] == skipped
    elif layout == "transformers":
        if scheme == "fp8-block":
            assert qc["quant_method"] == "fp8" and qc["weight_block_size"] == [128, 128]
        else:
            assert qc["quant_method"] == "mxfp8" and qc["weight_block_size"] == [1, 32]
            assert qc["scale_fmt"] == "ue8m0"
        assert qc["modules_to_not_convert"] == skipped
    else:
        assert qc["quant_method"] == "modelopt" and qc["quant_algo"] == "W4A16_NVFP4"
        assert qc["ignore"] == skipped


def test_model_directory_round_trip(model_dir, scheme_layout, tmp_path):
    scheme, layout = scheme_layout
    src, tensors = model_dir
    dst = tmp_path / f"model_{scheme}_{layout}"
    report = lowp.convert(src, dst, to=scheme, layout=layout)
    assert {r["name"] for r in report} == set(tensors)
    out, padded, where = read_model_dir(dst)
    want = expected_output(scheme, layout, tensors)
    assert sorted(out) == sorted(want)
    for name in want:
        assert_same_tensor(out[name], want[name], f"{scheme} {layout} {name}")
    assert padded == {}
    weights = quantized_names(scheme, layout, tensors)
    assert weights and {r["name"] for r in report if r["scheme"] == scheme} == set(weights)
    for name in weights:  # a weight and its scales share a shard
        parts = [n for n in want if n == name or n.startswith(name + "_")]
        assert len(parts) >= 2 and len({where[p] for p in parts}) == 1, parts
    config = json.loads((dst / "config.json").read_text())
    assert {k: v for k, v in config.items() if k != "quantization_config"} == CONFIG
    skipped = skip_list(tensors, weights)
    assert "experts" in skipped and "pos_table" in skipped and "lm_head" in skipped
    assert ("odd" in skipped) == ("odd.weight" not in weights)
    quantization_config_checks(scheme, layout, config, skipped)
    assert (dst / "tokenizer.json").read_bytes() == TOKENIZER
    assert (dst / "hf_quant_config.json").exists() == (layout == "modelopt")
    if layout == "modelopt":
        hf = json.loads((dst / "hf_quant_config.json").read_text())
        assert hf["quantization"]["quant_algo"] == "W4A16_NVFP4"
        assert hf["quantization"]["exclude_modules"] == skipped

    back = tmp_path / f"back_{scheme}_{layout}"
    lowp.convert(dst, back, to="bf16")
    out, padded, _ = read_model_dir(back)
    assert sorted(out) == sorted(tensors) and padded == {}
    decoded = expected_decoded(scheme, layout, tensors, BF16)
    for name in tensors:
        assert_same_tensor(out[name], decoded[name], f"{scheme} {layout} -> bf16 {name}")
    config = json.loads((back / "config.json").read_text())
    assert config == CONFIG  # the quantization_config is gone with the quantization
    assert (back / "tokenizer.json").read_bytes() == TOKENIZER
    assert not (back / "hf_quant_config.json").exists()
    # Decoding only part of a quantized model directory would leave a mix no config describes.
    with pytest.raises(ValueError, match="--only leaves"):
        lowp.convert(dst, tmp_path / "part", to="bf16", only=[weights[0]])
    assert not (tmp_path / "part").exists()


def test_shard_size_splits_but_keeps_each_weight_whole(model_dir, tmp_path):
    src, tensors = model_dir
    dst = tmp_path / "small_shards"
    lowp.convert(src, dst, to="nvfp4", shard_size=8000)
    out, padded, where = read_model_dir(dst)
    assert len(set(where.values())) > 2
    want = expected_output("nvfp4", CT, tensors)
    assert sorted(out) == sorted(want) and padded == {}
    for name in quantized_names("nvfp4", CT, tensors):
        parts = (name + "_packed", name + "_scale", name + "_global_scale")
        assert len({where[n] for n in parts}) == 1
    back = tmp_path / "small_back"
    lowp.convert(dst, back, to="f32")
    out, _, _ = read_model_dir(back)
    for name, x in tensors.items():
        assert out[name].shape == x.shape, name


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
    want = expected_output("mxfp4", CT, tensors)
    assert sorted(out) == sorted(want) and shape_metadata(metadata) == {}
    for name in want:
        assert_same_tensor(out[name], want[name], name)
    config = json.loads((dst / "config.json").read_text())
    quantization_config_checks("mxfp4", CT, config,
                               skip_list(tensors, quantized_names("mxfp4", CT, tensors)))


# ---------------------------------------------------------------------------------------------
# Malformed inputs
# ---------------------------------------------------------------------------------------------

def _bad_files():
    u8 = lambda *s: np.zeros(s, np.uint8)
    f8 = lambda *s: np.zeros(s, np.uint8).view(E4M3)
    one = np.float32(1).reshape(())
    one_1 = np.ones(1, np.float32)
    return {
        "blocks without scales": ({"w.blocks": u8(4, 2, 16)}, None, "missing"),
        "mxfp4 scales of the wrong shape": ({"w.blocks": u8(4, 2, 16), "w.scales": u8(4, 3)}, None,
                                            "do not match"),
        "mxfp4 scales not bytes": ({"w.blocks": u8(4, 2, 16),
                                    "w.scales": np.zeros((4, 2), np.float32)}, None, "E8M0"),
        "nvfp4 data of the wrong length": ({"w": u8(4, 12), "w_scale": f8(4, 2), "w_scale_2": one},
                                           None, "whole blocks"),
        "nvfp4 scales of the wrong shape": ({"w": u8(4, 16), "w_scale": f8(4, 3), "w_scale_2": one},
                                            None, "block scales must be F8_E4M3 of shape"),
        "nvfp4 scale_2 without scale": ({"w": u8(4, 16), "w_scale_2": one}, None, "missing"),
        "nvfp4 scale_2 not one f32": ({"w": u8(4, 16), "w_scale": f8(4, 2),
                                       "w_scale_2": np.ones(2, np.float32)}, None, "one F32"),
        "fp8-block scales of the wrong shape": ({"w": f8(130, 40), "w_scale_inv": np.ones((1, 1), np.float32)},
                                                None, r"floats of shape \[130, 1\] \(per channel\) "
                                                      r"or \[2, 1\] \(one per 128 x 128 block\)"),
        "fp8 compressed-tensors scales of the wrong shape": (
            {"w": f8(4, 256), "w_scale": np.ones((4, 2), np.float32)}, None,
            r"\[4, 1\] \(per channel\) or \[1, 2\]"),
        "scaled data not fp8": ({"w": np.zeros((4, 128), np.float32),
                                 "w_scale_inv": np.ones((1, 1), np.float32)}, None, "F8_E4M3"),
        "mxfp8 scales of the wrong shape": ({"w": f8(4, 64), "w_scale": u8(4, 3)}, None, "MXFP8"),
        "packed nvfp4 without its global scale": ({"w_packed": u8(4, 8), "w_scale": f8(4, 1)}, None,
                                                  "global scale"),
        "packed nvfp4 scales of the wrong shape": ({"w_packed": u8(4, 8), "w_scale": f8(4, 2),
                                                    "w_global_scale": one_1}, None,
                                                   "NVFP4 scales must have shape"),
        "packed nvfp4 global scale not one f32": ({"w_packed": u8(4, 8), "w_scale": f8(4, 1),
                                                   "w_global_scale": np.ones(2, np.float32)}, None,
                                                  "one F32"),
        "packed mxfp4 scales of the wrong shape": ({"w_packed": u8(4, 16), "w_scale": u8(4, 2)}, None,
                                                   "MXFP4 scales must have shape"),
        "packed mxfp4 scales not bytes": ({"w_packed": u8(4, 16), "w_scale": np.ones((4, 1), np.float32)},
                                          None, "E8M0"),
        "packed data of one dimension": ({"w_packed": u8(8), "w_scale": f8(1)}, None, "2 dimensions"),
        "padded shape that does not fit": ({"w.blocks": u8(4, 2, 16), "w.scales": u8(4, 2)},
                                           {"lowp.shape.w": "[4, 100]"}, "does not fit"),
        "padded shape that is not one": ({"w.blocks": u8(4, 2, 16), "w.scales": u8(4, 2)},
                                         {"lowp.shape.w": "four by sixty"}, "not a shape"),
        "padded nvfp4 shape that does not fit": ({"w": u8(4, 16), "w_scale": f8(4, 2), "w_scale_2": one},
                                                 {"lowp.shape.w": "[4, 40]"}, "does not fit"),
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
    with pytest.raises(ValueError, match="layout must be one of"):
        lowp.convert(src, None, to="mxfp4", layout="vllm")
    with pytest.raises(ValueError):
        lowp.convert(src, None, to="mxfp6")
    with pytest.raises(ValueError):
        lowp.convert(src, tmp_path / "x.safetensors", to="nvfp4", shard_size=1000)


# ---------------------------------------------------------------------------------------------
# Scale search, stochastic rounding, dry runs
# ---------------------------------------------------------------------------------------------

FP8_FACTORS = np.array([1.0, 0.99, 0.98, 0.97, 0.96, 0.95, 0.94, 0.93, 0.92, 0.91, 0.90])


def _candidates_ok(scheme, spec, chosen, amax, stype):
    """Whether each chosen scale is one the search may try."""
    if scheme in ("mxfp8", "mxfp4"):
        return np.abs(chosen.astype(int) - spec.astype(int)) <= 1
    if scheme == "nvfp4":
        return (np.abs(chosen.astype(int) - spec.astype(int)) <= 3) & (chosen < 0x7F)
    tries = fp8_scale(amax[..., None], stype, FP8_FACTORS)
    return np.any(tries == chosen[..., None], axis=-1) | ((amax == 0) & (chosen == 0))


def test_mse_scale_search_is_never_worse(model, scheme, tmp_path):
    src, tensors = model
    spec_report = lowp.convert(src, tmp_path / "spec.safetensors", to=scheme, layout=CT)
    dst = tmp_path / "mse.safetensors"
    mse_report = lowp.convert(src, dst, to=scheme, layout=CT, scale_search="mse")
    out, _ = read_safetensors(dst)
    spec_by, mse_by = ({r["name"]: r for r in rep} for rep in (spec_report, mse_report))
    improved = 0
    for name in quantized_names(scheme, CT, tensors):
        x = tensors[name].astype(np.float64)
        assert mse_by[name]["sqnr_db"] >= spec_by[name]["sqnr_db"] - 1e-9, name
        improved += mse_by[name]["sqnr_db"] > spec_by[name]["sqnr_db"] + 1e-6
        # The elements are the nearest ones for the scales the search chose...
        chosen = stored_scales(scheme, CT, name, out)
        codes, scales, scale_2, stype = reference(scheme, CT, tensors[name], scales=chosen)
        for t, want in ref_tensors(scheme, CT, name, x.shape, codes, scales, scale_2, stype).items():
            assert_same_tensor(out[t], want, f"mse {scheme} {t}")
        # ... those scales are among the candidates, and no block got worse.
        blocks = to_blocks(scheme, x)
        spec_codes, spec_scales_, _, _ = reference(scheme, CT, tensors[name])
        assert np.all(_candidates_ok(scheme, spec_scales_, chosen, np.abs(blocks).max(-1), stype)), name
        err = lambda c, s: np.sum((blocks - ref_decode_f64(scheme, c, s, scale_2)) ** 2, axis=-1)
        e_mse, e_spec = err(codes, chosen), err(spec_codes, spec_scales_)
        assert np.all(e_mse <= e_spec * (1 + 1e-12)), name
        sqnr, _, clipped, _ = ref_figures(scheme, x, codes, chosen, scale_2)
        assert mse_by[name]["sqnr_db"] == pytest.approx(sqnr, rel=1e-9)
        assert mse_by[name]["clipped_blocks"] == clipped
    # The search finds something: FP4's coarse steps leave room, and fp8's clipped scales too.
    assert improved >= 2


def test_stochastic_rounding_is_seeded_and_rounds_to_a_neighbour(model, scheme, tmp_path):
    src, tensors = model
    runs = {}
    for tag, seed in (("a", 7), ("b", 7), ("c", 8)):
        dst = tmp_path / f"sr_{tag}.safetensors"
        lowp.convert(src, dst, to=scheme, layout=CT, rounding="stochastic", seed=seed)
        runs[tag] = read_safetensors(dst)[0]
    nearest_path = tmp_path / "nearest.safetensors"
    lowp.convert(src, nearest_path, to=scheme, layout=CT)
    nearest = read_safetensors(nearest_path)[0]
    for t in runs["a"]:
        assert_same_tensor(runs["b"][t], runs["a"][t], f"same seed {t}")
    weights = quantized_names(scheme, CT, tensors)
    data_names = [data_name(scheme, CT, w) for w in weights]
    differ = [t for t in runs["a"] if runs["a"][t].tobytes() != runs["c"][t].tobytes()]
    assert set(differ) == set(data_names)  # only the elements differ, the scales are the same
    assert all(runs["a"][t].tobytes() != nearest[t].tobytes() for t in data_names)
    # Every element is one of the two values beside x / scale (or x / scale itself).
    out = runs["a"]
    for name in weights:
        x = tensors[name].astype(np.float64)
        scales = stored_scales(scheme, CT, name, out)
        assert_same_tensor(out[scale_name(scheme, CT, name)],
                           nearest[scale_name(scheme, CT, name)], f"{name} scales")
        scale_2 = nvfp4_scale_2(x, CT) if scheme == "nvfp4" else None
        blocks = to_blocks(scheme, x)
        div = divisors(scheme, scales, scale_2)[..., None]
        q = np.where(div == 0, blocks * 0.0, blocks / np.where(div == 0, 1, div))
        positive = E4M3_POS if is_e4m3(scheme) else E2M1_POS
        a = np.minimum(np.abs(q), positive[-1])
        hi = np.searchsorted(positive, a, side="left")
        lo = np.maximum(np.where(positive[hi] == a, hi, hi - 1), 0)
        got = stored_codes(scheme, CT, name, out, x.shape)
        mag = got & (0x7F if is_e4m3(scheme) else 0x7)
        assert np.all((mag == lo) | (mag == hi)), name
        nonzero = mag != 0
        sign = got >= (0x80 if is_e4m3(scheme) else 0x8)
        assert np.array_equal(sign[nonzero], np.signbit(q)[nonzero]), name


def test_dry_run_reports_what_a_real_run_does(model, scheme, tmp_path):
    src, _ = model
    before = sorted(os.listdir(tmp_path))
    for kw in ({}, {"layout": CT}, {"layout": CT, "scale_search": "mse"},
               {"layout": CT, "rounding": "stochastic", "seed": 3}):
        dry = lowp.convert(src, None, to=scheme, **kw)
        assert sorted(os.listdir(tmp_path)) == before
        real = lowp.convert(src, tmp_path / "real.safetensors", to=scheme, **kw)
        os.remove(tmp_path / "real.safetensors")
        assert len(dry) == len(real)
        for d, r in zip(dry, real):
            assert d == r, (kw, d["name"], {k: (d[k], r.get(k)) for k in d if d[k] != r.get(k)})


def test_dry_run_of_a_model_directory(model_dir, tmp_path):
    src, _ = model_dir
    for layout in (CT, "modelopt"):
        before = sorted(os.listdir(tmp_path))
        dry = lowp.convert(src, None, to="nvfp4", layout=layout)
        assert sorted(os.listdir(tmp_path)) == before
        real = lowp.convert(src, tmp_path / f"real_{layout}", to="nvfp4", layout=layout)
        assert dry == real
        assert any(r["scheme"] == "nvfp4" for r in real)
