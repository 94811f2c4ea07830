#!/usr/bin/env python3
"""A Phi-3.5-mini-shaped GGUF (arch phi3) with random Q4_0 blocks, for timing `phikit convert`.

    python3 scripts/gguf/make_random_gguf.py OUT.gguf [--config CONFIG] [--tokenizer-dir DIR]

Shapes, LongRoPE factors and hyperparameters from the config (default: the Phi-3.5-mini
fixture); the vocabulary from the tokenizer directory's tokenizer.model (as llama.cpp's
converter writes it, through scripts/bench/make_gguf.py). Every matrix is Q4_0 made of random
bytes with fp16 scales of about 1e-3 (conversion speed does not depend on the values); norms
are float32 ones. Writes OUT.gguf.partial, renames at the end. Needs gguf, numpy, sentencepiece.
"""
import argparse
import json
import os
import sys
from pathlib import Path

import gguf
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "bench"))
import make_gguf  # noqa: E402

FIXTURES = HERE.parents[2] / "shared" / "fixtures"


def q4_0_blocks(rng, rows, cols):
    n = rows * cols // 32
    raw = rng.integers(0, 256, size=(n, 18), dtype=np.uint8)
    d = (rng.uniform(5e-4, 2e-3, n) * rng.choice([-1.0, 1.0], n)).astype(np.float16)
    raw[:, 0:2] = d.view(np.uint8).reshape(n, 2)
    return raw.reshape(rows, cols // 32 * 18)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--config", type=Path, default=FIXTURES / "microsoft--Phi-3.5-mini-instruct/config.json")
    ap.add_argument("--tokenizer-dir", type=Path, default=FIXTURES / "microsoft--Phi-3.5-mini-instruct")
    a = ap.parse_args()
    cfg = json.loads(a.config.read_text())
    h, inter, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    heads = cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or heads
    hd = h // heads
    vocab = cfg["vocab_size"]
    rng = np.random.default_rng(35)
    tmp = a.out.with_name(a.out.name + ".partial")
    w = gguf.GGUFWriter(tmp, "phi3")
    w.add_name("random Phi-3.5-mini Q4_0")
    Q = gguf.GGMLQuantizationType.Q4_0
    w.add_tensor("token_embd.weight", q4_0_blocks(rng, vocab, h), raw_dtype=Q)
    for l in range(layers):
        b = f"blk.{l}."
        w.add_tensor(b + "attn_norm.weight", np.ones(h, dtype=np.float32))
        w.add_tensor(b + "attn_qkv.weight", q4_0_blocks(rng, (heads + 2 * kv) * hd, h), raw_dtype=Q)
        w.add_tensor(b + "attn_output.weight", q4_0_blocks(rng, h, heads * hd), raw_dtype=Q)
        w.add_tensor(b + "ffn_norm.weight", np.ones(h, dtype=np.float32))
        w.add_tensor(b + "ffn_up.weight", q4_0_blocks(rng, 2 * inter, h), raw_dtype=Q)
        w.add_tensor(b + "ffn_down.weight", q4_0_blocks(rng, h, inter), raw_dtype=Q)
    w.add_tensor("output_norm.weight", np.ones(h, dtype=np.float32))
    if not cfg.get("tie_word_embeddings"):
        w.add_tensor("output.weight", q4_0_blocks(rng, vocab, h), raw_dtype=Q)
    _, long_f, short_f, _ = make_gguf.rope_params(cfg)
    if long_f is not None:
        w.add_tensor("rope_factors_long.weight", np.array(long_f, dtype=np.float32))
        w.add_tensor("rope_factors_short.weight", np.array(short_f, dtype=np.float32))
    make_gguf.add_hparams(w, cfg, gguf.LlamaFileType.MOSTLY_Q4_0)
    make_gguf.add_vocab(w, a.tokenizer_dir, cfg)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(tmp, a.out)
    print(f"wrote {a.out} ({a.out.stat().st_size / 1e9:.2f} GB)")


if __name__ == "__main__":
    main()
