#!/usr/bin/env python3
"""A full-size phi3 GGUF with random Q4_0 blocks (every matrix, the output too), for benchmarks.

    python3 scripts/gguf/make_random_gguf.py OUT.gguf [--config CONFIG] [--tokenizer-dir DIR]
                                             [--layers N]

Shapes, LongRoPE factors and hyperparameters from the config (default: the Phi-3.5-mini
fixture); the vocabulary from the tokenizer directory's tokenizer.model (as llama.cpp's
converter writes it, through scripts/bench/make_gguf.py). Every matrix is Q4_0 made of random
bytes with fp16 scales of about 1e-3 (conversion speed does not depend on the values); norms
are float32 ones. Tensors are generated and written one at a time (a 14B Phi-4 is 8 GB of
Q4_0; memory stays at the largest tensor). Every tensor is Q4_0, so `phikit convert` brings all
of it over exactly (affine 4-bit g32) and both engines run the same weights: the Phi-4 (14B)
benchmark model (scripts/bench/bench_phi4.sh) is made this way, with
--config scripts/bench/configs/phi4-config.json and the tokenizer of phi4_tokenizer.py.
Writes OUT.gguf.partial, renames at the end. Needs gguf, numpy, sentencepiece or tokenizers.
"""
import subprocess
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

FIXTURES = Path(subprocess.check_output([HERE.parents[1] / "fixtures.sh"], text=True).strip())


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
    ap.add_argument("--layers", type=int, help="fewer layers than the config (a quick check)")
    a = ap.parse_args()
    cfg = json.loads(a.config.read_text())
    if a.layers:
        cfg["num_hidden_layers"] = a.layers
    h, inter, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    heads = cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads") or heads
    hd = h // heads
    vocab = cfg["vocab_size"]
    rng = np.random.default_rng(35)
    Q = gguf.GGMLQuantizationType.Q4_0
    matrices = [("token_embd.weight", vocab, h)]
    for l in range(layers):
        b = f"blk.{l}."
        matrices += [(b + "attn_norm.weight", h, None),
                     (b + "attn_qkv.weight", (heads + 2 * kv) * hd, h),
                     (b + "attn_output.weight", h, heads * hd),
                     (b + "ffn_norm.weight", h, None),
                     (b + "ffn_up.weight", 2 * inter, h),
                     (b + "ffn_down.weight", h, inter)]
    matrices.append(("output_norm.weight", h, None))
    if not cfg.get("tie_word_embeddings"):
        matrices.append(("output.weight", vocab, h))
    _, long_f, short_f, _ = make_gguf.rope_params(cfg)
    vectors = {}
    if long_f is not None:
        vectors["rope_factors_long.weight"] = np.array(long_f, dtype=np.float32)
        vectors["rope_factors_short.weight"] = np.array(short_f, dtype=np.float32)

    def make(rows, cols):
        return np.ones(rows, dtype=np.float32) if cols is None else q4_0_blocks(rng, rows, cols)

    tmp = a.out.with_name(a.out.name + ".partial")
    w = gguf.GGUFWriter(tmp, "phi3")
    # Not "phi3"/"phi-3" in the name: llama.cpp then gives Phi-3's special tokens rstrip and
    # throws (unordered_map::at) when the vocabulary lacks them (Phi-4's has no "</s>").
    w.add_name(f"random {cfg['num_hidden_layers']}-layer Phi4 Q4_0")
    for name, rows, cols in matrices:  # infos first; the data follows in the same order
        if cols is None:
            w.add_tensor_info(name, (rows,), np.dtype(np.float32), rows * 4)
        else:
            w.add_tensor_info(name, (rows, cols // 32 * 18), np.dtype(np.uint8),
                              rows * cols // 32 * 18, raw_dtype=Q)
    for name, v in vectors.items():
        w.add_tensor_info(name, v.shape, v.dtype, v.nbytes)
    make_gguf.add_hparams(w, cfg, gguf.LlamaFileType.MOSTLY_Q4_0)
    make_gguf.add_vocab(w, a.tokenizer_dir, cfg)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for name, rows, cols in matrices:
        w.write_tensor_data(make(rows, cols))
    for v in vectors.values():
        w.write_tensor_data(v)
    w.close()
    os.replace(tmp, a.out)
    print(f"wrote {a.out} ({a.out.stat().st_size / 1e9:.2f} GB)")


if __name__ == "__main__":
    main()
