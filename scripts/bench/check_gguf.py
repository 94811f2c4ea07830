#!/usr/bin/env python3
"""Check that make_gguf.py's GGUF computes what transformers computes from the checkpoint.

    check_gguf.py CKPT_DIR [--tokens 40]

For the small smoke checkpoints (make_random_checkpoint.py --small): writes the bf16 GGUF to
a temporary directory, runs the same prompt ids through llama.cpp (f32 logits for every
position) and through transformers' Phi3ForCausalLM (float32, from the bf16 weights), and
compares the logits position by position. A wrong tensor layout (qkv or gate/up order, rope
dims, tied output, LongRoPE factors) shows up as uncorrelated logits; a right one agrees to
bf16/f16 rounding. Prints the worst correlation and relative error; exit 1 if they are off.
Not part of bench_run.sh (transformers needs float32 weights in RAM: small models only).
"""
import argparse
import ctypes
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def llama_logits(gguf_path, ids):
    import llama_cpp as L

    L.llama_backend_init()
    mp = L.llama_model_default_params()
    model = L.llama_model_load_from_file(str(gguf_path).encode(), mp)
    cp = L.llama_context_default_params()
    cp.n_ctx = cp.n_batch = cp.n_ubatch = len(ids)
    ctx = L.llama_init_from_model(model, cp)
    batch = L.llama_batch_init(len(ids), 0, 1)
    for i, t in enumerate(ids):
        batch.token[i], batch.pos[i], batch.n_seq_id[i] = t, i, 1
        batch.seq_id[i][0], batch.logits[i] = 0, True
    batch.n_tokens = len(ids)
    if L.llama_decode(ctx, batch) != 0:
        sys.exit("error: llama_decode failed")
    n_vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
    ptr = L.llama_get_logits(ctx)
    out = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)),
                                shape=(len(ids), n_vocab)).copy()
    L.llama_batch_free(batch)
    L.llama_free(ctx)
    L.llama_model_free(model)
    return out


def torch_logits(ckpt, ids):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(ckpt, dtype=torch.float32)
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0].numpy()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ckpt", type=Path)
    ap.add_argument("--tokens", type=int, default=40)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    ids = [int(i) for i in rng.integers(100, 30000, a.tokens)]
    with tempfile.TemporaryDirectory() as tmp:
        gguf_path = Path(tmp) / "model.gguf"
        subprocess.run([sys.executable, str(HERE / "make_gguf.py"), str(a.ckpt), str(gguf_path)],
                       check=True, stdout=subprocess.DEVNULL)
        got = llama_logits(gguf_path, ids)
    want = torch_logits(a.ckpt, ids)
    got = got[:, : want.shape[1]]
    corr = min(np.corrcoef(g, w)[0, 1] for g, w in zip(got, want))
    rel = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
    same = float(np.mean(got.argmax(1) == want.argmax(1)))
    print(f"{a.ckpt.name}: {len(ids)} positions, worst logit correlation {corr:.5f}, "
          f"max |diff| / max |logit| {rel:.4f}, argmax agreement {same:.0%}")
    sys.exit(0 if corr > 0.99 else 1)


if __name__ == "__main__":
    main()
