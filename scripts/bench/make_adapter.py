#!/usr/bin/env python3
"""make_adapter.py MODEL_DIR OUT_DIR [--rank R] [--dora] [--seed S]

An mlx-lm adapter folder (adapter_config.json + adapters.safetensors, as mlx_lm.lora writes
them) with pseudo-random float32 factors on every Linear of every layer of MODEL_DIR's
llama/phi3 shape (q/k/v/o or qkv/o, gate/up/down or gate_up/down): what bench_adapter.sh
times `run --adapter-path` with. Python's standard library only."""
import argparse
import json
import os
import random
import struct


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("out")
    p.add_argument("--rank", type=int, default=8)
    p.add_argument("--dora", action="store_true")
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    c = json.load(open(os.path.join(a.model, "config.json")))
    hidden, inter = c["hidden_size"], c["intermediate_size"]
    heads, kv = c["num_attention_heads"], c.get("num_key_value_heads", c["num_attention_heads"])
    head_dim = c.get("head_dim", hidden // heads)
    if c["model_type"] == "phi3":
        shapes = {"self_attn.qkv_proj": (hidden, (heads + 2 * kv) * head_dim),
                  "self_attn.o_proj": (heads * head_dim, hidden),
                  "mlp.gate_up_proj": (hidden, 2 * inter), "mlp.down_proj": (inter, hidden)}
    else:
        shapes = {"self_attn.q_proj": (hidden, heads * head_dim),
                  "self_attn.k_proj": (hidden, kv * head_dim),
                  "self_attn.v_proj": (hidden, kv * head_dim),
                  "self_attn.o_proj": (heads * head_dim, hidden),
                  "mlp.gate_proj": (hidden, inter), "mlp.up_proj": (hidden, inter),
                  "mlp.down_proj": (inter, hidden)}
    layers = c["num_hidden_layers"]
    rng = random.Random(a.seed)
    header, blobs, offset = {}, [], 0

    def add(name, shape, values):
        nonlocal offset
        data = struct.pack("<%df" % len(values), *values)
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)

    r = a.rank
    for layer in range(layers):
        for key, (inputs, outputs) in shapes.items():
            prefix = "model.layers.%d.%s." % (layer, key)
            add(prefix + "lora_a", (inputs, r), [rng.uniform(-1, 1) / inputs ** 0.5 for _ in range(inputs * r)])
            add(prefix + "lora_b", (r, outputs), [rng.uniform(-0.02, 0.02) for _ in range(r * outputs)])
            if a.dora:
                add(prefix + "m", (outputs,), [rng.uniform(0.5, 1.5) for _ in range(outputs)])
    os.makedirs(a.out, exist_ok=True)
    head = json.dumps(header, sort_keys=True).encode()
    head += b" " * (-len(head) % 8)
    with open(os.path.join(a.out, "adapters.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + b"".join(blobs))
    config = {"fine_tune_type": "dora" if a.dora else "lora", "num_layers": layers,
              "lora_parameters": {"rank": r, "scale": 2.0, "dropout": 0.0, "keys": list(shapes)}}
    with open(os.path.join(a.out, "adapter_config.json"), "w") as f:
        json.dump(config, f, indent=2)


if __name__ == "__main__":
    main()
