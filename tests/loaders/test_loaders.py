"""lowp's quantized checkpoints, loaded by the loaders people use.

Each case quantizes a tiny model that transformers made, through `lowp convert` and through
`lowp.convert` (the two outputs must be the same bytes), then:

* checks that `config.json`'s `quantization_config` tells the truth about the files: every
  module whose weight is stored quantized is absent from the skip list, every module with a
  weight of 2 or more dimensions left in its float type is in it;
* loads the output with the layout's real loader on CPU (see LOADERS) and fails on a missing,
  unexpected or re-initialised key or on any warning the loader gives;
* compares every loaded weight with lowp's own decoding, bit for bit, by the loader's own
  arithmetic (see WEIGHT_RULES);
* compares the model's outputs on a fixed input with the original model's: cosine similarity at
  least THRESHOLDS[scheme].

Loaders (CPU):

* transformers layout: transformers' own quantizers, `FineGrainedFP8Config(dequantize=True)`
  for fp8 and mxfp8 and `Mxfp4Config(dequantize=True)` for gpt-oss's mxfp4: the dequantizing
  paths that run where the GPU kernels do not;
* compressed-tensors layout: transformers through compressed-tensors, as it loads by default
  (the modules stay compressed and decompress on the first forward pass), and once more with
  `CompressedTensorsConfig(dequantize=True)` for the weights;
* modelopt layout: no CPU loader reads ModelOpt files. The suite converts them with
  compressed-tensors' own ModelOpt converter (`ModelOptNvfp4Converter`) and loads the result
  as above; and where vLLM is importable, parses the configuration with vLLM's ModelOpt reader.
"""

import json
import sys
from pathlib import Path

import pytest
import torch
import transformers

from conftest import (decode, fresh, load, lowp_cli, model_class, models, outputs, quantize,
                      reference_outputs, same_files, cosine)  # noqa: F401

# The least cosine similarity of the outputs to the original model's, per scheme, on these tiny
# random models: the lowest measured was 0.9961 for the 8-bit schemes (gpt-oss in fp8-block),
# 0.9719 for mxfp4 and 0.9790 for nvfp4 (Llama); a wrong scale or a misplaced block gives
# 0.3 or less.
THRESHOLDS = {"fp8-block": 0.99, "fp8-channel": 0.99, "mxfp8": 0.99, "mxfp4": 0.95,
              "nvfp4": 0.95}

# (model, layout, scheme): every scheme in every layout that holds it, on shapes that fit the
# blocks and shapes that do not.
CASES = [
    ("llama", "transformers", "fp8-block"),
    ("llama", "transformers", "mxfp8"),
    *[("llama", "compressed-tensors", s) for s in
      ("fp8-block", "fp8-channel", "mxfp8", "mxfp4", "nvfp4")],
    ("llama", "modelopt+amax", "nvfp4"),
    ("llama_partial", "transformers", "fp8-block"),
    ("llama_partial", "compressed-tensors", "fp8-block"),
    ("llama_partial", "compressed-tensors", "nvfp4"),
    ("llama_odd", "transformers", "mxfp8"),
    ("llama_odd", "compressed-tensors", "fp8-channel"),
    ("llama_odd", "compressed-tensors", "mxfp4"),
    ("llama_odd", "modelopt", "nvfp4"),
    ("qwen3", "transformers", "fp8-block"),
    ("qwen3", "compressed-tensors", "fp8-channel"),
    ("qwen3", "compressed-tensors", "nvfp4"),
    ("qwen3", "modelopt+amax", "nvfp4"),
    ("gpt_oss", "transformers", "mxfp4"),
    ("gpt_oss", "transformers", "fp8-block"),
    ("gpt_oss", "compressed-tensors", "mxfp4"),
    ("bert", "transformers", "fp8-block"),
    ("bert", "compressed-tensors", "mxfp8"),
    ("bert", "compressed-tensors", "nvfp4"),
]

