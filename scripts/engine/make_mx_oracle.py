#!/usr/bin/env python3
"""Float64 oracle for the engine on MLX's other formats (Tests/PhiEngineTests/Fixtures/engine/
tiny-mx-oracle.json).

    pip install mlx mlx-cpu mlx-lm safetensors numpy     # no torch needed
    python3 scripts/engine/make_mx_oracle.py

For the two tiny random models of tiny_models.py (Phi-3.5-shaped: MHA, untied; Phi-4-mini-
shaped: GQA, partial rotary, tied), in the form mlx-lm runs them (for_mlx: long factors
only, no sliding window), each variant is made by mlx_lm.convert itself: --q-mode mxfp4 /
nvfp4 / mxfp8, --quant-predicate mixed_2_6 / 3_4 / 3_6 / 4_6, and affine 4-bit g64 for
comparison. Its stored weights are dequantized EXACTLY in float64 (fp modes: value * scale;
affine: scale * q + bias, q read back through mlx) and a float64 numpy Phi-3 forward pass
(written here from the architecture, not from phikit) decodes greedily, recomputing the whole
sequence at every step. mlx_lm's own generation computes in the weights' dtype, so it is the
oracle for bytes on disk (tensor sha256s, which phikit must reproduce), not for tokens.

The file keeps, per variant: the quantization object, the tensor hashes, the prompt, the
reference greedy tokens, and at each step the top 8 (id, logit) and the logit spread
(max - min). The Swift test walks phikit's tokens along the reference: each must be the
reference argmax, or within a near-tie (<= 1e-3 of the spread) of it, after which the
contexts differ and the walk stops.
"""
import hashlib
import json
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tiny_models as tm  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
STORIES = os.path.join(ROOT, "models", "stories-260k")
OUT = os.path.join(ROOT, "Tests", "PhiEngineTests", "Fixtures", "engine", "tiny-mx-oracle.json")
SEED, AMPLITUDE = 7, 0.25
PROMPT = [1, 17, 200, 33, 5, 99, 250, 3, 42, 7, 11, 300]
NEW_TOKENS, TOP = 40, 8
VARIANTS = [dict(q_mode="mxfp4"), dict(q_mode="nvfp4"), dict(q_mode="mxfp8"),
            dict(quant_predicate="mixed_2_6"), dict(quant_predicate="mixed_3_4"),
            dict(quant_predicate="mixed_3_6"), dict(quant_predicate="mixed_4_6"),
            dict(q_bits=4, q_group_size=64)]


def write_float_model(directory, cfg, tensors):
    from safetensors.numpy import save_file

    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(dict(cfg, torch_dtype="float32"), f, indent=2)
    save_file({k: np.ascontiguousarray(v) for k, v in tensors.items()},
              os.path.join(directory, "model.safetensors"), metadata={"format": "pt"})
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(os.path.join(STORIES, name), directory)


def load_dequantized(directory):
    """Every tensor as float64, quantized ones dequantized exactly; plus the sha256s (of a
    float model too: then nothing is dequantized)."""
    import mlx.core as mx

    with open(os.path.join(directory, "config.json")) as f:
        config = json.load(f)
    q = config.get("quantization") or {}  # a float model: every tensor as stored
    raw = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".safetensors"):
            raw.update(mx.load(os.path.join(directory, name)))
    hashes = {k: hashlib.sha256(np.array(v.view(mx.uint16) if v.dtype == mx.bfloat16 else v)
                                .tobytes()).hexdigest() for k, v in sorted(raw.items())}
    out = {}
    for name, v in raw.items():
        if name.endswith((".scales", ".biases")):
            continue
        module = name[: -len(".weight")]
        if module + ".scales" not in raw:
            out[name] = np.array(v.astype(mx.float32), dtype=np.float64)
            continue
        layer = q.get(module, q)
        mode = layer.get("mode", "affine")
        group = layer.get("group_size") or q["group_size"]
        bits = layer["bits"]
        scales = raw[module + ".scales"]
        if mode == "affine":
            ones, zeros = mx.ones(scales.shape, mx.float32), mx.zeros(scales.shape, mx.float32)
            codes = np.array(mx.dequantize(v, ones, zeros, group, bits), dtype=np.float64)
            s = np.repeat(np.array(scales.astype(mx.float32), np.float64), group, axis=-1)
            b = np.repeat(np.array(raw[module + ".biases"].astype(mx.float32), np.float64),
                          group, axis=-1)
            out[name] = s * codes + b
        else:  # value * scale is exact in float32
            out[name] = np.array(mx.dequantize(v, scales, None, group, bits, mode,
                                               dtype=mx.float32), dtype=np.float64)
    return config, out, hashes


