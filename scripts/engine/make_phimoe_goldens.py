#!/usr/bin/env python3
"""Golden file for the phimoe (Phi-3.5-MoE) engine and convert tests
(Tests/PhiEngineTests/Fixtures/engine/tiny-phimoe.json).

    python3 scripts/engine/make_phimoe_goldens.py      # torch, transformers, mlx, mlx-lm

For each tiny random model of tiny_models.py (phimoe_16x2, phimoe_4x2; weights rebuilt by the
Swift tests from the seed, in the Hugging Face per-expert layout):
- transformers' PhimoeForCausalLM in float32: last-position logits of a prompt shorter and one
  longer than original_max_position_embeddings, and greedy continuations (model.generate) that
  cross it. transformers 5.x computes LongRoPE's inverse frequencies without the sequence
  length (`self.rope_init_fn(self.config)`), so it rotates with the short factors at every
  length and only switches the mscale; transformers 4.x and Microsoft's own modeling_phimoe.py
  pass the length and switch factors and mscale together. `fix_rope` restores that (what
  phikit implements); `unpatched_long_logits` records what 5.x gives past the switch.
- mlx_lm.convert (float, and quantized at two bit widths): the sha256 of every output tensor
  (phikit's convert must write the same bytes, stacking the per-expert weights as mlx-lm's
  sanitize does) and a float64 numpy forward pass over the stored weights dequantized
  exactly, decoding greedily (whole sequence recomputed each step), keeping per step the top 8
  (id, logit) and the logit spread, as make_mx_oracle.py does for phi3.
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

SEED, AMPLITUDE = 7, 0.25
SHORT_PROMPT = eg.SHORT_PROMPT
LONG_PROMPT = [1] + [int(x) for x in np.random.default_rng(5).integers(3, 300, 39)]
# (name, config, mlx_lm.convert variants (bits, group), seed)
# A variant is (bits, group) or a dict of mlx_lm.convert options (modes and mixed recipes).
MODELS = [("phimoe16x2", tm.phimoe_16x2,
           [(4, 64), (8, 64), dict(q_mode="mxfp4"), dict(quant_predicate="mixed_3_6")], SEED),
          ("phimoe4x2", tm.phimoe_4x2, [(4, 32), (8, 128)], SEED),
          ("phimoe16x2-seed11", tm.phimoe_16x2, [], 11)]


def fix_rope():
    """transformers 4.x's PhimoeRotaryEmbedding.forward: factors and mscale by length."""
    from transformers.models.phimoe import modeling_phimoe as mp

    def forward(self, x, position_ids=None):
        seq_len = int(torch.max(position_ids)) + 1
        p = self.config.rope_parameters
        long = seq_len > p["original_max_position_embeddings"]
        mscale = p["long_mscale"] if long else p["short_mscale"]
        inv_freq, _ = self.rope_init_fn(self.config, x.device, seq_len=seq_len)
        freqs = position_ids[..., None].float() * inv_freq.to(device=x.device, dtype=torch.float)
        emb = torch.cat((freqs, freqs), dim=-1)
        return (emb.cos() * mscale).to(x.dtype), (emb.sin() * mscale).to(x.dtype)

    original = mp.PhimoeRotaryEmbedding.forward
    mp.PhimoeRotaryEmbedding.forward = forward
    return lambda: setattr(mp.PhimoeRotaryEmbedding, "forward", original)


# ---- float64 reference of phimoe (written from the architecture, not from phikit) ---------

def sparsemixer(s, eps, top_k):
    """transformers' sparsemixer at inference, per token: indices and weights."""
    masked = s.copy()
    inds, weights = [], []
    for _ in range(top_k):
        i = int(np.argmax(masked))
        top = masked[i]
        factor = np.maximum(np.abs(s), top)
        with np.errstate(invalid="ignore", divide="ignore"):
            band = np.where((top - s) / factor > 2 * eps, -np.inf, masked)
        band = np.exp(band - band.max())
        weights.append(band[i] / band.sum())
        inds.append(i)
        masked[i] = -np.inf
    return inds, weights


