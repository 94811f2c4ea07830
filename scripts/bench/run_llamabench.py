#!/usr/bin/env python3
"""Time upstream llama.cpp (its own `llama-bench`) on one context length, like `phikit run --json`.

    run_llamabench.py MODEL.gguf --context 512 [-m 128] [--threads 2] [--flash-attn off|on]

Prints one JSON object with the field names run_llamacpp.py and `phikit run --stats --json`
use (prompt_tokens, prompt_tokens_per_second, generation_tokens,
generation_tokens_per_second, load_seconds, time_to_first_token, stop_reason), so
bench_run.sh's report reads all three alike. Two llama-bench tests, one repetition each after
llama-bench's warm-up: pp (a prompt of --context random tokens, one batch, from an empty
cache) and tg (-m single-token decodes at depth --context, the same positions phikit decodes
at after its prompt). load_seconds is not measured here (llama-bench does not report it).
The binary is $LLAMA_CPP_BIN/llama-bench (scripts/bench/build_llamacpp.sh builds it).
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_upstream as upstream  # noqa: E402


def bench(binary, model, threads, flash, prompt, gen, depth):
    args = [binary, "-m", model, "-t", str(threads), "-fa", flash, "-p", str(prompt),
            "-n", str(gen), "-d", str(depth), "-r", "1", "-o", "json"]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error: llama-bench failed ({out.returncode}): {out.stderr.strip()[-300:]}")
    (row,) = json.loads(out.stdout)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("--context", type=int, required=True)
    p.add_argument("-m", type=int, default=128, dest="tokens")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--flash-attn", choices=["off", "on"], default="off")
    a = p.parse_args()
    binary = upstream.binary("llama-bench")
    if binary is None:
        sys.exit(f"error: no llama-bench in {upstream.bin_dir()}\n"
                 "hint: scripts/bench/build_llamacpp.sh, or set LLAMA_CPP_BIN")
    pp = bench(binary, a.model, a.threads, a.flash_attn, a.context, 0, 0)
    tg = bench(binary, a.model, a.threads, a.flash_attn, 0, a.tokens, a.context)
    print(json.dumps({
        "prompt_tokens": a.context, "prompt_tokens_per_second": pp["avg_ts"],
        "time_to_first_token": pp["avg_ns"] / 1e9, "generation_tokens": a.tokens,
        "generation_tokens_per_second": tg["avg_ts"], "load_seconds": None,
        "stop_reason": "length", "llama_bench": {"build": pp.get("build_commit"),
                                                 "cpu": pp.get("cpu_info"),
                                                 "pp": pp["samples_ts"], "tg": tg["samples_ts"]}}))


if __name__ == "__main__":
    main()
