#!/usr/bin/env python3
"""Would 8-bit activations keep phikit's greedy tokens on the float64 path? (issue 22)

    python3 scripts/engine/act8_fidelity.py [--models 6] [--json OUT]

llama.cpp multiplies quantized weights by activations rounded to 8 bits (Q8_0: one scale per
32 values, |q| <= 127) and so runs vpdpbusd, 64 products per instruction; phikit rounds them
to 16 bits (one scale per weight group, |q| <= 32767) and runs vpdpwssd, 32. Prefill and
batched decode are bound by that instruction, so 8 bits would double their ceiling; the
issue allows it only if the fidelity report stays clean. This measures it before any kernel
is written: the float64 oracle of make_mx_oracle.py, with the input of every matrix product
rounded as such an engine would round it, generates greedily; the exact float64 oracle is
teacher-forced on those tokens, and each token must be its argmax or within a near-tie (gap
<= 1e-3 of the logit spread), the rule kv_fidelity.py applies to phikit itself.

Rounding only (no other error): a lower bound on what a real kernel would lose. Modes:
  16-bit g64  phikit's activations today (calibration: should agree everywhere)
  8-bit g64   8 bits, one scale per weight group of 64
  8-bit g32   llama.cpp's Q8_0

Needs numpy, mlx, mlx-lm and safetensors, as kv_fidelity.py (whose models and rule it reuses).

With --engine-bench PATH it measures phikit's real 8-bit path (`--act-bits 8`) instead,
teacher-forced (engine-bench --trace, a 32-bit cache so only the activations differ): per
position the KL divergence from float64 of the stored weights and whether the top-1 token
agrees, for the 16-bit and the 8-bit path, on
  random models of both tiny shapes (4-bit g64, every matrix taken by the 8-bit kernel),
  SmolLM2-135M-Instruct (4-bit g32 from its Q4_1 GGUF; --smollm2 DIR, see
    scripts/smollm2/path.sh) on a real English text, and
  --full-size DIR... (the full-size random Phi-3.5-mini / Phi-4-mini shapes, too large for
    the float64 oracle): the 8-bit path against the 16-bit one instead.
stories-260k is float32, which the 8-bit kernel does not take: both paths are the same there.
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kv_fidelity as kv  # noqa: E402
import make_mx_oracle as oracle  # noqa: E402

MODES = {"16-bit g64": (16, 64), "8-bit g64": (8, 64), "8-bit g32": (8, 32)}


def rounder(bits, group):
    """x rounded to `bits` signed integers times one float scale per `group` values (the last
    axis), the scale max|x| / (2^(bits-1) - 1): what the engine's prepare step computes."""
    top = 2 ** (bits - 1) - 1

    def matmul_input(x):
        n = x.shape[-1]
        pad = -n % group  # a last, shorter group (stories-260k's 172-wide MLP)
        g = np.concatenate([x, np.zeros(x.shape[:-1] + (pad,))], -1)
        g = g.reshape(x.shape[:-1] + (-1, group))
        scale = np.abs(g).max(-1, keepdims=True) / top
        safe = np.where(scale > 0, scale, 1)
        return (np.rint(g / safe) * scale).reshape(x.shape[:-1] + (-1,))[..., :n]
    return matmul_input


def greedy(config, w, prompt, count, matmul_input):
    """The prompt and `count` greedy tokens of the oracle with `matmul_input` applied."""
    def model(cfg, weights, seq):
        return oracle.forward(cfg, weights, seq, matmul_input=matmul_input)
    return list(prompt) + oracle.greedy(config, w, prompt, count, model=model)[0]


def tally(tallies, key, config, w, tokens, first, matmul_input):
    reference = oracle.forward(config, w, tokens, every_position=True)
    rows = oracle.forward(config, w, tokens, every_position=True, matmul_input=matmul_input)
    exact, tie, worst = kv.agreement(reference, tokens, first)
    tallies.setdefault(key, kv.Tally()).add(exact, tie, worst, len(tokens) - first,
                                            kv.mean_kl(reference[:-1], rows[:-1]))


