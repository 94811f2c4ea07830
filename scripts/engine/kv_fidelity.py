#!/usr/bin/env python3
"""Fidelity of phikit's KV cache widths (32, 16, 8 bits) against float64 (issue 22).

    swift build --product engine-bench            # or -c release
    python3 scripts/engine/kv_fidelity.py [--engine-bench PATH] [--models 6] [--json OUT]

Prints the two tables of scripts/bench/README.md ("KV cache fidelity"); ~10 minutes on the
2-core machine, most of it sampling the stories texts from the float64 model.

Needs numpy, mlx, mlx-lm and safetensors (as make_mx_oracle.py, whose float64 oracle this
reuses: the stored weights dequantized exactly, a float64 Phi-3 forward pass).

1. Random models of both shapes (tiny_models.py's Phi-3.5-like and Phi-4-mini-like, in the
   form mlx-lm runs them), several seeds each, made 4-bit g64 by mlx_lm.convert. phikit
   (engine-bench --trace) decodes random prompts greedily with each cache width; the float64
   oracle is teacher-forced on phikit's tokens. A token agrees when it is the oracle's argmax
   or within a near-tie of it (oracle gap <= 1e-3 of the logit spread). Also the mean KL
   divergence KL(float64 || phikit) over every position.
2. The real stories-260k model (models/stories-260k, float32): the greedy story from <s>
   with each width (where it first leaves the 32-bit story, and its agreement with float64),
   and the mean KL divergence from float64 over texts sampled from the float64 model at
   temperature 1 (a few thousand tokens).
"""
import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_mx_oracle as oracle  # noqa: E402
import tiny_models as tm  # noqa: E402

ROOT = oracle.ROOT
NEAR_TIE = 1e-3
WIDTHS = (32, 16, 8)


def trace(bench, model_dir, runs, bits, work, act_bits=16):
    """phikit's tokens and logits rows (one per token) for each run, with a `bits` cache and
    `act_bits` activations (act8_fidelity.py)."""
    spec, out = os.path.join(work, "runs.json"), os.path.join(work, "logits.f32")
    with open(spec, "w") as f:
        json.dump({"runs": runs}, f)
    lines = subprocess.run([bench, model_dir, "--trace", spec, "--out", out, "--kv-bits", str(bits),
                            "--act-bits", str(act_bits)],
                           check=True, capture_output=True, text=True).stdout.split("\n")
    tokens = [json.loads(line)["tokens"] for line in lines if line.startswith("{")]
    flat = np.fromfile(out, dtype=np.float32).astype(np.float64)
    rows = flat.reshape(sum(len(t) for t in tokens), -1)
    result, at = [], 0
    for t in tokens:
        result.append((t, rows[at:at + len(t)]))
        at += len(t)
    return result


def log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def mean_kl(reference, logits):
    """Mean over rows of KL(softmax(reference) || softmax(logits))."""
    p, q = log_softmax(reference), log_softmax(logits)
    return float(np.mean(np.sum(np.exp(p) * (p - q), -1)))


def agreement(reference, tokens, first):
    """(argmax, near-tie, worst gap / spread) of tokens[first:] against the reference rows
    before them (row i predicts token i + 1)."""
    exact = tie = 0
    worst = 0.0
    for i in range(first, len(tokens)):
        row = reference[i - 1]
        gap = (row.max() - row[tokens[i]]) / (row.max() - row.min())
        exact += gap == 0
        tie += gap <= NEAR_TIE
        worst = max(worst, gap)
    return exact, tie, worst


class Tally:
    def __init__(self):
        self.tokens = self.exact = self.tie = 0
        self.worst, self.kl = 0.0, []

    def add(self, exact, tie, worst, count, kl):
        self.tokens += count
        self.exact += exact
        self.tie += tie
        self.worst = max(self.worst, worst)
        self.kl.append(kl)

    def summary(self):
        return {"tokens": self.tokens, "argmax": self.exact / self.tokens,
                "argmax_or_near_tie": self.tie / self.tokens, "worst_gap": self.worst,
                "mean_kl": float(np.mean(self.kl))}


def quantized_random_models(count, work):
    """(shape, seed, directory, config, dequantized float64 weights) of `count` random models
    of each tiny shape, made 4-bit g64 by mlx_lm.convert (also used by act8_fidelity.py)."""
    from mlx_lm import convert

    for shape, make in [("phi35", tm.phi35_like), ("phi4mini", tm.phi4mini_like)]:
        for seed in range(1, count + 1):
            cfg = tm.for_mlx(make())
            source = os.path.join(work, f"{shape}-{seed}")
            target = source + "-q4"
            oracle.write_float_model(source, cfg, tm.weights(cfg, seed, oracle.AMPLITUDE))
            with contextlib.redirect_stdout(sys.stderr):  # mlx_lm's log lines
                convert(source, target, quantize=True, q_bits=4, q_group_size=64)
            config, w, _ = oracle.load_dequantized(target)
            yield shape, seed, target, config, w
            print(f"{shape} seed {seed} done", file=sys.stderr)


