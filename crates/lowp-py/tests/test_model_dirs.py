"""lowp.convert on a model directory: interrupted in any phase, dst is absent; what is left
out or converted on its own is said."""

import json
import os
import signal
import struct
import subprocess
import sys
import textwrap
import time
import warnings

import pytest

import lowp


def write_safetensors(path, name, values):
    """A safetensors file of one f32 tensor, written by hand."""
    data = struct.pack(f"<{len(values)}f", *values)
    header = json.dumps({name: {"dtype": "F32", "shape": [len(values)],
                                "data_offsets": [0, len(data)]}}).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + data)


def model_dir(path, extra_bytes=0):
    """A model directory: weights, config, a pooling folder, a hidden folder and, when asked,
    a large (sparse) extra file to copy."""
    os.makedirs(path / "1_Pooling")
    os.makedirs(path / ".cache")
    write_safetensors(path / "model.safetensors", "w", [1.0, 2.5, 3.0])
    (path / "config.json").write_text('{"model_type": "bert"}')
    (path / "1_Pooling" / "config.json").write_text("{}")
    if extra_bytes:
        with open(path / "big.bin", "wb") as f:
            f.truncate(extra_bytes)
    return path


def test_left_out_entries_and_own_models_are_warned(tmp_path):
    src = model_dir(tmp_path / "in")
    os.makedirs(src / "2_Dense")
    write_safetensors(src / "2_Dense" / "model.safetensors", "linear.weight", [0.5])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = lowp.convert(src, tmp_path / "out", to="bf16")
    said = [str(w.message) for w in caught]
    assert [r["name"] for r in report] == ["w", "2_Dense/linear.weight"]
    assert any("left out .cache (hidden)" in m for m in said), said
    assert any(m.startswith("lowp.convert: 2_Dense is converted as a model of its own")
               for m in said), said
    assert (tmp_path / "out" / "2_Dense" / "model.safetensors").exists()
    assert not (tmp_path / "out" / ".cache").exists()


def test_a_fifo_in_the_directory_is_refused_without_hanging(tmp_path):
    src = model_dir(tmp_path / "in")
    os.mkfifo(src / "1_Pooling" / "extra.json")
    with pytest.raises(OSError, match="FIFO"):
        lowp.convert(src, tmp_path / "out", to="bf16")
    assert not (tmp_path / "out").exists()


SCRIPT = textwrap.dedent("""
    import sys, lowp
    print("started", flush=True)
    try:
        lowp.convert(sys.argv[1], sys.argv[2], to="bf16")
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        raise
    print("finished", flush=True)
""")


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a subprocess")
def test_ctrl_c_while_copying_the_other_files_leaves_no_dst(tmp_path):
    src = model_dir(tmp_path / "in", extra_bytes=300 << 20)
    dst = tmp_path / "out"
    child = subprocess.Popen([sys.executable, "-c", SCRIPT, str(src), str(dst)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "started"
    # Wait until the copy of big.bin has begun in dst's temporary directory.
    deadline = time.monotonic() + 60
    while not any((tmp_path / t / "big.bin").exists()
                  for t in os.listdir(tmp_path) if t.startswith(".out.lowp-")):
        assert time.monotonic() < deadline, "the copy never started"
        assert child.poll() is None, child.communicate()
        time.sleep(0.001)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert "KeyboardInterrupt" in out, (out, err)
    assert "finished" not in out
    assert child.returncode != 0
    assert not dst.exists()
    assert sorted(os.listdir(tmp_path)) == ["in"]
