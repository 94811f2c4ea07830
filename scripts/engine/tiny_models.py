"""Tiny random-weight Phi-3 and phi models, defined so that Swift can rebuild them bit for bit.

The engine tests (Tests/PhiEngineTests/Model/TinyModels.swift) regenerate the same weights at
test time from the seed, so no weights are committed. The generator:

    mix(z)  = splitmix64's finalizer (Steele, Lea, Flood 2014)
    r(k, i) = 2 * (mix(seed * 0x9E3779B97F4A7C15 + (k << 32) + i) >> 40) / 2^24 - 1
              (uint64 arithmetic wraps; r is in [-1, 1) and exact in float32)
    weight  = float32(r) * float32(amplitude)         linear and embedding weights
    norm    = float32(1) + float32(r) * float32(0.25)  RMSNorm/LayerNorm weights
    bias    = float32(r) * float32(0.1)                Linear and LayerNorm biases (phi)

k is the tensor's index in the Phi-3 tensor order (embed_tokens; per layer input_layernorm,
qkv_proj, o_proj, post_attention_layernorm, gate_up_proj, down_proj; norm; lm_head unless
tied; for phi, phi_tensor_shapes' order), i the element's index in row-major order.
"""

import json
import os

import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix(z):
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def uniform(seed, k, n):
    """r(k, i) for i < n, float32 in [-1, 1)."""
    with np.errstate(over="ignore"):
        base = np.uint64(seed) * GOLDEN + (np.uint64(k) << np.uint64(32))
        z = mix(base + np.arange(n, dtype=np.uint64))
    u = (z >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)
    return np.float32(2) * u - np.float32(1)


def tensor_shapes(cfg):
    """(name, shape) in the order the generator numbers them (TinyModels.weights in PhiEngineTests)."""
    h, i, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    heads, kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads") or cfg["num_attention_heads"]
    hd = h // heads
    out = [("model.embed_tokens.weight", [v, h])]
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        out += [
            (p + "input_layernorm.weight", [h]),
            (p + "self_attn.qkv_proj.weight", [(heads + 2 * kv) * hd, h]),
            (p + "self_attn.o_proj.weight", [h, heads * hd]),
            (p + "post_attention_layernorm.weight", [h]),
            (p + "mlp.gate_up_proj.weight", [2 * i, h]),
            (p + "mlp.down_proj.weight", [h, i]),
        ]
    out.append(("model.norm.weight", [h]))
    if not cfg.get("tie_word_embeddings", False):
        out.append(("lm_head.weight", [v, h]))
    return out


def phi_tensor_shapes(cfg):
    """(name, shape) of a model_type phi model in mlx's order, each module's weight then its
    bias: embed_tokens; per layer q/k/v_proj, dense, (q/k_layernorm), input_layernorm, fc1,
    fc2; final_layernorm; lm_head. The generator numbers every one of them, biases included."""
    h, i, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    heads, kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads") or cfg["num_attention_heads"]
    hd = h // heads
    modules = [("model.embed_tokens", [v, h], False)]
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        modules += [(p + "self_attn.q_proj", [heads * hd, h], True),
                    (p + "self_attn.k_proj", [kv * hd, h], True),
                    (p + "self_attn.v_proj", [kv * hd, h], True),
                    (p + "self_attn.dense", [h, heads * hd], True)]
        if cfg.get("qk_layernorm"):
            modules += [(p + "self_attn.q_layernorm", [hd], True),
                        (p + "self_attn.k_layernorm", [hd], True)]
        modules += [(p + "input_layernorm", [h], True), (p + "mlp.fc1", [i, h], True),
                    (p + "mlp.fc2", [h, i], True)]
    modules += [("model.final_layernorm", [h], True), ("lm_head", [v, h], True)]
    out = []
    for path, shape, bias in modules:
        out.append((path + ".weight", shape))
        if bias:
            out.append((path + ".bias", shape[:1]))
    return out