def random_models(count, prompts, prompt_len, generate, work):
    tallies = {}
    for shape, seed, _, config, w in kv.quantized_random_models(count, work):
        rng = np.random.default_rng(seed)
        for _ in range(prompts):
            prompt = [int(t) for t in rng.integers(3, config["vocab_size"], prompt_len)]
            for mode, (bits, group) in MODES.items():
                mi = rounder(bits, group)
                tokens = greedy(config, w, prompt, generate, mi)
                tally(tallies, (shape, mode), config, w, tokens, prompt_len, mi)
    return {f"{shape} {mode}": t.summary() for (shape, mode), t in sorted(tallies.items())}


def stories(length):
    """The real stories-260k model's greedy story from <s>, each mode against float64."""
    config, w, _ = oracle.load_dequantized(os.path.join(kv.ROOT, "models", "stories-260k"))
    exact_story = greedy(config, w, [1], length, None)
    result = {}
    for mode, (bits, group) in MODES.items():
        mi = rounder(bits, group)
        story = greedy(config, w, [1], length, mi)
        leaves = next((i for i, (a, b) in enumerate(zip(story, exact_story)) if a != b), None)
        tallies = {}
        tally(tallies, mode, config, w, story, 1, mi)
        result[mode] = dict(tallies[mode].summary(), story_leaves_float64_at=leaves)
        print(f"stories {mode} done", file=sys.stderr)
    return result


# A real English text for SmolLM2 (this repository's words, so nothing is downloaded).
TEXT = (
    "phikit is a toolkit that gets small language models of the Phi family from the Hugging "
    "Face Hub onto a machine and runs them: it downloads a model, converts it to a compact "
    "format, checks that the files are what they claim to be, and then generates text from a "
    "prompt, holds a conversation, or serves an HTTP API that other programs can call. The "
    "inference core multiplies the model's quantized weights with the activations of each "
    "token, one layer after another, and keeps the keys and values of every position in a "
    "cache so that the next token only has to look back at them. Most of the time of a long "
    "prompt goes into those products, so their precision is a trade between speed and the "
    "faithfulness of every token the model writes.")


