#!/usr/bin/env python3
"""Writes a tiny random-weight chat model of one Phi shape with the real tokenizer and chat
template from Tests/Fixtures (as the Swift tests' TinyChatModel does): Phi-3.5-mini's (MHA,
untied, 32,064 tokens, SentencePiece) or Phi-4-mini's (GQA 4:2, partial rotary, tied, 200,064
tokens, byte-level BPE). For suite_on_model.py: a model whose weights favour no syntax.

    python3 scripts/structured/random_model.py phi35|phi4mini OUT_DIR [--seed N]
"""
import argparse
import json
import os
import shutil
import struct
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "../..")

SHAPES = {
    "phi35": dict(directory="microsoft--Phi-3.5-mini-instruct", vocab=32064, kv=4, tied=False,
                  eos=32000, ends=[32007, 32001, 32000]),
    "phi4mini": dict(directory="_derived/microsoft--Phi-4-mini-instruct", vocab=200064, kv=2,
                     tied=True, eos=199999, ends=[200020, 199999], rotary=0.75),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("shape", choices=SHAPES)
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    shape = SHAPES[args.shape]
    fixtures = subprocess.run([os.path.join(ROOT, "scripts/fixtures.sh")], check=True,
                              capture_output=True, text=True).stdout.strip()
    os.makedirs(args.out, exist_ok=True)
    for name in ["tokenizer.json", "tokenizer_config.json"]:
        shutil.copy(os.path.join(fixtures, shape["directory"], name), os.path.join(args.out, name))
    hidden, intermediate, heads, layers = 32, 64, 4, 2
    config = {
        "model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "hidden_size": hidden,
        "intermediate_size": intermediate, "num_hidden_layers": layers,
        "num_attention_heads": heads, "num_key_value_heads": shape["kv"],
        "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "torch_dtype": "bfloat16", "vocab_size": shape["vocab"],
        "tie_word_embeddings": shape["tied"], "eos_token_id": shape["eos"],
    }
    if "rotary" in shape:
        config["partial_rotary_factor"] = shape["rotary"]
    json.dump(config, open(os.path.join(args.out, "config.json"), "w"), indent=1)
    json.dump({"eos_token_id": shape["ends"]},
              open(os.path.join(args.out, "generation_config.json"), "w"))

    head_dim = hidden // heads
    tensors = [("model.embed_tokens.weight", [shape["vocab"], hidden])]
    for i in range(layers):
        p = f"model.layers.{i}."
        tensors += [
            (p + "input_layernorm.weight", [hidden]),
            (p + "self_attn.qkv_proj.weight", [(heads + 2 * shape["kv"]) * head_dim, hidden]),
            (p + "self_attn.o_proj.weight", [hidden, hidden]),
            (p + "post_attention_layernorm.weight", [hidden]),
            (p + "mlp.gate_up_proj.weight", [2 * intermediate, hidden]),
            (p + "mlp.down_proj.weight", [hidden, intermediate]),
        ]
    tensors.append(("model.norm.weight", [hidden]))
    if not shape["tied"]:
        tensors.append(("lm_head.weight", [shape["vocab"], hidden]))

    rng = np.random.default_rng(args.seed)
    header, blobs, offset = {"__metadata__": {"format": "pt"}}, [], 0
    for name, dims in tensors:
        values = rng.uniform(-0.5, 0.5, size=dims).astype(np.float32)
        if "norm" in name:
            values = 1 + values * 0.5
        bf16 = (values.view(np.uint32) >> 16).astype("<u2").tobytes()
        header[name] = {"dtype": "BF16", "shape": dims, "data_offsets": [offset, offset + len(bf16)]}
        blobs.append(bf16)
        offset += len(bf16)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(os.path.join(args.out, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    print(args.out)


if __name__ == "__main__":
    main()
