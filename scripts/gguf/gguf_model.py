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


def stored(path):
    """{HF name: (float32 values as gguf.quants.dequantize gives them, GGML type name)} of a
    phi3 GGUF (rope factors skipped: they are config, not weights)."""
    out = {}
    for t in gguf.GGUFReader(str(path)).tensors:
        parts = t.name.split(".")
        if parts[0] == "blk":
            name = f"model.layers.{parts[1]}.{HF[parts[2]]}.weight"
        elif parts[0] in HF:
            name = HF[parts[0]] + ".weight"
        else:
            continue
        shape = tuple(int(x) for x in reversed(t.shape))
        out[name] = (dequantize(t.data, t.tensor_type).astype(np.float32).reshape(shape),
                     t.tensor_type.name)
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
