#!/usr/bin/env python3
"""Golden files for the inference engine tests (Tests/PhiEngineTests/Fixtures/engine).

Run with the reference venv:  /work/venv/bin/python scripts/engine/make_engine_goldens.py

References: transformers 5.23 Phi3ForCausalLM in float32 (model.generate for greedy runs, so
its LongRoPE cache reset is what we compare against) and mlx_lm 0.32 (mlx_lm.convert -q, and
greedy decoding through mlx_lm.generate.generate_step) on the CPU. Weights are never
committed: the bundled stories-260k model is in the repo, and the tiny random models are
rebuilt by the Swift tests from the seed (see tiny_models.py). Files hold token ids, the last
prompt position's logits and a few numbers each, so they stay small.
"""

import hashlib
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tiny_models as tm  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
STORIES = os.path.join(ROOT, "models", "stories-260k")
OUT = os.path.join(ROOT, "Tests", "PhiEngineTests", "Fixtures", "engine")
SEED, AMPLITUDE = 7, 0.25
# Token ids of the tiny models' prompts: one shorter than original_max_position_embeddings
# (32), one longer; greedy runs from the short one cross 32, where LongRoPE switches.
SHORT_PROMPT = [1, 17, 200, 33, 5, 99, 250, 3, 42, 7, 11, 300]
LONG_PROMPT = [1] + [int(x) for x in np.random.default_rng(3).integers(3, 380, 39)]
STORY_PROMPTS = ["Once upon a time", "Tom and Lily went to the park.", "The cat"]
STORY_README_TEXT_START = "Once upon a time, there was a little girl named Lily."


def floats(a):
    return [float(f"{float(x):.7g}") for x in np.asarray(a, dtype=np.float64).ravel()]


def margins(logit_rows):
    """Smallest top-1 minus top-2 gap over the given rows (how robust a greedy path is)."""
    gaps = []
    for row in logit_rows:
        top = np.sort(np.asarray(row, dtype=np.float64))[-2:]
        gaps.append(top[1] - top[0])
    return float(min(gaps))


# ---- transformers -------------------------------------------------------------------------

def hf_load(directory):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32)
    model.eval()
    model.generation_config.eos_token_id = None  # exactly N tokens, as the tests ask for
    model.generation_config.pad_token_id = 0
    return model


@torch.no_grad()
def hf_case(model, prompt, new_tokens):
    """Last-position logits of the prompt (one full forward), and a greedy continuation."""
    ids = torch.tensor([prompt])
    logits = model(ids).logits[0, -1]
    out = model.generate(
        ids, max_new_tokens=new_tokens, do_sample=False, output_scores=True,
        return_dict_in_generate=True)
    greedy = out.sequences[0, len(prompt):].tolist()
    return {
        "prompt": prompt,
        "last_logits": floats(logits),
        "greedy": greedy,
        "greedy_min_margin": margins([s[0].numpy() for s in out.scores]),
    }


# ---- mlx ----------------------------------------------------------------------------------

def mlx_convert(source, target, bits, group, predicate=None):
    from mlx_lm import convert

    convert(source, target, quantize=True, q_bits=bits, q_group_size=group,
            quant_predicate=predicate)
    with open(os.path.join(target, "config.json")) as f:
        config = json.load(f)
    from safetensors.numpy import load_file

    tensors = {}
    for name in sorted(os.listdir(target)):
        if name.endswith(".safetensors"):
            tensors.update(load_file(os.path.join(target, name)))
    hashes = {k: hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest()
              for k, v in sorted(tensors.items())}
    return config["quantization"], hashes


def mlx_case(directory, prompt, new_tokens):
    import mlx.core as mx
    from mlx_lm import load
    from mlx_lm.generate import generate_step

    model, _ = load(directory)
    logits = model(mx.array([prompt]))[0, -1]
    tokens, rows = [], []
    for token, logprobs in generate_step(
            mx.array(prompt), model, max_tokens=new_tokens, sampler=lambda x: mx.argmax(x, -1)):
        tokens.append(int(token))
        rows.append(np.array(logprobs.astype(mx.float32)))
    return {
        "prompt": prompt,
        "last_logits": floats(np.array(logits.astype(mx.float32))),
        "greedy": tokens,
        "greedy_min_margin": margins(rows),
    }


