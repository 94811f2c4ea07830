#!/usr/bin/env python3
"""End-to-end check of `phikit convert FILE.gguf` at real vocabulary size (`make gguf-check`).

    python3 scripts/gguf/check_models.py [--phikit .build/debug/phikit] [--work DIR]

For Phi-3.5- and Phi-4-mini-shaped random float32 checkpoints (2 layers, hidden 256) with the
real tokenizers (fixtures: 32064 and 200064 ids), written as GGUF by scripts/bench/make_gguf.py
(llama.cpp's phi3 layout) and quantized by llama.cpp itself (scripts/bench/quantize_gguf.py)
to F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and Q4_K_M, each file converted by phikit; then:

* values: every GGUF tensor, dequantized by gguf.quants.dequantize, against the converted
  tensor (scale*q + bias in float32): exact types equal element for element; the others'
  largest absolute error is reported (and must equal what the convert summary says);
* greedy: `phikit run --temp 0` from the real tokenizer's ids of a prompt, against a float64
  forward pass of the stored values (scripts/engine/make_mx_oracle.py's), walked as the Swift
  golden tests do: each token the reference argmax or within 1e-3 of the logit spread (then
  the contexts differ and the walk stops); and llama.cpp's greedy tokens on the same file
  (scripts/bench/run_llamacpp.py), equal to phikit's as far as llama.cpp follows the reference;
* mlx-lm: `mlx_lm.load` of the converted directory and a greedy generation of the same ids
  (mlx-lm computes in the scales' float16, so its tokens are reported, not required).

The committed, Python-free version of this at tiny size is Tests/PhiKitTests/ConvertGGUF/
GGUFModelGoldenTests.swift (scripts/gguf/make_model_goldens.py). Nothing is committed from
here. Needs gguf, numpy, safetensors, sentencepiece, tokenizers, mlx, mlx-lm, llama-cpp-python.
"""
import argparse
import json
import shutil
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "scripts/engine"))
import make_mx_oracle  # noqa: E402
from gguf_model import converted, stored  # noqa: E402

FIX = Path(subprocess.check_output([REPO / "scripts/fixtures.sh"], text=True).strip())
EXACT = {"F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K"}
TYPES = ["F16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K_M"]
PROMPT = "Once upon a time there was a tiny model"

SHAPES = {
    "phi35": dict(tok=FIX / "microsoft--Phi-3.5-mini-instruct", vocab=32064, hidden=256,
                  inter=512, layers=2, heads=4, kv=4, partial=1.0, tied=False),
    "phi4mini": dict(tok=FIX / "_derived/microsoft--Phi-4-mini-instruct", vocab=200064,
                     hidden=256, inter=512, layers=2, heads=4, kv=2, partial=0.75, tied=True),
}


def checkpoint(name, s, out):
    hd = s["hidden"] // s["heads"]
    rope = int(s["partial"] * s["hidden"]) // s["heads"]
    # zlib.crc32, not hash(): str hashes are salted per process, so every run used to test
    # different random weights and a near-tie in one run could not be reproduced.
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    f = lambda *shape: (rng.standard_normal(shape) * 0.05).astype(np.float32)
    t = {"model.embed_tokens.weight": f(s["vocab"], s["hidden"]),
         "model.norm.weight": (1 + f(s["hidden"])).astype(np.float32)}
    for l in range(s["layers"]):
        p = f"model.layers.{l}."
        t[p + "input_layernorm.weight"] = (1 + f(s["hidden"])).astype(np.float32)
        t[p + "post_attention_layernorm.weight"] = (1 + f(s["hidden"])).astype(np.float32)
        t[p + "self_attn.qkv_proj.weight"] = f((s["heads"] + 2 * s["kv"]) * hd, s["hidden"])
        t[p + "self_attn.o_proj.weight"] = f(s["hidden"], s["heads"] * hd)
        t[p + "mlp.gate_up_proj.weight"] = f(2 * s["inter"], s["hidden"])
        t[p + "mlp.down_proj.weight"] = f(s["hidden"], s["inter"])
    if not s["tied"]:
        t["lm_head.weight"] = f(s["vocab"], s["hidden"])
    out.mkdir(parents=True, exist_ok=True)
    save_file(t, str(out / "model.safetensors"), metadata={"format": "pt"})
    factors = rope // 2
    cfg = {"architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "vocab_size": s["vocab"],
           "hidden_size": s["hidden"], "intermediate_size": s["inter"],
           "num_hidden_layers": s["layers"], "num_attention_heads": s["heads"],
           "num_key_value_heads": s["kv"], "max_position_embeddings": 8192,
           "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
           "partial_rotary_factor": s["partial"], "rms_norm_eps": 1e-5,
           "tie_word_embeddings": s["tied"], "sliding_window": None,
           "rope_scaling": {"type": "longrope",
                            "long_factor": [1.0 + 0.5 * i for i in range(factors)],
                            "short_factor": [1.0 + 0.05 * i for i in range(factors)]}}
    (out / "config.json").write_text(json.dumps(cfg, indent=2))
    for fname in ("tokenizer.model", "tokenizer.json", "tokenizer_config.json", "added_tokens.json",
                  "special_tokens_map.json"):
        if (s["tok"] / fname).is_file():
            shutil.copy(s["tok"] / fname, out / fname)
    return cfg


