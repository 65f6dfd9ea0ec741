"""What the loader suite shares: tiny models made by transformers, lowp run through its command
line and its Python module, and loading with the warnings of every loader captured.

The models are created here (a config, seeded random weights, `save_pretrained` in bf16), so the
suite needs no hub: transformers is told to stay offline.
"""

import logging
import os
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

import torch  # noqa: E402
import transformers  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def lowp_binary():
    """The `lowp` command: $LOWP_BIN, else the workspace's release or debug build."""
    if os.environ.get("LOWP_BIN"):
        return os.environ["LOWP_BIN"]
    for profile in ("release", "debug"):
        path = ROOT / "target" / profile / "lowp"
        if path.exists():
            return str(path)
    pytest.fail("no lowp binary: run `cargo build -p lowp-cli` or set LOWP_BIN")


# ---------------------------------------------------------------------------------------------
# The models
# ---------------------------------------------------------------------------------------------

def _llama(hidden, intermediate, heads, kv_heads, head_dim):
    return transformers.LlamaConfig(
        vocab_size=512, hidden_size=hidden, intermediate_size=intermediate,
        num_hidden_layers=2, num_attention_heads=heads, num_key_value_heads=kv_heads,
        head_dim=head_dim, max_position_embeddings=128, tie_word_embeddings=False)


# name -> (model class, config). The shapes: whole 128 x 128 blocks everywhere (llama); rows of
# the MLP and of k/v that are not whole blocks (llama_partial); columns that are not whole blocks
# of 128 but whole groups of 32 (llama_odd); tied embeddings (qwen3); MoE experts with biases
# (gpt_oss); an encoder with token-type and position tables (bert).
MODELS = {
    "llama": (transformers.LlamaForCausalLM, lambda: _llama(256, 512, 4, 2, 64)),
    "llama_partial": (transformers.LlamaForCausalLM, lambda: _llama(256, 320, 4, 1, 64)),
    "llama_odd": (transformers.LlamaForCausalLM, lambda: _llama(160, 416, 5, 5, 32)),
    "qwen3": (transformers.Qwen3ForCausalLM, lambda: transformers.Qwen3Config(
        vocab_size=512, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=32, max_position_embeddings=128,
        tie_word_embeddings=True)),
    "gpt_oss": (transformers.GptOssForCausalLM, lambda: transformers.GptOssConfig(
        vocab_size=512, hidden_size=128, intermediate_size=128, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, head_dim=32, num_local_experts=4,
        num_experts_per_tok=2, sliding_window=64,
        layer_types=["sliding_attention", "full_attention"])),
    "bert": (transformers.BertModel, lambda: transformers.BertConfig(
        vocab_size=512, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=4, max_position_embeddings=128)),
}


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    """Every model of MODELS saved in bf16 under a session directory: name -> path."""
    root = tmp_path_factory.mktemp("models")
    out = {}
    for i, (name, (cls, config)) in enumerate(MODELS.items()):
        torch.manual_seed(1000 + i)
        with torch.no_grad():
            model = cls(config()).to(torch.bfloat16)
        model.save_pretrained(root / name)
        out[name] = root / name
    return out


def model_class(name):
    """The class that loads model `name` (its head included)."""
    return MODELS[name][0]


# ---------------------------------------------------------------------------------------------
# lowp
# ---------------------------------------------------------------------------------------------

def lowp_cli(*args):
    """Runs `lowp` and gives (exit code, stdout, stderr)."""
    r = subprocess.run([lowp_binary(), *map(str, args)], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def quantize(src, dst, scheme, layout, via, activation_amax=None):
    """`lowp convert SRC DST --to SCHEME --layout LAYOUT` through the command line (`via` "cli")
    or `lowp.convert` ("python"); gives the report rows (Python) or stdout (CLI)."""
    if via == "cli":
        args = ["convert", src, dst, "--to", scheme, "--layout", layout]
        if activation_amax:
            args += ["--activation-amax", activation_amax]
        code, out, err = lowp_cli(*args)
        assert code == 0, err
        return out
    import lowp
    return lowp.convert(src, dst, to=scheme, layout=layout, activation_amax=activation_amax)


def decode(src, dst, to):
    """lowp's own decoding of a quantized model to a float type."""
    code, _, err = lowp_cli("convert", src, dst, "--to", to)
    assert code == 0, err
    from safetensors.torch import load_file
    tensors = {}
    for f in sorted(Path(dst).glob("*.safetensors")):
        tensors.update(load_file(f))
    return tensors


def same_files(a, b):
    """Whether two model directories hold the same files with the same bytes."""
    names = sorted(p.name for p in Path(a).iterdir())
    assert names == sorted(p.name for p in Path(b).iterdir())
    return all((Path(a) / n).read_bytes() == (Path(b) / n).read_bytes() for n in names)


# ---------------------------------------------------------------------------------------------
# Loading, with every warning captured
# ---------------------------------------------------------------------------------------------

class Captured(logging.Handler):
    """Collects the WARNING-or-worse records of the loggers it is attached to."""

    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def load(cls, path, quantization_config=None, expected_warnings=()):
    """Loads `path` with `cls.from_pretrained` in bf16, and gives the model after checking the
    loader's report: no missing, unexpected or mismatched (re-initialised) keys, no error
    message, and no warning from transformers, compressed-tensors or Python's warnings but
    those `expected_warnings` (substrings) name."""
    handler = Captured()
    tlog = logging.getLogger("transformers")
    tlog.addHandler(handler)
    loguru_id = None
    try:
        from loguru import logger as loguru
        loguru_id = loguru.add(lambda m: handler.messages.append(str(m)), level="WARNING")
    except ImportError:
        pass
    kwargs = {"dtype": torch.bfloat16, "output_loading_info": True}
    if quantization_config is not None:
        kwargs["quantization_config"] = quantization_config
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model, info = cls.from_pretrained(path, **kwargs)
    finally:
        tlog.removeHandler(handler)
        if loguru_id is not None:
            loguru.remove(loguru_id)
    for key in ("missing_keys", "unexpected_keys", "mismatched_keys", "error_msgs"):
        assert not info.get(key), f"{key}: {sorted(info[key])[:8]}"
    said = handler.messages + [str(w.message) for w in caught]
    unexpected = [m for m in said if not any(e in m for e in expected_warnings)]
    assert not unexpected, f"the loader warned: {unexpected}"
    return model.eval()


def outputs(model, name):
    """The logits (or the last hidden state) of a fixed input, in f32."""
    ids = torch.randint(0, 500, (2, 24), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        out = model(input_ids=ids)
    t = out.logits if hasattr(out, "logits") else out.last_hidden_state
    return t.float()


def cosine(a, b):
    return torch.nn.functional.cosine_similarity(a.flatten(), b.flatten(), dim=0).item()


@pytest.fixture(scope="session")
def reference_outputs(models):
    """Every original model's outputs, loaded as transformers loads any bf16 model."""
    return {n: outputs(load(model_class(n), p), n) for n, p in models.items()}


@pytest.fixture
def fresh(tmp_path):
    """A new directory name under the test's temporary directory, removed afterwards."""
    made = []

    def make(name):
        p = tmp_path / name
        made.append(p)
        return p

    yield make
    for p in made:
        shutil.rmtree(p, ignore_errors=True)