def llama_tensor_shapes(cfg):
    """(name, shape) of a model_type llama model in mlx's (LlamaSchema's) order: embed_tokens;
    per layer q/k/v/o_proj, gate_proj, down_proj, up_proj, input_layernorm,
    post_attention_layernorm; norm; lm_head unless tied."""
    h, i, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    heads, kv = cfg["num_attention_heads"], cfg.get("num_key_value_heads") or cfg["num_attention_heads"]
    hd = h // heads
    out = [("model.embed_tokens.weight", [v, h])]
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        out += [(p + "self_attn.q_proj.weight", [heads * hd, h]),
                (p + "self_attn.k_proj.weight", [kv * hd, h]),
                (p + "self_attn.v_proj.weight", [kv * hd, h]),
                (p + "self_attn.o_proj.weight", [h, heads * hd]),
                (p + "mlp.gate_proj.weight", [i, h]), (p + "mlp.down_proj.weight", [h, i]),
                (p + "mlp.up_proj.weight", [i, h]),
                (p + "input_layernorm.weight", [h]), (p + "post_attention_layernorm.weight", [h])]
    out.append(("model.norm.weight", [h]))
    if not cfg.get("tie_word_embeddings", False):
        out.append(("lm_head.weight", [v, h]))
    return out


def weights(cfg, seed, amplitude):
    """name -> float32 numpy array. Biases (phi only) are r * 0.1."""
    out = {}
    shapes = {"phi": phi_tensor_shapes, "llama": llama_tensor_shapes}.get(
        cfg["model_type"], tensor_shapes)(cfg)
    for k, (name, shape) in enumerate(shapes):
        r = uniform(seed, k, int(np.prod(shape))).reshape(shape)
        if name.endswith(".bias"):
            out[name] = r * np.float32(0.1)
        elif "norm" in name:
            out[name] = np.float32(1) + r * np.float32(0.25)
        else:
            out[name] = r * np.float32(amplitude)
    return out


def phi_config(**sizes):
    """A model_type phi config.json (transformers' PhiConfig fields), then `sizes`."""
    return {
        "architectures": ["PhiForCausalLM"], "model_type": "phi", "max_position_embeddings": 128,
        "rope_theta": 10000.0, "layer_norm_eps": 1e-05, "bos_token_id": 1, "eos_token_id": 2,
        "hidden_act": "gelu_new", "attention_dropout": 0.0, "resid_pdrop": 0.0,
        "embd_pdrop": 0.0, "qk_layernorm": False, "tie_word_embeddings": False,
        "torch_dtype": "float32", "use_cache": True, **sizes,
    }


def phi2_like():
    """Phi-2's proportions: MHA, partial rotary 0.4 (head_dim 32 -> 12 rotated dims)."""
    return phi_config(hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=4, vocab_size=384,
                      partial_rotary_factor=0.4)


def phi15_qk_like():
    """Phi-1.5's rotary 0.5, plus qk_layernorm and grouped keys (6:2), 3 layers, head_dim 16
    (transformers only: mlx-lm's phi.py has no q/k layernorm)."""
    return phi_config(hidden_size=96, intermediate_size=160, num_hidden_layers=3,
                      num_attention_heads=6, num_key_value_heads=2, vocab_size=400,
                      partial_rotary_factor=0.5, qk_layernorm=True, layer_norm_eps=1e-06)


def phi_wide_head():
    """head_dim 40 with rotary 0.4 (16 dims, as Phi-2's 80 -> 32), GQA 4:2, rotary 0.4."""
    return phi_config(hidden_size=160, intermediate_size=320, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, vocab_size=384,
                      partial_rotary_factor=0.4)


def llama_config(**sizes):
    """A model_type llama config.json (transformers' LlamaConfig fields), then `sizes`."""
    return {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "max_position_embeddings": 128, "rope_theta": 10000.0, "rms_norm_eps": 1e-05,
        "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu", "attention_bias": False,
        "attention_dropout": 0.0, "mlp_bias": False, "pretraining_tp": 1, "rope_scaling": None,
        "torch_dtype": "float32", "use_cache": True, **sizes,
    }


def llama_smol_like():
    """SmolLM2's proportions: GQA 3:1, tied embeddings, rope_theta 100000."""
    return llama_config(hidden_size=96, intermediate_size=256, num_hidden_layers=2,
                        num_attention_heads=6, num_key_value_heads=2, vocab_size=384,
                        rope_theta=100000.0, tie_word_embeddings=True)


