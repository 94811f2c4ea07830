#!/usr/bin/env python3
"""Times llguidance (and xgrammar, if installed) on the token paths structured-bench wrote:
the same tokenizer, schemas and steps, one mask per step, a fresh matcher per schema, CPU time
of this thread (the machine is shared; structured-bench measures the same way). Then prints
phikit's times (from the paths file) and theirs side by side, the worst step also as a share
of a decode step (DECODE_STEP_MS, default 67: a Phi-4-mini step on the 2-core host, 14.95 tok/s).

    python3 scripts/structured/bench_references.py TOKENIZER_JSON PATHS_JSON
"""
import json
import os
import sys
import time

ROWS = []


def summary(name, times, compiles):
    times = sorted(times)

    def pct(p):
        return times[min(len(times) - 1, int((len(times) - 1) * p))]

    compiles = sorted(compiles)
    mean = sum(times) / len(times)
    ROWS.append((name, len(times), pct(0.5), pct(0.9), pct(0.99), times[-1], mean))
    print(f"{name}: {len(times)} steps: mask median {pct(0.5):.3f} ms, p90 {pct(0.9):.3f} ms, "
          f"p99 {pct(0.99):.3f} ms, worst {times[-1]:.3f} ms; mean {mean:.3f} ms"
          + (f"; compile median {compiles[len(compiles) // 2]:.2f} ms" if compiles else ""))


def table():
    step = float(os.environ.get("DECODE_STEP_MS", "67"))
    print(f"\nmask per token, ms (CPU time; decode step {step:g} ms)")
    print(f"{'engine':34} {'steps':>5} {'median':>7} {'p90':>7} {'p99':>7} {'worst':>7} {'mean':>7} "
          f"{'worst/step':>10}")
    for name, n, median, p90, p99, worst, mean in ROWS:
        print(f"{name[:34]:34} {n:5d} {median:7.3f} {p90:7.3f} {p99:7.3f} {worst:7.3f} {mean:7.3f} "
              f"{100 * worst / step:9.2f}%")


def clock():
    return time.thread_time_ns() / 1e6


def bench_llguidance(tokenizer_path, paths):
    import llguidance
    import llguidance.numpy as lnp

    tokenizer = llguidance.LLTokenizer(tokenizer_path)
    bitmask = lnp.allocate_token_bitmask(1, tokenizer.vocab_size)
    times, compiles = [], []
    for entry in paths:
        t0 = clock()
        grammar = llguidance.LLMatcher.grammar_from_json_schema(
            entry["schema"], defaults={"whitespace_flexible": False})
        matcher = llguidance.LLMatcher(tokenizer, grammar)
        compiles.append(clock() - t0)
        if matcher.is_error():
            print(f"llguidance: {entry['name']}: {matcher.get_error()}", file=sys.stderr)
            continue
        for token in entry["tokens"]:
            t0 = clock()
            lnp.fill_next_token_bitmask(matcher, bitmask)
            times.append(clock() - t0)
            if not matcher.consume_token(token):
                print(f"llguidance: {entry['name']}: refused token {token}: {matcher.get_error()}",
                      file=sys.stderr)
                break
    summary("llguidance " + llguidance.get_version(), times, compiles)


def bench_xgrammar(tokenizer_path, paths):
    try:
        import torch
        import xgrammar as xgr
        from transformers import PreTrainedTokenizerFast
    except ImportError as e:
        print(f"xgrammar: not available ({e})")
        return
    hf = PreTrainedTokenizerFast(tokenizer_file=tokenizer_path)
    info = xgr.TokenizerInfo.from_huggingface(hf)
    compiler = xgr.GrammarCompiler(info, max_threads=1)
    bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)
    times, compiles = [], []
    for entry in paths:
        t0 = clock()
        try:
            compiled = compiler.compile_json_schema(
                json.dumps(entry["schema"]), any_whitespace=False, separators=(",", ":"))
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"xgrammar: {entry['name']}: {e}", file=sys.stderr)
            continue
        matcher = xgr.GrammarMatcher(compiled)
        compiles.append(clock() - t0)
        for token in entry["tokens"]:
            t0 = clock()
            matcher.fill_next_token_bitmask(bitmask)
            times.append(clock() - t0)
            if not matcher.accept_token(token):
                print(f"xgrammar: {entry['name']}: refused token {token}", file=sys.stderr)
                break
    from importlib.metadata import version

    summary("xgrammar " + version("xgrammar"), times, compiles)


def main():
    tokenizer_path, paths_path = sys.argv[1], sys.argv[2]
    with open(paths_path) as f:
        paths = json.load(f)
    phikit = [t for entry in paths for t in entry.get("phikit_mask_ms", [])]
    if phikit:
        summary("phikit", phikit, [])
    bench_llguidance(tokenizer_path, paths)
    bench_xgrammar(tokenizer_path, paths)
    table()


if __name__ == "__main__":
    main()
