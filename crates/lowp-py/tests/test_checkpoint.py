"""lowp.convert: checkpoints converted through the lowp-io library, checked against NumPy."""

import json
import os
import struct

import ml_dtypes
import numpy as np
import pytest

import lowp


def write_safetensors(path, tensors):
    """A safetensors file written by hand: 8-byte header length, JSON header, data."""
    header, blobs, offset = {}, [], 0
    for name, array in tensors.items():
        dtype = {np.dtype(np.float32): "F32", np.dtype(np.int64): "I64"}[array.dtype]
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    """The tensors of a safetensors file as NumPy arrays (the F32, BF16, F8_E4M3, I64 ones)."""
    dtypes = {"F32": np.float32, "BF16": ml_dtypes.bfloat16,
              "F8_E4M3": ml_dtypes.float8_e4m3fn, "I64": np.int64}
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        data = raw[8 + n + begin:8 + n + end]
        out[name] = np.frombuffer(data, dtypes[info["dtype"]]).reshape(info["shape"])
    return out


@pytest.fixture
def model(tmp_path):
    rng = np.random.default_rng(0)
    tensors = {
        "layer.weight": rng.normal(0, 0.05, (8, 16)).astype(np.float32),
        "norm.weight": np.ones(16, np.float32),
        "ids": np.arange(4, dtype=np.int64),
    }
    path = tmp_path / "model.safetensors"
    write_safetensors(path, tensors)
    return path, tensors


def test_bf16_values_match_ml_dtypes_and_the_report_describes_them(model, tmp_path):
    src, tensors = model
    dst = tmp_path / "model_bf16.safetensors"
    report = lowp.convert(src, dst, to="bf16", keep=["*norm*"])
    by_name = {r["name"]: r for r in report}
    assert set(by_name) == set(tensors)
    out = read_safetensors(dst)
    expected = tensors["layer.weight"].astype(ml_dtypes.bfloat16)
    assert out["layer.weight"].dtype == ml_dtypes.bfloat16
    assert np.array_equal(out["layer.weight"].view(np.uint16), expected.view(np.uint16))
    assert np.array_equal(out["norm.weight"], tensors["norm.weight"])
    assert np.array_equal(out["ids"], tensors["ids"])
    w = by_name["layer.weight"]
    assert (w["from"], w["to"], w["elements"], w["shape"]) == ("F32", "BF16", 128, [8, 16])
    assert w["verdict"] == "ok" and w["overflowed"] == 0
    x = tensors["layer.weight"].astype(np.float64)
    rel = np.abs(expected.astype(np.float64) - x) / np.abs(x)
    assert w["max_rel_error"] == pytest.approx(rel.max(), rel=2**-20)
    assert w["max_rel_error"] <= 2**-8
    assert by_name["ids"]["verdict"] == "kept" and by_name["ids"]["overflowed"] is None
    assert by_name["norm.weight"]["why"] == "already f32"


def test_patterns_that_match_nothing_warn_and_still_convert(model, tmp_path):
    src, _ = model
    dst = tmp_path / "out.safetensors"
    with pytest.warns(UserWarning) as caught:
        lowp.convert(src, dst, to="bf16", only=["layer.*", "decoder.*"], keep=["*nrom*"])
    assert [str(w.message) for w in caught] == [
        "only pattern 'decoder.*' matches no tensor",
        "keep pattern '*nrom*' matches no tensor",
    ]
    assert dst.exists()


def test_dry_run_writes_nothing_and_counts_overflow(tmp_path):
    src = tmp_path / "big.safetensors"
    write_safetensors(src, {"w": np.float32([1.0, 1000.0, -1e6, 0.0])})
    before = sorted(os.listdir(tmp_path))
    (w,) = lowp.convert(src, None, to="f8e4m3fn")
    assert sorted(os.listdir(tmp_path)) == before
    assert (w["overflowed"], w["became_nan"], w["verdict"]) == (2, 2, "fail")
    (w,) = lowp.convert(src, None, to="f8e4m3fn", saturate=True)
    assert (w["overflowed"], w["became_nan"], w["verdict"]) == (2, 0, "warn")


def test_per_tensor_scale_stores_the_inverse(model, tmp_path):
    src, tensors = model
    dst = tmp_path / "model_fp8.safetensors"
    report = lowp.convert(src, dst, to="f8e4m3fn", only=["*.weight"], fp8_scale="per-tensor")
    w = {r["name"]: r for r in report}["layer.weight"]
    out = read_safetensors(dst)
    scale = out["layer.weight.scale"]
    assert scale.shape == () and scale.dtype == np.float32
    assert float(scale) == w["scale"]  # the report shows the stored factor
    restored = out["layer.weight"].astype(np.float64) * float(scale)
    x = tensors["layer.weight"].astype(np.float64)
    assert np.max(np.abs(restored - x) / np.abs(x)) <= 2**-4


def test_npy_files(tmp_path):
    src, dst = tmp_path / "a.npy", tmp_path / "b.npy"
    x = np.linspace(-3, 3, 50, dtype=np.float32).reshape(5, 10)
    np.save(src, x)
    (r,) = lowp.convert(str(src), str(dst), to="f16")
    assert r["name"] == "a" and r["shape"] == [5, 10]
    assert np.array_equal(np.load(dst), x.astype(np.float16))


def test_options_that_do_not_go_together_get_the_librarys_message(model):
    # lowp-io's rules and message, the option named as the keyword: `lowp convert --to bf16
    # --rest f16` says the same of --rest (crates/lowp-cli/tests/convert.rs).
    src, _ = model
    schemes = "the block-quantized schemes (fp8-block, fp8-channel, mxfp8, mxfp4, nvfp4)"
    cases = [
        (dict(to="bf16", rest="f16"), f"rest applies to {schemes}, not to bf16"),
        (dict(to="f16", scale_search="mse"), f"scale_search applies to {schemes}, not to f16"),
        (dict(to="bf16", fp8_scale="per-tensor"), "fp8_scale applies to f8e4m3fn and f8e5m2, not bf16"),
    ]
    for kwargs, want in cases:
        with pytest.raises(ValueError) as e:
            lowp.convert(src, None, **kwargs)
        assert str(e.value) == want


def test_errors_name_the_problem_and_leave_nothing(model, tmp_path):
    src, _ = model
    with pytest.raises(ValueError, match="cannot store 'f7'"):
        lowp.convert(src, None, to="f7")
    with pytest.raises(ValueError, match="same file"):
        lowp.convert(src, src, to="bf16")
    with pytest.raises(ValueError, match="fp8_scale applies to f8e4m3fn and f8e5m2, not bf16"):
        lowp.convert(src, None, to="bf16", fp8_scale="per-tensor")
    with pytest.raises(ValueError, match="'none' or 'per-tensor'"):
        lowp.convert(src, None, to="f8e4m3fn", fp8_scale="tensor")
    with pytest.raises(OSError, match="cannot open"):
        lowp.convert(tmp_path / "missing.safetensors", None, to="bf16")
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(open(src, "rb").read()[:-3])
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(OSError, match="truncated"):
        lowp.convert(bad, tmp_path / "out.safetensors", to="bf16")
    assert sorted(os.listdir(tmp_path)) == before
