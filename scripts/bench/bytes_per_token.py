#!/usr/bin/env python3
"""Bytes of memory one generated token reads: the decode ceiling is bandwidth / this.

    bytes_per_token.py MODEL (an MLX/HF safetensors dir or a .gguf file) CONFIG.json CTX [KV_BITS]

Prints JSON: weights (bytes of every tensor a decode step reads), kv (the KV cache at CTX
positions, fp16 K and V), total, and the pieces. A decode step reads every matrix once
(the attention and MLP projections of every layer and the output projection), every norm,
and only ONE row of the embedding table, unless the embeddings are tied: then the table is
also the output projection and is read whole. Counted from the file's own tensor sizes, so
quantization layout (MLX affine 4-bit with fp16/bf16 scale and bias per group, llama.cpp
Q4_0 blocks, the Q6_K output matrix llama.cpp's Q4_0 mix keeps) is accounted exactly.

The KV cache is counted at KV_BITS (default 16: llama.cpp's fp16 default; phikit's
`--kv-bits` 32, 16 or 8, the last int8 with a float32 scale per 32 values, as
Sources/CKernels/include/pk_attention.h lays it out) for CTX positions: the benchmark uses the
average context during generation, prompt + generated/2 (576 for 512 + 128, as PERF.md).
"""
import json
import sys
from pathlib import Path

from compare_outputs import tensors_of



def _safetensors_weights(model_dir):
    tensors, _ = tensors_of(Path(model_dir))
    sizes = {name: end - start for name, (_, _, _, start, end) in tensors.items()}
    emb = {n: s for n, s in sizes.items() if n.startswith("model.embed_tokens.")}
    if not emb:
        raise ValueError(f"{model_dir}: no model.embed_tokens.* tensors")
    rows = tensors["model.embed_tokens.weight"][2][0]
    tied = not any(n.startswith("lm_head.") for n in sizes)
    emb_bytes = sum(emb.values())
    read_emb = emb_bytes + emb_bytes // rows if tied else emb_bytes // rows
    rest = sum(s for n, s in sizes.items() if n not in emb)
    return {"embedding_file_bytes": emb_bytes, "embedding_read_bytes": read_emb,
            "other_bytes": rest, "tied": tied, "weights": rest + read_emb}


def _gguf_weights(path):
    import gguf

    r = gguf.GGUFReader(str(path))
    sizes = {t.name: int(t.n_bytes) for t in r.tensors}
    emb = next(t for t in r.tensors if t.name == "token_embd.weight")
    rows = int(emb.n_elements) // int(emb.shape[0])  # ggml order: shape[0] = n_embd
    tied = "output.weight" not in sizes
    emb_bytes = sizes["token_embd.weight"]
    read_emb = emb_bytes + emb_bytes // rows if tied else emb_bytes // rows
    rest = sum(s for n, s in sizes.items() if n != "token_embd.weight")
    return {"embedding_file_bytes": emb_bytes, "embedding_read_bytes": read_emb,
            "other_bytes": rest, "tied": tied, "weights": rest + read_emb}


def kv_row_bytes(head_dim, bits):
    """Bytes of one position of one kv head, key and value rows averaged (pk_kv_row_bytes:
    8-bit keys carry a scale and a zero per group, values a scale)."""
    if bits == 8:
        group = 32 if head_dim % 32 == 0 else head_dim
        return head_dim + 4.5 * (head_dim // group)
    return head_dim * bits // 8


def kv_bytes(cfg, ctx, bits=16):
    """K and V of every layer for ctx positions."""
    heads = cfg["num_attention_heads"]
    head_dim = cfg.get("head_dim") or cfg["hidden_size"] // heads
    kv_heads = cfg.get("num_key_value_heads") or heads
    return int(2 * cfg["num_hidden_layers"] * kv_heads * kv_row_bytes(head_dim, bits) * ctx)


def bytes_per_token(model, config, ctx, bits=16):
    model = Path(model)
    w = _gguf_weights(model) if model.suffix == ".gguf" else _safetensors_weights(model)
    kv = kv_bytes(json.loads(Path(config).read_text()), ctx, bits)
    return dict(w, kv=kv, kv_context=ctx, kv_bits=bits, total=w["weights"] + kv)


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    bits = int(sys.argv[4]) if len(sys.argv) == 5 else 16
    print(json.dumps(bytes_per_token(sys.argv[1], sys.argv[2], int(sys.argv[3]), bits)))


if __name__ == "__main__":
    main()
