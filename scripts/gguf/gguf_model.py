"""Shared by make_model_goldens.py and check_models.py: a phi3 GGUF's stored values under their
Hugging Face names, and a phikit output's values read back, both as float32 numpy arrays.
"""
from pathlib import Path

import gguf
import numpy as np
from gguf.quants import dequantize

HF = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head",
      "attn_norm": "input_layernorm", "attn_qkv": "self_attn.qkv_proj",
      "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
      "ffn_up": "mlp.gate_up_proj", "ffn_down": "mlp.down_proj"}


# llama's separate projections, fused in this order into phi3's qkv_proj / gate_up_proj.
FUSED = {"attn_q": ("attn_qkv", 0), "attn_k": ("attn_qkv", 1), "attn_v": ("attn_qkv", 2),
         "ffn_gate": ("ffn_up", 0), "ffn_up": ("ffn_up", 1)}


def unpermute(w, heads):
    """Undo llama.cpp's convert-time Q/K row permutation (LlamaModel.permute) for `heads`."""
    return w.reshape(heads, w.shape[0] // heads // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def stored(path):
    """{HF phi3 name: (float32 values as gguf.quants.dequantize gives them, GGML type name)} of
    a phi3 GGUF, or of a llama one in phi3's layout (Q/K rows un-permuted, q/k/v and gate/up
    fused, the type then "Q4_0+Q4_0+Q4_0"); rope factors skipped (config, not weights)."""
    r = gguf.GGUFReader(str(path))
    arch = r.fields["general.architecture"].contents()
    heads = r.fields[f"{arch}.attention.head_count"].contents()
    kv_heads = r.fields[f"{arch}.attention.head_count_kv"].contents()
    out, parts_of = {}, {}
    for t in r.tensors:
        parts = t.name.split(".")
        shape = tuple(int(x) for x in reversed(t.shape))
        v = dequantize(t.data, t.tensor_type).astype(np.float32).reshape(shape)
        if arch == "llama" and parts[0] == "blk" and parts[2] in FUSED:
            if parts[2] in ("attn_q", "attn_k"):
                v = unpermute(v, heads if parts[2] == "attn_q" else kv_heads)
            fused, index = FUSED[parts[2]]
            parts_of.setdefault(f"model.layers.{parts[1]}.{HF[fused]}.weight", {})[index] = \
                (v, t.tensor_type.name)
            continue
        if parts[0] == "blk":
            name = f"model.layers.{parts[1]}.{HF[parts[2]]}.weight"
        elif parts[0] in HF:
            name = HF[parts[0]] + ".weight"
        else:
            continue
        out[name] = (v, t.tensor_type.name)
    for name, pieces in parts_of.items():
        ordered = [pieces[i] for i in sorted(pieces)]
        out[name] = (np.concatenate([v for v, _ in ordered]), "+".join(t for _, t in ordered))
    return out


def converted(directory, cfg):
    """{name: float32 values} of a phikit output (affine: scale*q + bias in float32)."""
    from safetensors.numpy import load_file

    w = {}
    for f in sorted(Path(directory).glob("*.safetensors")):
        w.update(load_file(str(f)))
    q = cfg.get("quantization") or {}
    out = {}
    for name, v in w.items():
        if name.endswith((".scales", ".biases")):
            continue
        base = name[: -len(".weight")]
        if base + ".scales" not in w:
            out[name] = v.astype(np.float32)
            continue
        bits = (q.get(base) or q)["bits"]
        words = v.astype("<u4")
        rows = words.shape[0]
        bitstream = np.unpackbits(words.view(np.uint8).reshape(rows, -1), axis=1, bitorder="little")
        codes = bitstream.reshape(rows, -1, bits) @ (1 << np.arange(bits))
        scales = w[base + ".scales"].astype(np.float32)
        biases = w[base + ".biases"].astype(np.float32)
        g = codes.shape[1] // scales.shape[1]
        out[name] = (np.repeat(scales, g, axis=1) * codes.astype(np.float32)
                     + np.repeat(biases, g, axis=1)).astype(np.float32)
    return out


# phi2 GGUF names → Hugging Face model_type phi (each with .weight and .bias).
PHI2 = {"token_embd": "model.embed_tokens", "output_norm": "model.final_layernorm",
        "output": "lm_head", "attn_norm": "input_layernorm", "attn_q": "self_attn.q_proj",
        "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
        "attn_output": "self_attn.dense", "ffn_up": "mlp.fc1", "ffn_down": "mlp.fc2"}


def stored_phi2(path):
    """{HF phi name: (float32 values as gguf.quants.dequantize gives them, GGML type name,
    GGUF tensor name)} of a phi2 GGUF; a fused attn_qkv (weight and bias) split by rows into
    q_proj, k_proj, v_proj as llama.cpp's build_phi2 reads it."""
    r = gguf.GGUFReader(str(path))
    heads = int(r.fields["phi2.attention.head_count"].contents())
    kv = int(r.fields["phi2.attention.head_count_kv"].contents())
    out = {}
    for t in r.tensors:
        parts = t.name.split(".")
        shape = tuple(int(x) for x in reversed(t.shape))
        v = dequantize(t.data, t.tensor_type).astype(np.float32).reshape(shape)
        kind = parts[-1]
        if parts[0] != "blk":
            out[f"{PHI2[parts[0]]}.{kind}"] = (v, t.tensor_type.name, t.name)
            continue
        p = f"model.layers.{parts[1]}."
        if parts[2] == "attn_qkv":
            q = v.shape[0] * heads // (heads + 2 * kv)
            k = v.shape[0] * kv // (heads + 2 * kv)
            for name, share in (("q_proj", v[:q]), ("k_proj", v[q:q + k]), ("v_proj", v[q + k:])):
                out[f"{p}self_attn.{name}.{kind}"] = (share, t.tensor_type.name, t.name)
            continue
        out[f"{p}{PHI2[parts[2]]}.{kind}"] = (v, t.tensor_type.name, t.name)
    return out