def random_models(bench, count, prompts, prompt_len, generate, work):
    tallies = {}
    for shape, seed, target, config, w in quantized_random_models(count, work):
        rng = np.random.default_rng(seed)
        runs = [{"prompt": [int(t) for t in rng.integers(3, config["vocab_size"], prompt_len)],
                 "generate": generate} for _ in range(prompts)]
        for bits in WIDTHS:
            for tokens, rows in trace(bench, target, runs, bits, work):
                reference = oracle.forward(config, w, tokens, every_position=True)
                exact, tie, worst = agreement(reference, tokens, prompt_len)
                tallies.setdefault((shape, bits), Tally()).add(
                    exact, tie, worst, len(tokens) - prompt_len,
                    mean_kl(reference[:-1], rows[:-1]))
    return {f"{shape} {bits}-bit": t.summary() for (shape, bits), t in sorted(tallies.items())}


def sample_texts(config, w, count, length, seed):
    """Texts from the float64 model at temperature 1, each starting at <s>."""
    rng = np.random.default_rng(seed)
    texts = []
    for _ in range(count):
        seq = [1]
        while len(seq) < length:
            p = np.exp(log_softmax(oracle.forward(config, w, seq)))
            seq.append(int(rng.choice(len(p), p=p / p.sum())))
        texts.append(seq)
    return texts


def stories(bench, texts, length, work):
    directory = os.path.join(ROOT, "models", "stories-260k")
    config, w, _ = oracle.load_dequantized(directory)
    corpus = sample_texts(config, w, texts, length, seed=22)
    result, first = {}, None
    for bits in WIDTHS:
        (story, story_rows), = trace(bench, directory, [{"prompt": [1], "generate": 255}], bits, work)
        first = first or story
        leaves = next((i for i, (a, b) in enumerate(zip(story, first)) if a != b), None)
        reference = oracle.forward(config, w, story, every_position=True)
        exact, tie, worst = agreement(reference, story, 1)
        kls, count = [], 0
        for tokens, rows in trace(bench, directory, [{"prompt": t} for t in corpus], bits, work):
            reference = oracle.forward(config, w, tokens, every_position=True)
            kls.append(mean_kl(reference[:-1], rows[:-1]) * (len(tokens) - 1))
            count += len(tokens) - 1
        result[f"{bits}-bit"] = {
            "story_leaves_32bit_at": leaves, "story_argmax": exact / 255,
            "story_argmax_or_near_tie": tie / 255, "story_worst_gap": worst,
            "text_tokens": count, "text_mean_kl": sum(kls) / count}
        print(f"stories {bits}-bit done", file=sys.stderr)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    release = os.path.join(ROOT, ".build", "release", "engine-bench")
    debug = os.path.join(ROOT, ".build", "debug", "engine-bench")
    parser.add_argument("--engine-bench", default=release if os.path.exists(release) else debug)
    parser.add_argument("--models", type=int, default=6, help="random models per shape")
    parser.add_argument("--prompts", type=int, default=4, help="random prompts per model")
    parser.add_argument("--prompt-len", type=int, default=16)
    parser.add_argument("--generate", type=int, default=48)
    parser.add_argument("--texts", type=int, default=12, help="stories-260k texts")
    parser.add_argument("--text-len", type=int, default=256)
    parser.add_argument("--json", help="also write the numbers here")
    args = parser.parse_args()
    if not os.path.exists(args.engine_bench):
        sys.exit(f"error: no engine-bench at {args.engine_bench}\n"
                 "hint: swift build --product engine-bench")
    with tempfile.TemporaryDirectory() as work:
        result = {"random_models": random_models(args.engine_bench, args.models, args.prompts,
                                                 args.prompt_len, args.generate, work),
                  "stories_260k": stories(args.engine_bench, args.texts, args.text_len, work)}
    print("| model | cache | tokens | argmax | argmax or near-tie | worst gap/spread | mean KL |")
    print("|---|---|---|---|---|---|---|")
    for key, r in result["random_models"].items():
        shape, width = key.split()
        print(f"| random {shape} 4-bit | {width} | {r['tokens']} | {r['argmax']:.4f} | "
              f"{r['argmax_or_near_tie']:.4f} | {r['worst_gap']:.2e} | {r['mean_kl']:.2e} |")
    print("\n| stories-260k | greedy story leaves 32-bit at | story argmax / near-tie | "
          "worst gap | text tokens | mean KL |")
    print("|---|---|---|---|---|---|")
    for width, r in result["stories_260k"].items():
        leaves = r["story_leaves_32bit_at"]
        print(f"| {width} | {'never' if leaves is None else leaves} | {r['story_argmax']:.4f} / "
              f"{r['story_argmax_or_near_tie']:.4f} | {r['story_worst_gap']:.2e} | "
              f"{r['text_tokens']} | {r['text_mean_kl']:.2e} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
