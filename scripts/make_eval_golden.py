#!/usr/bin/env python3
"""Golden file for `phikit eval` (Tests/PhiKitTests/Fixtures/eval/golden.json).

    pip install mlx mlx-cpu mlx-lm tokenizers numpy     # no torch needed
    python3 scripts/make_eval_golden.py

The bundled stories-260k (float32, the reference) and its affine 4-bit g64 quantization made
by mlx_lm.convert (phikit's convert writes the same bytes) score Fixtures/eval/text.txt,
tokenized by the `tokenizers` library (BOS added, as phikit encodes plain text), in windows
of CTX tokens, each from an empty cache: every token of a window but the first is predicted.
The logits come from scripts/engine/make_mx_oracle.py's float64 Phi-3 forward pass over each
model's stored weights (the quantized ones dequantized exactly). Written:
  - per model, the float64 perplexity (phikit's must agree to 1e-6 relative);
  - the candidate against the reference in float64: KL mean and p99 (numpy percentile,
    linear), top-1 agreement, mean |Δ logit| (phikit's float32 engine agrees to a tolerance);
  - `rows`: the first ROWS positions' logits of both models rounded to float32 (base64,
    little-endian) with the same metrics computed from exactly those rows, which phikit's
    metric code must reproduce to 1e-9.
"""
import base64
import json
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "engine"))
import make_mx_oracle as mo  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
STORIES = os.path.join(ROOT, "models", "stories-260k")
FIX = os.path.join(ROOT, "Tests", "PhiKitTests", "Fixtures", "eval")
CTX, ROWS = 64, 6


def log_softmax(l):
    m = l.max(-1, keepdims=True)
    return l - (m + np.log(np.exp(l - m).sum(-1, keepdims=True)))


def metrics(ref, cand, targets):
    """ref/cand: [n, vocab] float64; targets: [n]."""
    lp, lq = log_softmax(ref), log_softmax(cand)
    kl = np.maximum(0, (np.exp(lp) * (lp - lq)).sum(-1))
    return {
        "ppl_reference": float(np.exp(-lp[np.arange(len(targets)), targets].mean())),
        "ppl_candidate": float(np.exp(-lq[np.arange(len(targets)), targets].mean())),
        "kl_mean": float(kl.mean()), "kl_p99": float(np.percentile(kl, 99)),
        "top1_agreement": float((ref.argmax(-1) == cand.argmax(-1)).mean()),
        "mean_abs_logit_diff": float(np.abs(ref - cand).mean(-1).mean()),
    }


def main():
    import mlx_lm
    from tokenizers import Tokenizer

    work = tempfile.mkdtemp(prefix="phikit-eval-golden-")
    q4 = os.path.join(work, "q4")
    mlx_lm.convert(STORIES, q4, quantize=True, q_bits=4, q_group_size=64)
    text = open(os.path.join(FIX, "text.txt"), encoding="utf-8").read()
    tokens = Tokenizer.from_file(os.path.join(STORIES, "tokenizer.json")).encode(text).ids
    models = {}
    for name, directory in [("reference", STORIES), ("q4", q4)]:
        cfg, w, _ = mo.load_dequantized(directory)
        logits, targets = [], []
        for s in range(0, len(tokens) - 1, CTX):
            window = tokens[s:s + CTX]
            if len(window) < 2:
                continue
            logits.append(mo.forward(cfg, w, window[:-1], every_position=True))
            targets += window[1:]
        models[name] = (np.concatenate(logits), np.array(targets))
    (ref, targets), (cand, _) = models["reference"], models["q4"]
    golden = {"context": CTX, "tokens": tokens, "positions": len(targets),
              "float64": metrics(ref, cand, targets)}
    r32, c32 = ref[:ROWS].astype(np.float32), cand[:ROWS].astype(np.float32)
    golden["rows"] = {
        "count": ROWS, "vocab": int(ref.shape[1]), "targets": [int(t) for t in targets[:ROWS]],
        "reference": base64.b64encode(r32.astype("<f4").tobytes()).decode(),
        "candidate": base64.b64encode(c32.astype("<f4").tobytes()).decode(),
        "metrics": metrics(r32.astype(np.float64), c32.astype(np.float64), targets[:ROWS]),
    }
    with open(os.path.join(FIX, "golden.json"), "w") as f:
        json.dump(golden, f, indent=1)
        f.write("\n")
    shutil.rmtree(work)
    print(json.dumps(golden["float64"], indent=1))


if __name__ == "__main__":
    main()
