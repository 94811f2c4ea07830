#!/usr/bin/env python3
"""Golden files for the llama engine tests: Tests/PhiEngineTests/Fixtures/engine/
tiny-llama-smol.json and tiny-llama3.json, in the form of tiny-phi35.json (TinyModelTests).

    python3 scripts/engine/make_llama_goldens.py     # torch, transformers, mlx, mlx-lm

For the tiny random llama models of tiny_models.py (llama_smol_like: SmolLM2's proportions,
GQA 3:1, tied; llama3_scaled: Llama 3.x's `llama3` rope scaling, GQA 4:1, untied):
- float32 and bfloat16 weights: transformers' LlamaForCausalLM in float32 (last-position
  logits and 40 greedy tokens from a 12-token and a 40-token prompt), as
  make_engine_goldens.py does for phi3;
- mlx_lm.convert at 4 bits (group 64) and 8 bits (group 32): the tensor sha256s (phikit's
  writer of the same quantization must match them bit for bit) and mlx_lm's own greedy run.
Weights are never committed: the Swift tests rebuild them from the seed (the tensors
numbered in LlamaSchema's order, tiny_models.llama_tensor_shapes).
"""
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_engine_goldens as eg  # noqa: E402
import tiny_models as tm  # noqa: E402

MLX_VARIANTS = [(4, 64), (8, 32)]


def tiny_llama(work, name, cfg):
    tensors = tm.weights(cfg, eg.SEED, eg.AMPLITUDE)
    result = {"seed": eg.SEED, "amplitude": eg.AMPLITUDE, "config": cfg}
    for dtype in ("float32", "bfloat16"):
        directory = os.path.join(work, f"{name}-{dtype}")
        tm.write_model(directory, cfg, tensors, dtype=dtype)
        model = eg.hf_load(directory)
        result[dtype] = [eg.hf_case(model, eg.SHORT_PROMPT, 40),
                         eg.hf_case(model, eg.LONG_PROMPT, 40)]
    # mlx-lm's llama.py runs the same model (llama3 scaling included): no adjustment.
    source = os.path.join(work, name + "-mlxsrc")
    tm.write_model(source, cfg, tensors)
    eg.add_tokenizer(source)
    result["mlx_config"] = cfg
    result["mlx"] = []
    for bits, group in MLX_VARIANTS:
        target = os.path.join(work, f"{name}-q{bits}g{group}")
        quantization, hashes = eg.mlx_convert(source, target, bits, group)
        result["mlx"].append({"quantization": quantization, "tensor_sha256": hashes,
                              "cases": [eg.mlx_case(target, eg.SHORT_PROMPT, 64)]})
    return result


def main():
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as work:
        eg.write("tiny-llama-smol.json", tiny_llama(work, "llama-smol", tm.llama_smol_like()))
        eg.write("tiny-llama3.json", tiny_llama(work, "llama3", tm.llama3_scaled()))


if __name__ == "__main__":
    main()