# What each loader computes from the stored values, against which lowp's decoding is compared:
# "bf16": the exact value rounded once to bf16 (lowp's own decoding to bf16);
# "f32 then bf16": the product rounded to f32 first, then to bf16 (lowp's decoding to f32,
#   rounded to bf16 by torch): transformers' FP8 dequantizer multiplies in f32;
# "one ulp": compressed-tensors after its ModelOpt converter divides the block scale by
#   f32(1 / scale_2) in f32 first, so values may differ from the exact ones by one bf16 unit.
WEIGHT_RULES = {
    ("transformers", "fp8-block"): "f32 then bf16",
    ("transformers", "mxfp8"): "bf16",
    ("transformers", "mxfp4"): "bf16",
    ("compressed-tensors", None): "bf16",
    ("modelopt", "nvfp4"): "one ulp",
}


def case_id(case):
    return "-".join(case)


# ---------------------------------------------------------------------------------------------
# The configuration tells the truth
# ---------------------------------------------------------------------------------------------

def skip_list(config):
    q = config["quantization_config"]
    return set(q.get("modules_to_not_convert") or q.get("ignore") or [])


def stored(dst):
    """Every tensor of a model directory: name -> (dtype name, shape)."""
    out = {}
    for f in Path(dst).glob("*.safetensors"):
        n = int.from_bytes(f.read_bytes()[:8], "little")
        header = json.loads(f.read_bytes()[8:8 + n])
        header.pop("__metadata__", None)
        out.update({k: (v["dtype"], v["shape"]) for k, v in header.items()})
    return out


QUANT_SUFFIXES = ("_scale_inv", "_scale", "_scale_2", "_global_scale", "_packed", "_blocks",
                  "_scales", ".input_scale")


def check_config_truth(dst):
    config = json.loads((Path(dst) / "config.json").read_text())
    skip = skip_list(config)
    tensors = stored(dst)
    quantized, plain = set(), set()
    for name, (dtype, shape) in tensors.items():
        module = name.rsplit(".", 1)[0]
        if name.endswith(QUANT_SUFFIXES) or dtype in ("F8_E4M3", "U8"):
            for suffix in ("_packed", "_blocks", "_scales"):
                if name.endswith(suffix):
                    module = name[: -len(suffix)].rsplit(".", 1)[0]
            quantized.add(module)
        elif len(shape) >= 2:
            plain.add(module)
    plain -= quantized
    assert quantized, "nothing quantized"
    assert not quantized & skip, f"quantized but listed as not: {sorted(quantized & skip)}"
    assert plain <= skip, f"left unquantized but not listed: {sorted(plain - skip)}"
    return config


# ---------------------------------------------------------------------------------------------
# Loaders
# ---------------------------------------------------------------------------------------------

DEQUANTIZE_WARNING = "already has a `quantization_config` attribute"


def load_transformers(name, dst, scheme):
    config = (transformers.Mxfp4Config(dequantize=True) if scheme == "mxfp4"
              else transformers.FineGrainedFP8Config(dequantize=True))
    return load(model_class(name), dst, config)


def load_compressed_tensors(name, dst, dequantize):
    if not dequantize:
        return load(model_class(name), dst)
    config = transformers.CompressedTensorsConfig(dequantize=True)
    # Passing the documented loading attribute makes transformers say it merged it: expected.
    return load(model_class(name), dst, config, expected_warnings=(DEQUANTIZE_WARNING,))