class StepFailed(Exception):
    """One file's step failed: that file is reported as failing and the others still run."""


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        last = (r.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        raise StepFailed(f"{Path(str(cmd[1] if cmd[0] == sys.executable else cmd[0])).name} "
                         f"exited {r.returncode}: {last}")
    return r.stdout


def walk(W, cfg, ids, tokens, tie=1e-3):
    """(tokens that are the reference argmax, index of a near-tie or None, wrong?): each step
    teacher-forced on `tokens`; a near-tie (within tie * spread) or a wrong token ends it."""
    for t, token in enumerate(tokens):
        logits = make_mx_oracle.forward(cfg, W, list(ids) + list(tokens[:t]))
        top = int(np.argmax(logits))
        if token != top:
            near = logits[top] - logits[token] <= tie * (logits.max() - logits.min())
            return t, (t if near else None), not near
    return len(tokens), None, False


def mlx_greedy(directory, ids, n):
    """mlx_lm.load of a converted directory and its greedy tokens (None if it cannot load)."""
    try:
        import mlx.core as mx
        from mlx_lm import load
        model, _ = load(str(directory))
    except Exception as e:  # noqa: BLE001 - the failure is the finding
        print(f"  mlx_lm.load({directory}) failed: {e}")
        return None
    seq = list(ids)
    for _ in range(n):
        seq.append(int(mx.argmax(model(mx.array([seq]))[0, -1]).item()))
    return seq[len(ids):]


def check_file(a, name, work, f32, cfg_src, qt):
    """One GGUF of `shape` name at type qt: quantize, convert, compare; the result row."""
    path = f32 if qt == "F32" else work / f"{qt}.gguf"
    if qt != "F32":
        run([sys.executable, REPO / "scripts/bench/quantize_gguf.py", f32, path, qt,
             "--threads", "2"])
    out = work / f"mlx-{qt}"
    shutil.rmtree(out, ignore_errors=True)
    summary = json.loads(run([a.phikit, "convert", path, "-o", out, "--json"]))
    cfg = json.loads((out / "config.json").read_text())
    gg = stored(path)
    mine = converted(out, cfg)
    reported = {t["tensor"]: t["max_abs_error"] for t in summary["inexact"]}
    exact_bad, errors, types = [], {}, {}
    for hf_name, (vals, tname) in gg.items():
        types[tname] = types.get(tname, 0) + 1
        got = mine[hf_name].reshape(vals.shape)
        err = float(np.abs(got.astype(np.float64) - vals).max())
        if tname in EXACT and err != 0:
            exact_bad.append((hf_name, tname, err))
        if tname not in EXACT:
            errors[tname] = max(errors.get(tname, 0.0), err)
    if exact_bad:
        print(f"  NOT EXACT: {exact_bad[:3]}")
    # greedy: phikit and llama.cpp against the float64 reference of the stored values
    W = {k: v.astype(np.float64) for k, (v, _) in gg.items()}
    js = json.loads(run([a.phikit, "run", out, "-p", PROMPT, "-m", str(a.tokens),
                         "--temp", "0", "--ignore-eos", "--no-chat-template", "--json"]))
    toks = json.loads(run([a.phikit, "tokenize", out, PROMPT, "--json"]))
    ids = list(toks["ids"] if isinstance(toks, dict) else toks)
    if js["prompt_tokens"] == len(ids) + 1:  # run puts the BOS in front itself
        ids = [json.loads((out / "generation_config.json").read_text())["bos_token_id"]] + ids
    assert js["prompt_tokens"] == len(ids), (js["prompt_tokens"], ids)
    gen = js["tokens"]
    follows, tie_at, wrong = walk(W, cfg_src, ids, gen)
    (work / "ids.json").write_text(json.dumps(ids))
    try:
        llama = json.loads(run([sys.executable, REPO / "scripts/bench/run_llamacpp.py", path,
                                "--prompt-ids", work / "ids.json", "-m", str(a.tokens),
                                "--threads", "2"]))["tokens"]
        llama_error = None
    except StepFailed as e:
        # llama.cpp itself failing (llama-cpp-python 0.3.36 segfaults in its first decode of
        # the Phi-4-mini-shaped files) says nothing about phikit's output: reported, and
        # the file's other checks stand.
        llama, llama_error = None, str(e)
    llama_follows = None if llama is None else walk(W, cfg_src, ids, llama)[0]
    same = min(follows, llama_follows or 0)
    llama_bad = llama is not None and gen[:same] != llama[:same]
    mlx = mlx_greedy(out, ids, a.tokens)
    row = dict(shape=name, type=qt, ggml_types=types, exact=not summary["inexact"],
               inexact_tensors=len(summary["inexact"]), max_abs_error_by_type=errors,
               reported_max_abs_error=max(reported.values(), default=0.0),
               measured_max_abs_error=max(errors.values(), default=0.0),
               exact_mismatches=len(exact_bad),
               phikit_follows=follows, near_tie_at=tie_at, wrong=wrong,
               llama_follows=llama_follows, llama_mismatch=llama_bad, llama_error=llama_error,
               mlx_lm_loads=mlx is not None,
               mlx_lm_same_tokens=None if mlx is None else next(
                   (i for i, (x, y) in enumerate(zip(mlx, gen)) if x != y), len(gen)))
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--phikit", default=str(REPO / ".build/debug/phikit"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/phikit-gguf-check"))
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--shapes", nargs="*", default=list(SHAPES))
    ap.add_argument("--types", nargs="*", default=TYPES)
    a = ap.parse_args()
    results = []
    for name in a.shapes:
        s = SHAPES[name]
        work = a.work / name
        cfg_src = checkpoint(name, s, work / "hf")
        f32 = work / "F32.gguf"
        try:
            run([sys.executable, REPO / "scripts/bench/make_gguf.py", work / "hf", f32])
        except StepFailed as e:
            for qt in ["F32"] + a.types:
                results.append(dict(shape=name, type=qt, failed=f"no F32 GGUF: {e}"))
                print(json.dumps(results[-1]), flush=True)
            continue
        for qt in ["F32"] + a.types:
            began = time.monotonic()
            try:
                row = check_file(a, name, work, f32, cfg_src, qt)
            except (StepFailed, OSError, KeyError, ValueError, AssertionError) as e:
                # One broken file must not hide the others: each is checked and reported.
                row = dict(shape=name, type=qt, failed=f"{type(e).__name__}: {e}")
            row["seconds"] = round(time.monotonic() - began, 1)
            results.append(row)
            print(json.dumps(row), flush=True)
            (a.work / "results.json").write_text(json.dumps(results, indent=2))
    (a.work / "results.json").write_text(json.dumps(results, indent=2))
    bad = [r for r in results if r.get("failed") or r["wrong"] or r["exact_mismatches"]
           or r["llama_mismatch"] or not r["mlx_lm_loads"]]
    for r in bad:
        print(f"FAILING {r['shape']} {r['type']}: {r.get('failed') or 'see its row'}")
    print(f"{len(results)} of {len(a.shapes) * (1 + len(a.types))} files checked, "
          f"{len(bad)} failing")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
