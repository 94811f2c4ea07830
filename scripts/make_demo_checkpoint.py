#!/usr/bin/env python3
"""Writes a small Phi-3-shaped Hugging Face checkpoint with random bf16 weights.

The built-in default of `make demo`: something real to convert on a machine with nothing
downloaded. Python standard library only (a fresh Debian has python3 but not numpy), so the
safetensors file is laid out by hand: 8-byte little-endian header length, JSON header padded
with spaces to 8 bytes, then the tensors' bytes in header order.

usage: make_demo_checkpoint.py OUT_DIR [--seed N]
"""
import argparse
import json
import os
import random
import struct

HIDDEN, INTERMEDIATE, LAYERS, HEADS, VOCAB = 256, 512, 2, 4, 1024

CONFIG = {
    "architectures": ["Phi3ForCausalLM"],
    "model_type": "phi3",
    "hidden_size": HIDDEN,
    "intermediate_size": INTERMEDIATE,
    "num_hidden_layers": LAYERS,
    "num_attention_heads": HEADS,
    "num_key_value_heads": HEADS,
    "vocab_size": VOCAB,
    "max_position_embeddings": 4096,
    "original_max_position_embeddings": 4096,
    "rms_norm_eps": 1e-05,
    "rope_theta": 10000.0,
    "rope_scaling": None,
    "tie_word_embeddings": False,
    "bos_token_id": 1,
    "eos_token_id": 2,
    "torch_dtype": "bfloat16",
}


def tensor_shapes():
    """HF names and shapes of a Phi-3 checkpoint (fused qkv and gate_up projections)."""
    yield "model.embed_tokens.weight", [VOCAB, HIDDEN]
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        yield p + "input_layernorm.weight", [HIDDEN]
        yield p + "self_attn.qkv_proj.weight", [3 * HIDDEN, HIDDEN]
        yield p + "self_attn.o_proj.weight", [HIDDEN, HIDDEN]
        yield p + "post_attention_layernorm.weight", [HIDDEN]
        yield p + "mlp.gate_up_proj.weight", [2 * INTERMEDIATE, HIDDEN]
        yield p + "mlp.down_proj.weight", [HIDDEN, INTERMEDIATE]
    yield "model.norm.weight", [HIDDEN]
    yield "lm_head.weight", [VOCAB, HIDDEN]


def bf16_bytes(count, rng, is_norm):
    """`count` bf16 values, N(0, 0.02) (norm weights near 1), rounded to nearest even."""
    out = bytearray(2 * count)
    for i in range(count):
        x = 1.0 + rng.gauss(0.0, 0.02) if is_norm else rng.gauss(0.0, 0.02)
        bits = struct.unpack("<I", struct.pack("<f", x))[0]
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        struct.pack_into("<H", out, 2 * i, bits)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, shape in tensor_shapes():
        count = 1
        for d in shape:
            count *= d
        blobs.append(bf16_bytes(count, rng, name.endswith("norm.weight")))
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + 2 * count]}
        offset += 2 * count
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)

    os.makedirs(args.out_dir, exist_ok=True)
    with open(os.path.join(args.out_dir, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for blob in blobs:
            f.write(blob)
    with open(os.path.join(args.out_dir, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2)


if __name__ == "__main__":
    main()