def add_tokenizer(directory):
    """mlx_lm.convert loads a tokenizer; the random models borrow the stories one."""
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(os.path.join(STORIES, name), directory)


# ---- the golden sets ----------------------------------------------------------------------

def stories(work):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(os.path.join(STORIES, "tokenizer.json"))
    model = hf_load(STORIES)
    story = hf_case(model, [1], 256)
    text = tokenizer.decode(story["greedy"])
    assert text.startswith(STORY_README_TEXT_START), text[:80]
    with open(os.path.join(STORIES, "README.md")) as f:
        readme = f.read()
    assert text.strip() in readme, "greedy story differs from the README's"
    prompts = [hf_case(model, tokenizer.encode(p).ids, 64) for p in STORY_PROMPTS]
    quantized = []
    for bits, group in [(4, 64), (8, 32)]:
        target = os.path.join(work, f"stories-q{bits}g{group}")
        quantization, hashes = mlx_convert(STORIES, target, bits, group)
        quantized.append({
            "quantization": quantization, "tensor_sha256": hashes,
            "cases": [mlx_case(target, tokenizer.encode(STORY_PROMPTS[0]).ids, 64)],
        })
    return {"story": story, "prompts": prompts, "mlx": quantized}


def tiny(work, name, cfg, mlx_variants):
    tensors = tm.weights(cfg, SEED, AMPLITUDE)
    result = {"seed": SEED, "amplitude": AMPLITUDE, "config": cfg}

    fp32_dir = os.path.join(work, name + "-f32")
    tm.write_model(fp32_dir, cfg, tensors)
    model = hf_load(fp32_dir)
    result["float32"] = [hf_case(model, SHORT_PROMPT, 40), hf_case(model, LONG_PROMPT, 40)]

    # bf16 weights, float32 math: transformers loads the bf16 tensors and widens them exactly.
    bf16_dir = os.path.join(work, name + "-bf16")
    tm.write_model(bf16_dir, cfg, tensors, dtype="bfloat16")
    model = hf_load(bf16_dir)
    result["bfloat16"] = [hf_case(model, SHORT_PROMPT, 40), hf_case(model, LONG_PROMPT, 40)]

    mlx_cfg = tm.for_mlx(cfg)
    source = os.path.join(work, name + "-mlxsrc")
    tm.write_model(source, mlx_cfg, tensors)
    add_tokenizer(source)
    result["mlx_config"] = mlx_cfg
    result["mlx"] = []
    for bits, group, predicate in mlx_variants:
        label = f"{name}-q{bits}g{group}" + (f"-{predicate}" if predicate else "")
        target = os.path.join(work, label)
        quantization, hashes = mlx_convert(source, target, bits, group, predicate)
        result["mlx"].append({
            "quantization": quantization, "tensor_sha256": hashes,
            "cases": [mlx_case(target, SHORT_PROMPT, 64)],
        })
    return result


def versions():
    import mlx.core as mx
    import mlx_lm
    import tokenizers
    import transformers

    return {"transformers": transformers.__version__, "torch": torch.__version__,
            "mlx": mx.__version__, "mlx_lm": mlx_lm.__version__,
            "tokenizers": tokenizers.__version__}


def write(name, data):
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        json.dump(dict(data, versions=versions()), f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def main():
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as work:
        write("stories-260k.json", stories(work))
        write("tiny-phi35.json", tiny(work, "phi35", tm.phi35_like(),
                                      [(4, 64, None), (8, 128, None), (6, 32, None)]))
        write("tiny-phi4mini.json", tiny(work, "phi4mini", tm.phi4mini_like(),
                                         [(4, 64, None), (3, 32, None), (5, 128, None),
                                          (2, 64, None), (4, 64, "mixed_3_6")]))


if __name__ == "__main__":
    main()
