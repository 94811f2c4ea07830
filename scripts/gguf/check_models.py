#!/usr/bin/env python3
"""End-to-end check of `phikit convert FILE.gguf` on Phi-3.5- and Phi-4-mini-shaped models.

    python3 scripts/gguf/check_models.py [--phikit .build/debug/phikit] [--work DIR]

For each shape: a random float32 Hugging Face checkpoint with the real tokenizer (fixtures),
written as GGUF by scripts/bench/make_gguf.py (llama.cpp's phi3 layout), quantized by
llama.cpp itself (llama_cpp.llama_model_quantize, through scripts/bench/quantize_gguf.py) to
F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and Q4_K_M; each file converted by phikit. Then:

* values: every GGUF tensor, dequantized by gguf.quants.dequantize, against the converted
  tensor (MLX affine: scale*q + bias in float32): exact types must be equal element for
  element; the others report their largest absolute error (what the convert summary says);
* greedy: `phikit run --temp 0` tokens against a float64 forward pass of the GGUF's stored
  weights, teacher-forced: at every step phikit's token must be the reference's argmax, or
  within `--tie` of it (a near-tie).

Nothing is committed from here; the numbers go in the README / report. Needs gguf, numpy,
safetensors, sentencepiece, llama-cpp-python.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import gguf
import numpy as np
from gguf.quants import dequantize
from safetensors.numpy import load_file, save_file

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FIX = REPO.parent / "shared" / "fixtures"
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
    rng = np.random.default_rng(hash(name) % 2**32)
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
           "num_key_value_heads": s["kv"], "max_position_embeddings": 4096,
           "original_max_position_embeddings": 64, "rope_theta": 10000.0,
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


# ---- the GGUF's stored values -------------------------------------------------------------

HF = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head",
      "attn_norm": "input_layernorm", "attn_qkv": "self_attn.qkv_proj",
      "attn_output": "self_attn.o_proj", "ffn_norm": "post_attention_layernorm",
      "ffn_up": "mlp.gate_up_proj", "ffn_down": "mlp.down_proj"}


def stored(path):
    """{HF name: (float32 values, GGML type name)} of a phi3 GGUF (rope factors skipped)."""
    out = {}
    for t in gguf.GGUFReader(str(path)).tensors:
        parts = t.name.split(".")
        if parts[0] == "blk":
            name = f"model.layers.{parts[1]}.{HF[parts[2]]}.weight"
        elif parts[0] in HF:
            name = HF[parts[0]] + ".weight"
        else:
            continue
        shape = tuple(int(x) for x in reversed(t.shape))
        out[name] = (dequantize(t.data, t.tensor_type).astype(np.float32).reshape(shape),
                     t.tensor_type.name)
    return out


def converted(directory, cfg):
    """{name: float32 values} of a phikit output (affine: scale*q + bias in float32)."""
    w = {}
    for f in sorted(Path(directory).glob("*.safetensors")):
        w.update(load_file(str(f)))
    q = cfg.get("quantization") or {}
    out = {}
    for name, v in w.items():
        if name.endswith((".scales", ".biases")):
            continue
        base = name[: -len(".weight")]
        if base + ".scales" not in w:
            out[name] = v.astype(np.float32)
            continue
        bits = (q.get(base) or q)["bits"]
        words = v.astype("<u4")
        rows = words.shape[0]
        bitstream = np.unpackbits(words.view(np.uint8).reshape(rows, -1), axis=1, bitorder="little")
        codes = bitstream.reshape(rows, -1, bits) @ (1 << np.arange(bits))
        scales = w[base + ".scales"].astype(np.float32)
        biases = w[base + ".biases"].astype(np.float32)
        g = codes.shape[1] // scales.shape[1]
        vals = (np.repeat(scales, g, axis=1) * codes.astype(np.float32)
                + np.repeat(biases, g, axis=1)).astype(np.float32)
        out[name] = vals
    return out


# ---- float64 reference forward (transformers' Phi3 with LongRoPE) -------------------------

def forward(W, cfg, ids):
    h, heads, kv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = h // heads
    rope = int(cfg["partial_rotary_factor"] * hd)
    n = len(ids)
    rs = cfg["rope_scaling"]
    orig, maxp = cfg["original_max_position_embeddings"], cfg["max_position_embeddings"]
    factors = np.array(rs["long_factor"] if n > orig else rs["short_factor"], dtype=np.float64)
    inv = 1.0 / (factors * cfg["rope_theta"] ** (np.arange(0, rope, 2) / rope))
    scale = maxp / orig
    m = math.sqrt(1 + math.log(scale) / math.log(orig)) if scale > 1 else 1.0
    ang = np.outer(np.arange(n), inv)
    ang = np.concatenate([ang, ang], axis=1)
    cos, sin = np.cos(ang) * m, np.sin(ang) * m

    def rot(x):  # x [n, heads, hd]; rotate_half on the first `rope` dims
        r, p = x[..., :rope], x[..., rope:]
        half = rope // 2
        rh = np.concatenate([-r[..., half:], r[..., :half]], axis=-1)
        return np.concatenate([r * cos[:, None] + rh * sin[:, None], p], axis=-1)

    def norm(x, w):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + cfg["rms_norm_eps"]) * w

    x = W["model.embed_tokens.weight"][ids]
    mask = np.triu(np.full((n, n), -np.inf), 1)
    for l in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{l}."
        y = norm(x, W[p + "input_layernorm.weight"])
        qkv = y @ W[p + "self_attn.qkv_proj.weight"].T
        q = rot(qkv[:, : heads * hd].reshape(n, heads, hd))
        k = rot(qkv[:, heads * hd: (heads + kv) * hd].reshape(n, kv, hd))
        v = qkv[:, (heads + kv) * hd:].reshape(n, kv, hd)
        rep = heads // kv
        k, v = np.repeat(k, rep, axis=1), np.repeat(v, rep, axis=1)
        s = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(hd) + mask
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        o = np.einsum("hqk,khd->qhd", s, v).reshape(n, heads * hd)
        x = x + o @ W[p + "self_attn.o_proj.weight"].T
        y = norm(x, W[p + "post_attention_layernorm.weight"])
        gu = y @ W[p + "mlp.gate_up_proj.weight"].T
        g, u = gu[:, : cfg["intermediate_size"]], gu[:, cfg["intermediate_size"]:]
        x = x + (g / (1 + np.exp(-g)) * u) @ W[p + "mlp.down_proj.weight"].T
    x = norm(x, W["model.norm.weight"])
    lm = W.get("lm_head.weight", W["model.embed_tokens.weight"])
    return x[-1] @ lm.T


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(map(str, cmd))}\n{r.stderr}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--phikit", default=str(REPO / ".build/debug/phikit"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/phikit-gguf-check"))
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--tie", type=float, default=0.02, help="logit gap counted as a near-tie")
    ap.add_argument("--shapes", nargs="*", default=list(SHAPES))
    ap.add_argument("--types", nargs="*", default=TYPES)
    a = ap.parse_args()
    results = []
    for name in a.shapes:
        s = SHAPES[name]
        work = a.work / name
        cfg_src = checkpoint(name, s, work / "hf")
        f32 = work / "F32.gguf"
        run([sys.executable, REPO / "scripts/bench/make_gguf.py", work / "hf", f32])
        for qt in ["F32"] + a.types:
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
            # greedy vs float64 reference of the stored weights
            W = {k: v.astype(np.float64) for k, (v, _) in gg.items()}
            js = json.loads(run([a.phikit, "run", out, "-p", PROMPT, "-m", str(a.tokens),
                                 "--temp", "0", "--ignore-eos", "--no-chat-template", "--json"]))
            toks = json.loads(run([a.phikit, "tokenize", out, PROMPT, "--json"]))
            ids = list(toks["ids"] if isinstance(toks, dict) else toks)
            if js["prompt_tokens"] == len(ids) + 1:  # run puts the BOS in front itself
                ids = [json.loads((out / "generation_config.json").read_text())["bos_token_id"]] + ids
            assert js["prompt_tokens"] == len(ids), (js["prompt_tokens"], ids)
            gen = js["tokens"]
            agree, ties, wrong = 0, 0, 0
            for t in range(len(gen)):
                logits = forward(W, cfg_src, list(ids) + gen[:t])
                top = int(np.argmax(logits))
                if gen[t] == top:
                    agree += 1
                elif logits[top] - logits[gen[t]] <= a.tie:
                    ties += 1
                else:
                    wrong += 1
            row = dict(shape=name, type=qt, ggml_types=types, exact=not summary["inexact"],
                       inexact_tensors=len(summary["inexact"]), max_abs_error_by_type=errors,
                       reported_max_abs_error=max(reported.values(), default=0.0),
                       exact_mismatches=len(exact_bad),
                       greedy_agree=agree, near_ties=ties, wrong=wrong)
            results.append(row)
            print(json.dumps(row))
    (a.work / "results.json").write_text(json.dumps(results, indent=2))
    bad = [r for r in results if r["wrong"] or r["exact_mismatches"]]
    print(f"{len(results)} files, {len(bad)} failing")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