def forward(cfg, w, tokens):
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or heads
    hd = h // heads
    eps = cfg["rms_norm_eps"]
    sc = cfg["rope_scaling"]
    orig = sc.get("original_max_position_embeddings", cfg["original_max_position_embeddings"])
    n = len(tokens)
    long = n > orig
    factors = np.array(sc["long_factor"] if long else sc["short_factor"], np.float64)
    inv = 1.0 / (factors * cfg["rope_theta"] ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
    mscale = sc["long_mscale"] if long else sc["short_mscale"]
    ang = np.arange(n, dtype=np.float64)[:, None] * inv[None, :]
    cos = np.concatenate([np.cos(ang)] * 2, -1) * mscale
    sin = np.concatenate([np.sin(ang)] * 2, -1) * mscale

    def norm(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w[p + ".weight"] + w[p + ".bias"]

    def linear(x, p):
        y = x @ w[p + ".weight"].T
        return y + w[p + ".bias"] if p + ".bias" in w else y

    def rope(x):
        rot = np.concatenate([-x[..., hd // 2:], x[..., : hd // 2]], -1)
        return x * cos + rot * sin

    x = w["model.embed_tokens.weight"][tokens]
    window = cfg.get("sliding_window")
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    allowed = (j <= i) & ((i - j < window) if window else True)
    mask = np.where(allowed, 0.0, -np.inf)
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        a = norm(x, p + "input_layernorm")
        q = linear(a, p + "self_attn.q_proj").reshape(n, heads, hd).transpose(1, 0, 2)
        k = linear(a, p + "self_attn.k_proj").reshape(n, kv, hd).transpose(1, 0, 2)
        v = linear(a, p + "self_attn.v_proj").reshape(n, kv, hd).transpose(1, 0, 2)
        q, k = rope(q), rope(k)
        k, v = np.repeat(k, heads // kv, 0), np.repeat(v, heads // kv, 0)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hd) + mask
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        o = (s @ v).transpose(1, 0, 2).reshape(n, heads * hd)
        x = x + linear(o, p + "self_attn.o_proj")
        a = norm(x, p + "post_attention_layernorm")
        gates = linear(a, p + "block_sparse_moe.gate")
        moe = np.zeros_like(x)
        sw = p + "block_sparse_moe.switch_mlp."
        for t in range(n):
            inds, weights = sparsemixer(gates[t], cfg["router_jitter_noise"],
                                        cfg["num_experts_per_tok"])
            for e, r in zip(inds, weights):
                g = w[sw + "gate_proj.weight"][e] @ a[t]
                u = w[sw + "up_proj.weight"][e] @ a[t]
                moe[t] += r * (w[sw + "down_proj.weight"][e] @ (g / (1 + np.exp(-g)) * u))
        x = x + moe
    return linear(norm(x[-1:], "model.norm"), "lm_head")[0]


# ---- the golden set -------------------------------------------------------------------------

def model_case(work, name, cfg, variants, seed):
    tensors = tm.phimoe_weights(cfg, seed, AMPLITUDE)
    source = os.path.join(work, name)
    tm.write_phimoe(source, cfg, tensors)
    eg.add_tokenizer(source)
    result = {"config": cfg, "seed": seed}

    model = eg.hf_load(source)
    with torch.no_grad():
        result["unpatched_long_logits"] = eg.floats(
            model(torch.tensor([LONG_PROMPT])).logits[0, -1])
    restore = fix_rope()
    try:
        result["float32"] = [eg.hf_case(model, SHORT_PROMPT, mo.NEW_TOKENS),
                             eg.hf_case(model, LONG_PROMPT, mo.NEW_TOKENS)]
    finally:
        restore()
    # The float64 reference must agree with (fixed) transformers on the float weights.
    own = forward(cfg, {k: v.astype(np.float64) for k, v in tensors.items()}, LONG_PROMPT)
    ref = np.array(result["float32"][1]["last_logits"])
    assert np.max(np.abs(own - ref)) <= 1e-4 * np.max(np.abs(ref)), np.max(np.abs(own - ref))

    result["mlx"] = []
    from mlx_lm import convert

    for variant in [None] + variants:
        target = os.path.join(work, f"{name}-{len(result['mlx'])}")
        if variant is None:
            convert(source, target)
            _, _, hashes = mo.load_dequantized(target)
            result["mlx"].append({"quantization": None, "tensor_sha256": hashes})
            continue
        options = variant if isinstance(variant, dict) else dict(
            q_bits=variant[0], q_group_size=variant[1])
        convert(source, target, quantize=True, **options)
        config, w, hashes = mo.load_dequantized(target)
        tokens, steps = mo.greedy(config, w, SHORT_PROMPT, model=forward)
        result["mlx"].append({"options": options, "quantization": config["quantization"],
                              "tensor_sha256": hashes,
                              "prompt": SHORT_PROMPT, "greedy": tokens, "steps": steps})
        print(name, options, tokens[:12], file=sys.stderr)
    return result


def main():
    torch.manual_seed(0)
    out = {"seed": SEED, "amplitude": AMPLITUDE, "models": {}}
    with tempfile.TemporaryDirectory() as work:
        for name, make, variants, seed in MODELS:
            out["models"][name] = model_case(work, name, make(), variants, seed)
    eg.write("tiny-phimoe.json", out)


if __name__ == "__main__":
    main()