def llama_as_phi3(config, w):
    """A llama model's weights under the Phi-3 names the float64 oracle reads (q, k, v and
    gate, up fused in that order, as phikit's Phi-3 layout)."""
    for layer in range(config["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        w[p + "self_attn.qkv_proj.weight"] = np.concatenate(
            [w.pop(p + f"self_attn.{n}_proj.weight") for n in "qkv"], 0)
        w[p + "mlp.gate_up_proj.weight"] = np.concatenate(
            [w.pop(p + f"mlp.{n}_proj.weight") for n in ("gate", "up")], 0)
    return w


def top1(reference, rows):
    return int(np.sum(reference.argmax(-1) == rows.argmax(-1)))


def engine_rows(bench, directory, runs, act_bits, work):
    return kv.trace(bench, directory, runs, 32, work, act_bits=act_bits)


def engine_against_float64(bench, key, directory, config, w, runs, work, result):
    """KL from float64 and top-1 agreement of both activation widths over `runs`."""
    for act in (16, 8):
        kl = agree = count = 0.0
        for tokens, rows in engine_rows(bench, directory, runs, act, work):
            reference = oracle.forward(config, w, tokens, every_position=True)
            kl += kv.mean_kl(reference, rows) * len(tokens)
            agree += top1(reference, rows)
            count += len(tokens)
        entry = result.setdefault(f"{key} {act}-bit", {"positions": 0, "kl": 0.0, "top1": 0})
        entry["positions"] += int(count)
        entry["kl"] += kl
        entry["top1"] += int(agree)


def engine(args, work):
    result = {}
    for shape, seed, target, config, w in kv.quantized_random_models(args.models, work):
        rng = np.random.default_rng(seed)
        runs = [{"prompt": [int(t) for t in rng.integers(3, config["vocab_size"], args.text_len)]}
                for _ in range(args.prompts)]
        engine_against_float64(args.engine_bench, f"random {shape} 4-bit g64", target, config, w,
                               runs, work, result)
    if args.smollm2:
        from tokenizers import Tokenizer

        config, w, _ = oracle.load_dequantized(args.smollm2)
        w = llama_as_phi3(config, w)
        ids = Tokenizer.from_file(os.path.join(args.smollm2, "tokenizer.json")).encode(TEXT).ids
        engine_against_float64(args.engine_bench, "SmolLM2-135M-Instruct 4-bit g32", args.smollm2,
                               config, w, [{"prompt": ids}], work, result)
        print("smollm2 done", file=sys.stderr)
    for directory in args.full_size:
        with open(os.path.join(directory, "config.json")) as f:
            vocab = json.load(f)["vocab_size"]
        rng = np.random.default_rng(5)
        runs = [{"prompt": [int(t) for t in rng.integers(3, vocab, args.text_len)]}]
        (tokens, exact), = engine_rows(args.engine_bench, directory, runs, 16, work)
        (_, rows), = engine_rows(args.engine_bench, directory, runs, 8, work)
        result[f"{os.path.basename(directory)} 8-bit vs 16-bit"] = {
            "positions": len(tokens), "kl": kv.mean_kl(exact, rows) * len(tokens),
            "top1": top1(exact, rows)}
        print(f"{directory} done", file=sys.stderr)
    for entry in result.values():
        entry["kl"] /= entry["positions"]
        entry["top1"] /= entry["positions"]
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", type=int, default=6, help="random models per shape")
    parser.add_argument("--prompts", type=int, default=4, help="random prompts per model")
    parser.add_argument("--prompt-len", type=int, default=16)
    parser.add_argument("--generate", type=int, default=48)
    parser.add_argument("--story", type=int, default=255, help="stories-260k tokens")
    parser.add_argument("--json", help="also write the numbers here")
    parser.add_argument("--engine-bench", help="measure phikit's --act-bits 8 with this binary")
    parser.add_argument("--text-len", type=int, default=64, help="positions per random prompt")
    parser.add_argument("--smollm2", help="SmolLM2-135M-Instruct model directory (engine)")
    parser.add_argument("--full-size", nargs="*", default=[], help="model directories (engine)")
    args = parser.parse_args()
    if args.engine_bench:
        with tempfile.TemporaryDirectory() as work:
            result = engine(args, work)
        print("| model | activations | positions | mean KL | top-1 agreement |")
        print("|---|---|---|---|---|")
        for key, r in result.items():
            model, mode = key.rsplit(" ", 1) if "vs" not in key else (key.split(" 8-bit")[0], "8-bit vs 16-bit")
            print(f"| {model} | {mode} | {r['positions']} | {r['kl']:.2e} | {r['top1']:.4f} |")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
        return
    with tempfile.TemporaryDirectory() as work:
        result = {"random_models": random_models(args.models, args.prompts, args.prompt_len,
                                                 args.generate, work),
                  "stories_260k": stories(args.story)}
    print("| model | activations | tokens | argmax | argmax or near-tie | worst gap/spread | mean KL |")
    print("|---|---|---|---|---|---|---|")
    rows = [(f"random {key.split(' ', 1)[0]} 4-bit", key.split(" ", 1)[1], r)
            for key, r in result["random_models"].items()]
    rows += [("stories-260k story", mode, r) for mode, r in result["stories_260k"].items()]
    for model, mode, r in rows:
        leaves = r.get("story_leaves_float64_at", "")
        note = "" if leaves == "" else f" (leaves at {'never' if leaves is None else leaves})"
        print(f"| {model}{note} | {mode} | {r['tokens']} | {r['argmax']:.4f} | "
              f"{r['argmax_or_near_tie']:.4f} | {r['worst_gap']:.2e} | {r['mean_kl']:.2e} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