def modelopt_to_compressed_tensors(src, dst):
    """compressed-tensors' own converter of ModelOpt NVFP4 checkpoints, then two changes its
    output needs before compressed-tensors' transformers path takes it on CPU: the converter
    keeps ModelOpt's scalar (shape []) second scales as global scales, which that path creates
    with shape [1] (and would re-initialise), so they are reshaped; and that path runs the
    weights only (it has no parameter for the activations' global scales the converter writes
    from `input_scale`), so the group's input activations and their scales are dropped. The
    weights and their scales are left as the converter wrote them."""
    from compressed_tensors.entrypoints.convert import convert_checkpoint
    from compressed_tensors.entrypoints.convert.converters import ModelOptNvfp4Converter
    from safetensors.torch import load_file, save_file
    q = json.loads((Path(src) / "config.json").read_text())["quantization_config"]
    converter = ModelOptNvfp4Converter(ignore=q["ignore"], targets=["Linear"])
    convert_checkpoint(src, dst, converter, device="cpu", max_workers=1)
    for f in Path(dst).glob("*.safetensors"):
        t = load_file(f)
        t = {k: v for k, v in t.items() if not k.endswith("input_global_scale")}
        for k, v in t.items():
            if k.endswith("_global_scale") and v.dim() == 0:
                t[k] = v.reshape(1)
        save_file(t, f, metadata={"format": "pt"})
    config = json.loads((Path(dst) / "config.json").read_text())
    for group in config["quantization_config"]["config_groups"].values():
        group["input_activations"] = None
    (Path(dst) / "config.json").write_text(json.dumps(config))


def calibration_amax(name, path):
    """The largest input magnitude of every linear layer of the original model on the fixed
    input: a calibration run, as a user's would give `--activation-amax`."""
    model = load(model_class(name), path)
    amax, hooks = {}, []
    for module_name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear):
            def hook(mod, args, out, module_name=module_name):
                a = args[0].detach().abs().max().float().item()
                amax[module_name] = max(amax.get(module_name, 0.0), a)
            hooks.append(module.register_forward_hook(hook))
    outputs(model, name)
    for h in hooks:
        h.remove()
    return {k: v for k, v in amax.items() if v > 0}


# ---------------------------------------------------------------------------------------------
# Weights
# ---------------------------------------------------------------------------------------------

def weight_rule(layout, scheme):
    return WEIGHT_RULES.get((layout, scheme), WEIGHT_RULES.get((layout, None)))


def check_weights(model, dst, layout, scheme, fresh):
    """Every weight lowp decodes equals the loaded one by the loader's rule; gives the number
    of weights compared."""
    rule = weight_rule(layout, scheme)
    want = decode(dst, fresh("decoded-f32" if rule == "f32 then bf16" else "decoded-bf16"),
                  "f32" if rule == "f32 then bf16" else "bf16")
    state = model.state_dict()
    compared = 0
    for key, value in want.items():
        got = state[key]
        expected = value.to(torch.bfloat16)
        assert got.shape == expected.shape, key
        if rule == "one ulp":
            g = got.view(torch.int16).to(torch.int32)
            e = expected.view(torch.int16).to(torch.int32)
            assert (g - e).abs().max().item() <= 1, key
        else:
            differ = (got.view(torch.int16) != expected.view(torch.int16)).sum().item()
            assert differ == 0, f"{key}: {differ} of {got.numel()} elements differ"
        compared += 1
    return compared


