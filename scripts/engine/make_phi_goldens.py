#!/usr/bin/env python3
"""Golden file for the phi (Phi-1, 1.5, 2) engine tests: Tests/PhiEngineTests/Fixtures/engine/
tiny-phi.json.

    python3 scripts/engine/make_phi_goldens.py     # torch, transformers, mlx, mlx-lm

For the tiny random phi models of tiny_models.py (phi2_like: MHA, rotary 0.4; phi15_qk_like:
rotary 0.5, qk_layernorm, GQA, 3 layers; phi_wide_head: head_dim 40, rotary 0.4, GQA), each
with its own seed:
- float32 and bfloat16 weights: transformers' PhiForCausalLM in float32 (last-position logits
  and 40 greedy tokens from a 12-token and a 40-token prompt), as make_engine_goldens.py does
  for phi3;
- for the models mlx-lm can load (no qk_layernorm), mlx_lm.convert at 4 bits (group 64) and
  8 bits (group 32): the tensor sha256s, and a float64 reference greedy run of the STORED
  quantized weights (dequantized exactly, as make_mx_oracle.py does), written here in numpy
  from the architecture, with the top 8 logits and the spread at every step for the
  near-tie walk.
Weights are never committed: the Swift tests rebuild them from the seed.
"""
import json
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_engine_goldens as eg  # noqa: E402
import make_mx_oracle as mo  # noqa: E402
import tiny_models as tm  # noqa: E402

OUT = os.path.join(eg.OUT, "tiny-phi.json")
AMPLITUDE = 0.25
MODELS = [("phi2", tm.phi2_like(), 11), ("phi15qk", tm.phi15_qk_like(), 23),
          ("phiwide", tm.phi_wide_head(), 5)]
MLX_VARIANTS = [(4, 64), (8, 32)]


def forward(cfg, w, tokens):
    """Logits of the last position in float64, the whole sequence recomputed
    (transformers' PhiForCausalLM, modeling_phi.py)."""
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or heads
    hd = h // heads
    rd = int(hd * cfg["partial_rotary_factor"])
    eps = cfg["layer_norm_eps"]
    n = len(tokens)
    inv = 1.0 / cfg["rope_theta"] ** (np.arange(0, rd, 2, dtype=np.float64) / rd)
    ang = np.arange(n, dtype=np.float64)[:, None] * inv[None, :]
    cos, sin = np.concatenate([np.cos(ang)] * 2, -1), np.concatenate([np.sin(ang)] * 2, -1)

    def layernorm(x, name):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + eps) * w[name + ".weight"] + w[name + ".bias"]

    def linear(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    def gelu_new(x):
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))

    x = w["model.embed_tokens.weight"][tokens]
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        a = layernorm(x, p + "input_layernorm")
        q = linear(a, p + "self_attn.q_proj").reshape(n, heads, hd).transpose(1, 0, 2)
        k = linear(a, p + "self_attn.k_proj").reshape(n, kv, hd).transpose(1, 0, 2)
        v = linear(a, p + "self_attn.v_proj").reshape(n, kv, hd).transpose(1, 0, 2)
        if cfg.get("qk_layernorm"):
            q, k = layernorm(q, p + "self_attn.q_layernorm"), layernorm(k, p + "self_attn.k_layernorm")
        q, k = mo.rope(q, cos, sin, rd), mo.rope(k, cos, sin, rd)
        o = mo.attention(q, k, v)
        m = linear(gelu_new(linear(a, p + "mlp.fc1")), p + "mlp.fc2")
        x = linear(o, p + "self_attn.dense") + m + x
    return linear(layernorm(x[-1], "model.final_layernorm"), "lm_head")


def model_case(work, name, cfg, seed):
    tensors = tm.weights(cfg, seed, AMPLITUDE)
    result = {"name": name, "seed": seed, "amplitude": AMPLITUDE, "config": cfg}
    for dtype in ("float32", "bfloat16"):
        directory = os.path.join(work, f"{name}-{dtype}")
        tm.write_model(directory, cfg, tensors, dtype=dtype)
        model = eg.hf_load(directory)
        result[dtype] = [eg.hf_case(model, eg.SHORT_PROMPT, 40),
                         eg.hf_case(model, eg.LONG_PROMPT, 40)]
    # The float64 reference must agree with transformers on the float32 model.
    w64 = {k: v.astype(np.float64) for k, v in tensors.items()}
    ref = forward(cfg, w64, eg.SHORT_PROMPT)
    hf = np.array(result["float32"][0]["last_logits"])
    error = float(np.abs(ref - hf).max() / np.abs(hf).max())
    assert error < 1e-5, f"{name}: float64 reference differs from transformers by {error}"
    result["mlx"] = []
    if cfg.get("qk_layernorm"):
        return result
    source = os.path.join(work, name + "-mlxsrc")
    mo.write_float_model(source, cfg, tensors)
    from mlx_lm import convert

    for bits, group in MLX_VARIANTS:
        target = os.path.join(work, f"{name}-q{bits}g{group}")
        convert(source, target, quantize=True, q_bits=bits, q_group_size=group)
        config, w, hashes = mo.load_dequantized(target)
        tokens, steps = mo.greedy(config, w, eg.SHORT_PROMPT, 40, model=forward)
        result["mlx"].append({"quantization": config["quantization"], "tensor_sha256": hashes,
                              "prompt": eg.SHORT_PROMPT, "greedy": tokens, "steps": steps})
        print(name, bits, group, tokens[:10], file=sys.stderr)
    return result


def main():
    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as work:
        models = [model_case(work, name, cfg, seed) for name, cfg, seed in MODELS]
    eg.write("tiny-phi.json", {"models": models})


if __name__ == "__main__":
    main()