def llama3_scaled():
    """Llama 3.x's rope scaling (`llama3`, factor 8) with a trained context of 64 so that
    the 16 frequencies of head_dim 32 fall in all three bands (kept, blended, divided);
    GQA 4:1, untied, three layers, rope_theta 500000."""
    return llama_config(hidden_size=128, intermediate_size=192, num_hidden_layers=3,
                        num_attention_heads=4, num_key_value_heads=1, vocab_size=384,
                        rope_theta=500000.0, max_position_embeddings=256,
                        rope_scaling={"rope_type": "llama3", "factor": 8.0,
                                      "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                      "original_max_position_embeddings": 64},
                        tie_word_embeddings=False)


def longrope_factors(n, short_step, long_step):
    short = [round(1.0 + short_step * i, 4) for i in range(n)]
    long = [round(1.0 + long_step * i, 4) for i in range(n)]
    return short, long


def phi3_config(**sizes):
    """A phi3 config.json with the fields every tiny model shares, then `sizes`."""
    return {
        "architectures": ["Phi3ForCausalLM"], "model_type": "phi3",
        "max_position_embeddings": 128, "original_max_position_embeddings": 32,
        "rope_theta": 10000.0, "rms_norm_eps": 1e-05, "bos_token_id": 1, "eos_token_id": 2,
        "pad_token_id": 0, "hidden_act": "silu", "attention_dropout": 0.0, "resid_pdrop": 0.0,
        "embd_pdrop": 0.0, "torch_dtype": "float32", "use_cache": True, **sizes,
    }


def phi35_like():
    """MHA, LongRoPE with different short and long factors, untied, a sliding window."""
    short, long = longrope_factors(16, 0.03, 0.5)  # rope dim 32 -> 16 factors
    return phi3_config(
        hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=4, vocab_size=384, partial_rotary_factor=1.0,
        rope_scaling={"type": "longrope", "short_factor": short, "long_factor": long},
        tie_word_embeddings=False, sliding_window=48)


def phi4mini_like():
    """GQA 8:2, partial rotary 0.75, tied embeddings, LongRoPE, no sliding window."""
    short, long = longrope_factors(6, 0.05, 0.8)  # head_dim 16 * 0.75 = 12 -> 6 factors
    return phi3_config(
        hidden_size=128, intermediate_size=192, num_hidden_layers=2, num_attention_heads=8,
        num_key_value_heads=2, vocab_size=400, partial_rotary_factor=0.75,
        rope_scaling={"type": "longrope", "short_factor": short, "long_factor": long},
        tie_word_embeddings=True, sliding_window=None)


def for_mlx(cfg):
    """The same model as mlx-lm runs it: mlx-lm always applies the long factors and ignores
    sliding_window, so compare only where that makes no difference."""
    cfg = json.loads(json.dumps(cfg))
    cfg["rope_scaling"]["short_factor"] = list(cfg["rope_scaling"]["long_factor"])
    cfg["sliding_window"] = None
    return cfg


def write_model(directory, cfg, tensors, dtype="float32"):
    """A Hugging Face style directory: config.json + model.safetensors."""
    import torch
    from safetensors.torch import save_file

    os.makedirs(directory, exist_ok=True)
    cfg = dict(cfg, torch_dtype=dtype)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
    tdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    save_file(
        {k: torch.from_numpy(v).to(tdtype).contiguous() for k, v in tensors.items()},
        os.path.join(directory, "model.safetensors"), metadata={"format": "pt"})
    return cfg


# ---- phimoe (Phi-3.5-MoE) ------------------------------------------------------------------
#
# k numbers the tensors of the STACKED (mlx) layout in mlx's save order: embed_tokens; per
# layer q/k/v/o_proj (weight, bias each), block_sparse_moe.gate, switch_mlp.gate_proj,
# up_proj, down_proj ([experts, out, in]), input_layernorm (weight, bias),
# post_attention_layernorm (weight, bias); norm (weight, bias); lm_head (weight, bias).
# Norm weights are 1 + 0.25 r, every other tensor (biases included) amplitude * r. The
# Hugging Face layout (experts.E.w1 = gate_proj[E], w2 = down_proj[E], w3 = up_proj[E]) is
# the same numbers sliced per expert.

def phimoe_tensor_shapes(cfg):
    """(name, shape) of the stacked layout in generator order (PhiMoESchema's order)."""
    h, i, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    heads = cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or heads
    hd = h // heads
    e = cfg["num_local_experts"]
    attn_bias = cfg.get("attention_bias", False)
    out = [("model.embed_tokens.weight", [v, h])]
    for layer in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        for name, rows in [("q_proj", heads * hd), ("k_proj", kv * hd), ("v_proj", kv * hd),
                           ("o_proj", h)]:
            cols = heads * hd if name == "o_proj" else h
            out.append((p + f"self_attn.{name}.weight", [rows, cols]))
            if attn_bias:
                out.append((p + f"self_attn.{name}.bias", [rows]))
        out += [
            (p + "block_sparse_moe.gate.weight", [e, h]),
            (p + "block_sparse_moe.switch_mlp.gate_proj.weight", [e, i, h]),
            (p + "block_sparse_moe.switch_mlp.up_proj.weight", [e, i, h]),
            (p + "block_sparse_moe.switch_mlp.down_proj.weight", [e, h, i]),
            (p + "input_layernorm.weight", [h]), (p + "input_layernorm.bias", [h]),
            (p + "post_attention_layernorm.weight", [h]),
            (p + "post_attention_layernorm.bias", [h]),
        ]
    out += [("model.norm.weight", [h]), ("model.norm.bias", [h]), ("lm_head.weight", [v, h])]
    if cfg.get("lm_head_bias", False):
        out.append(("lm_head.bias", [v]))
    return out


def phimoe_weights(cfg, seed, amplitude):
    """name -> float32 numpy array, stacked (mlx) layout."""
    out = {}
    for k, (name, shape) in enumerate(phimoe_tensor_shapes(cfg)):
        r = uniform(seed, k, int(np.prod(shape))).reshape(shape)
        if "norm.weight" in name:
            out[name] = np.float32(1) + r * np.float32(0.25)
        else:
            out[name] = r * np.float32(amplitude)
    return out


def phimoe_hf_layout(tensors):
    """The Hugging Face checkpoint layout of stacked tensors: one w1/w2/w3 per expert."""
    out = {}
    names = {"gate_proj": "w1", "down_proj": "w2", "up_proj": "w3"}
    for name, value in tensors.items():
        if ".switch_mlp." not in name:
            out[name] = value
            continue
        prefix, rest = name.split(".switch_mlp.")
        proj = rest.split(".")[0]
        for e in range(value.shape[0]):
            out[f"{prefix}.experts.{e}.{names[proj]}.weight"] = np.ascontiguousarray(value[e])
    return out


def phimoe_config(**sizes):
    """A phimoe config.json shaped like Phi-3.5-MoE-instruct's (biases on, LongRoPE with
    explicit mscales), then `sizes`."""
    return {
        "architectures": ["PhimoeForCausalLM"], "model_type": "phimoe",
        "max_position_embeddings": 128, "original_max_position_embeddings": 32,
        "rope_theta": 10000.0, "rms_norm_eps": 1e-05, "bos_token_id": 1, "eos_token_id": 2,
        "hidden_act": "silu", "attention_dropout": 0.0, "attention_bias": True,
        "lm_head_bias": True, "num_experts_per_tok": 2, "input_jitter_noise": 0.0,
        "torch_dtype": "float32", "tie_word_embeddings": False, "use_cache": True, **sizes,
    }


def phimoe_longrope(n, short_step, long_step, short_mscale, long_mscale):
    short, long = longrope_factors(n, short_step, long_step)
    return {"type": "longrope", "short_factor": short, "long_factor": long,
            "short_mscale": short_mscale, "long_mscale": long_mscale,
            "original_max_position_embeddings": 32}


def phimoe_16x2():
    """16 experts, 2 per token as Phi-3.5-MoE; GQA 4:2; router_jitter_noise 0.01."""
    return phimoe_config(
        hidden_size=64, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, vocab_size=384, num_local_experts=16, router_jitter_noise=0.01,
        rope_scaling=phimoe_longrope(8, 0.03, 0.5, 1.2, 1.35), sliding_window=None)


def phimoe_4x2():
    """4 experts, MHA, three layers, a wide jitter band (0.3) so several experts often share
    the softmax of a routing weight, a sliding window."""
    return phimoe_config(
        hidden_size=128, intermediate_size=64, num_hidden_layers=3, num_attention_heads=4,
        num_key_value_heads=4, vocab_size=320, num_local_experts=4, router_jitter_noise=0.3,
        rope_scaling=phimoe_longrope(16, 0.05, 0.8, 1.1, 1.3), sliding_window=40)


def write_phimoe(directory, cfg, tensors, dtype="float32"):
    """A Hugging Face style phimoe directory (per-expert w1/w2/w3)."""
    return write_model(directory, cfg, phimoe_hf_layout(tensors), dtype)