# ---------------------------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_loader_loads_it_right(case, models, reference_outputs, fresh):
    name, layout, scheme = case
    src = models[name]
    amax_file = None
    if layout == "modelopt+amax":
        layout = "modelopt"
        amax = calibration_amax(name, src)
        amax_file = fresh("amax.json")
        amax_file.write_text(json.dumps(amax))
    dst = fresh("cli")
    quantize(src, dst, scheme, layout, "cli", activation_amax=amax_file)
    py = fresh("python")
    report = quantize(src, py, scheme, layout, "python", activation_amax=amax_file)
    assert same_files(dst, py), "the command line and lowp.convert wrote different files"
    assert any(r["scheme"] == scheme for r in report)
    config = check_config_truth(dst)
    reference = reference_outputs[name]

    if layout == "transformers":
        model = load_transformers(name, dst, scheme)
        compared = check_weights(model, dst, layout, scheme, fresh)
        similarity = cosine(outputs(model, name), reference)
    elif layout == "compressed-tensors":
        model = load_compressed_tensors(name, dst, dequantize=False)
        similarity = cosine(outputs(model, name), reference)
        dense = load_compressed_tensors(name, dst, dequantize=True)
        compared = check_weights(dense, dst, layout, scheme, fresh)
        # The dense model computes what the compressed one does, up to activations that the
        # FP8 schemes quantize dynamically in the compressed model.
        assert cosine(outputs(dense, name), reference) >= THRESHOLDS[scheme]
    else:
        algo = "NVFP4" if amax_file else "W4A16_NVFP4"
        assert config["quantization_config"]["quant_algo"] == algo
        assert json.loads((dst / "hf_quant_config.json").read_text())["quantization"][
            "exclude_modules"] == config["quantization_config"]["ignore"]
        converted = fresh("converted")
        modelopt_to_compressed_tensors(dst, converted)
        model = load_compressed_tensors(name, converted, dequantize=False)
        similarity = cosine(outputs(model, name), reference)
        dense = load_compressed_tensors(name, converted, dequantize=True)
        compared = check_weights(dense, dst, layout, scheme, fresh)
    print(f"{case_id(case)}: {compared} weights compared, cosine {similarity:.5f}")
    assert compared > 0
    assert similarity >= THRESHOLDS[scheme], similarity


# (model, layout, scheme, what the refusal says): schemes a layout cannot hold for a model are
# refused before any work, naming what can.
REFUSALS = [
    ("llama_odd", "transformers", "fp8-block", "--to fp8-channel (compressed-tensors)"),
    ("llama", "transformers", "mxfp4", "--layout compressed-tensors"),
    ("llama", "transformers", "nvfp4", "--layout compressed-tensors"),
    ("llama", "modelopt", "mxfp8", "lowp writes ModelOpt's layout for nvfp4 only"),
]


@pytest.mark.parametrize("case", REFUSALS, ids=lambda c: "-".join(c[:3]))
def test_what_a_loader_cannot_read_is_refused(case, models, fresh):
    name, layout, scheme, says = case
    dst = fresh("refused")
    code, _, err = lowp_cli("convert", models[name], dst, "--to", scheme, "--layout", layout)
    assert code == 2 and says in err, err
    assert not dst.exists()


def test_modelopt_weights_only_config_is_what_vllm_reads(models, fresh):
    """W4A16_NVFP4, with the skip list where vLLM's ModelOpt reader takes it. Runs where vLLM
    imports (it is not among the suite's requirements)."""
    modelopt = pytest.importorskip("vllm.model_executor.layers.quantization.modelopt")
    dst = fresh("w4a16")
    quantize(models["qwen3"], dst, "nvfp4", "modelopt", "cli")
    q = json.loads((dst / "config.json").read_text())["quantization_config"]
    parsed = modelopt.ModelOptNvFp4Config.from_config(q)
    assert parsed.quant_method == "W4A16_NVFP4"
    assert set(parsed.exclude_modules) == set(q["ignore"]) and "lm_head" in q["ignore"]
    assert parsed.group_size == 16
    hf = json.loads((dst / "hf_quant_config.json").read_text())
    assert modelopt.ModelOptNvFp4Config.from_config(hf).quant_method == "W4A16_NVFP4"


def test_decoded_models_load_as_plain_models(models, reference_outputs, fresh):
    """A quantized model decoded back to bf16 has the model's own names and shapes (gpt-oss's
    experts back in [E, in, out]) and no quantization_config: transformers loads it as any
    bf16 model."""
    for name, layout, scheme in [("gpt_oss", "transformers", "mxfp4"),
                                 ("llama", "compressed-tensors", "nvfp4")]:
        q = fresh(f"{name}-q")
        quantize(models[name], q, scheme, layout, "cli")
        back = fresh(f"{name}-back")
        code, _, err = lowp_cli("convert", q, back, "--to", "bf16")
        assert code == 0, err
        assert "quantization_config" not in json.loads((back / "config.json").read_text())
        model = load(model_class(name), back)
        assert cosine(outputs(model, name), reference_outputs[name]) >= THRESHOLDS[scheme]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
