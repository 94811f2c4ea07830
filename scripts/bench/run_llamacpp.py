#!/usr/bin/env python3
"""Time llama.cpp (llama-cpp-python's low-level API) on one prompt, like `phikit run --json`.

    run_llamacpp.py MODEL.gguf --prompt-ids IDS.json [-m 128] [--threads 2]
                    [--flash-attn off|on|auto]

Prints one JSON object with the field names `phikit run --stats --json` uses (prompt_tokens,
prompt_tokens_per_second, generation_tokens, generation_tokens_per_second, load_seconds,
time_to_first_token, stop_reason), plus llama.cpp's own perf counters for a cross-check. Run it as its own
process under /usr/bin/time -v: peak RSS is measured from outside, the same way for every
engine.

What is timed (llama-bench's pp/tg convention, wall clock, no warm-up run, as a CLI user sees):
- load_seconds: llama_model_load_from_file + llama_init_from_model (mmap, the Q4_0 repack,
  KV cache and compute buffers), after the Python imports.
- prompt: one llama_decode of the whole prompt as a single batch (n_batch = n_ubatch = the
  prompt length), logits for the last position only, then the greedy pick of token 1.
  prompt_tokens_per_second = prompt_tokens / that time; time_to_first_token is the same interval.
- generation: -m single-token decodes, each followed by a greedy pick (llama's greedy sampler,
  in C). generation_tokens_per_second = decodes / time. EOS is ignored: with random weights it
  could come at any step, and the point is a fixed amount of work.
"""
import argparse
import ctypes
import json
import sys
import time
from pathlib import Path

import llama_cpp as L

FLASH = {"off": L.LLAMA_FLASH_ATTN_TYPE_DISABLED, "on": L.LLAMA_FLASH_ATTN_TYPE_ENABLED,
         "auto": L.LLAMA_FLASH_ATTN_TYPE_AUTO}


def die(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def load(path, n_ctx, n_batch, threads, flash):
    mp = L.llama_model_default_params()
    mp.n_gpu_layers = 0
    model = L.llama_model_load_from_file(str(path).encode(), mp)
    if not model:
        die(f"llama.cpp could not load {path}")
    cp = L.llama_context_default_params()
    cp.n_ctx = n_ctx
    cp.n_batch = cp.n_ubatch = n_batch
    cp.n_threads = cp.n_threads_batch = threads
    cp.flash_attn_type = FLASH[flash]
    cp.no_perf = False
    ctx = L.llama_init_from_model(model, cp)
    if not ctx:
        die("llama_init_from_model failed")
    return model, ctx


def decode(ctx, ids):
    arr = (L.llama_token * len(ids))(*ids)
    rc = L.llama_decode(ctx, L.llama_batch_get_one(arr, len(ids)))
    if rc != 0:
        die(f"llama_decode returned {rc}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", type=Path)
    ap.add_argument("--prompt-ids", type=Path, required=True, help="JSON list of token ids")
    ap.add_argument("-m", "--max-tokens", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--flash-attn", choices=sorted(FLASH), default="off")
    a = ap.parse_args()
    ids = json.loads(a.prompt_ids.read_text())
    if not ids or not all(isinstance(i, int) for i in ids):
        die(f"{a.prompt_ids}: expected a non-empty JSON list of token ids")

    L.llama_backend_init()
    t0 = time.perf_counter()
    model, ctx = load(a.model, len(ids) + a.max_tokens + 1, len(ids), a.threads, a.flash_attn)
    load_s = time.perf_counter() - t0
    n_vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
    if max(ids) >= n_vocab:
        die(f"prompt token {max(ids)} is outside the model's vocabulary ({n_vocab})")
    sampler = L.llama_sampler_init_greedy()
    L.llama_perf_context_reset(ctx)

    t0 = time.perf_counter()
    decode(ctx, ids)
    token = L.llama_sampler_sample(sampler, ctx, -1)
    prompt_s = time.perf_counter() - t0

    out = []
    t0 = time.perf_counter()
    for _ in range(a.max_tokens):
        decode(ctx, [token])
        out.append(token)
        token = L.llama_sampler_sample(sampler, ctx, -1)
    gen_s = time.perf_counter() - t0

    perf = L.llama_perf_context(ctx)
    result = {
        "engine": "llama.cpp",
        "llama_cpp_python": L.__version__,
        "prompt_tokens": len(ids),
        "prompt_tokens_per_second": len(ids) / prompt_s,
        "generation_tokens": a.max_tokens,
        "generation_tokens_per_second": a.max_tokens / gen_s,
        "load_seconds": load_s,
        "time_to_first_token": prompt_s,
        "stop_reason": "length",
        "tokens": out,
        "threads": a.threads,
        "flash_attn": a.flash_attn,
        "n_ctx": L.llama_n_ctx(ctx),
        "perf": {"t_p_eval_ms": perf.t_p_eval_ms, "n_p_eval": perf.n_p_eval,
                 "t_eval_ms": perf.t_eval_ms, "n_eval": perf.n_eval},
    }
    L.llama_sampler_free(sampler)
    L.llama_free(ctx)
    L.llama_model_free(model)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