def rope(x, cos, sin, rd):
    """x [heads, n, hd] rotated on its first rd dims, NeoX halves ("rotate_half")."""
    r, rest = x[..., :rd], x[..., rd:]
    rot = np.concatenate([-r[..., rd // 2:], r[..., : rd // 2]], -1)
    return np.concatenate([r * cos + rot * sin, rest], -1)


def attention(q, k, v):
    """Causal softmax attention, q [heads, n, hd], k/v [kv heads, n, hd] -> [n, heads*hd]."""
    heads, n, hd = q.shape
    k, v = np.repeat(k, heads // k.shape[0], 0), np.repeat(v, heads // v.shape[0], 0)
    s = q @ k.transpose(0, 2, 1) / np.sqrt(hd) + np.triu(np.full((n, n), -np.inf), 1)
    s = np.exp(s - s.max(-1, keepdims=True))
    s /= s.sum(-1, keepdims=True)
    return (s @ v).transpose(1, 0, 2).reshape(n, heads * hd)


def forward(cfg, w, tokens, every_position=False, matmul_input=None):
    """Logits of the last position (or of every position), float64, the whole sequence
    recomputed. matmul_input, if given, is applied to the input of every matrix product
    (act8_fidelity.py rounds activations there to model an engine that quantizes them)."""
    mi = matmul_input or (lambda a: a)
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or heads
    hd = h // heads
    rd = int(hd * cfg.get("partial_rotary_factor", 1.0))
    eps = cfg["rms_norm_eps"]
    sc = cfg.get("rope_scaling") or {"short_factor": [1.0], "long_factor": [1.0]}  # plain RoPE
    orig = cfg.get("original_max_position_embeddings") or cfg["max_position_embeddings"]
    n = len(tokens)
    factors = np.array(sc["long_factor"] if n > orig else sc["short_factor"], np.float64)
    inv = 1.0 / (factors * cfg["rope_theta"] ** (np.arange(0, rd, 2, dtype=np.float64) / rd))
    ratio = cfg["max_position_embeddings"] / orig
    mscale = 1.0 if ratio <= 1 else np.sqrt(1 + np.log(ratio) / np.log(orig))
    ang = np.arange(n, dtype=np.float64)[:, None] * inv[None, :]
    cos = np.concatenate([np.cos(ang)] * 2, -1) * mscale
    sin = np.concatenate([np.sin(ang)] * 2, -1) * mscale

    def norm(x, g):
        return x / np.sqrt(np.mean(x * x, -1, keepdims=True) + eps) * g

    x = w["model.embed_tokens.weight"][tokens]
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        a = norm(x, w[p + "input_layernorm.weight"])
        qkv = mi(a) @ w[p + "self_attn.qkv_proj.weight"].T
        q = qkv[:, : heads * hd].reshape(n, heads, hd).transpose(1, 0, 2)
        k = qkv[:, heads * hd: (heads + kv) * hd].reshape(n, kv, hd).transpose(1, 0, 2)
        v = qkv[:, (heads + kv) * hd:].reshape(n, kv, hd).transpose(1, 0, 2)
        q, k = rope(q, cos, sin, rd), rope(k, cos, sin, rd)
        x = x + mi(attention(q, k, v)) @ w[p + "self_attn.o_proj.weight"].T
        a = norm(x, w[p + "post_attention_layernorm.weight"])
        gu = mi(a) @ w[p + "mlp.gate_up_proj.weight"].T
        inter = gu.shape[-1] // 2
        g, u = gu[:, :inter], gu[:, inter:]
        x = x + mi(g / (1 + np.exp(-g)) * u) @ w[p + "mlp.down_proj.weight"].T
    x = mi(norm(x if every_position else x[-1], w["model.norm.weight"]))
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    return x @ head.T if every_position else head @ x


def greedy(cfg, w, prompt=PROMPT, count=NEW_TOKENS, model=None):
    """Greedy tokens of `model` (default: this file's Phi-3 forward), the whole sequence
    recomputed at each step, with the top logits and the spread at every step."""
    model = model or forward
    seq, steps = list(prompt), []
    for _ in range(count):
        logits = model(cfg, w, seq)
        top = np.argsort(-logits, kind="stable")[:TOP]
        steps.append({"top": [[int(i), float(logits[i])] for i in top],
                      "spread": float(logits.max() - logits.min())})
        seq.append(int(top[0]))
    return seq[len(prompt):], steps


def main():
    from mlx_lm import convert

    result = {"prompt": PROMPT, "seed": SEED, "amplitude": AMPLITUDE, "models": {}}
    with tempfile.TemporaryDirectory() as work:
        for name, cfg in [("phi35", tm.phi35_like()), ("phi4mini", tm.phi4mini_like())]:
            cfg = tm.for_mlx(cfg)
            source = os.path.join(work, name)
            write_float_model(source, cfg, tm.weights(cfg, SEED, AMPLITUDE))
            variants = []
            for options in VARIANTS:
                label = "-".join(str(v) for v in options.values())
                target = os.path.join(work, f"{name}-{label}")
                convert(source, target, quantize=True, **options)
                config, w, hashes = load_dequantized(target)
                tokens, steps = greedy(config, w)
                variants.append({"label": label, "quantization": config["quantization"],
                                 "tensor_sha256": hashes, "greedy": tokens, "steps": steps})
                print(name, label, tokens[:10], file=sys.stderr)
            result["models"][name] = {"config": cfg, "variants": variants}
    import mlx.core as mx
    import mlx_lm

    result["versions"] = {"mlx": mx.__version__, "mlx_lm": mlx_lm.__version__,
                          "numpy": np.__version__}
    with open(OUT, "w") as f:
        json.dump(result, f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT} ({os.path.getsize(OUT)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
