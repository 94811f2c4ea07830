#!/usr/bin/env python3
"""Tiny phi3 GGUF models quantized by llama.cpp, and what phikit must make of them
(Tests/PhiKitTests/Fixtures/gguf/models/: the .gguf files and goldens.json).

    python3 scripts/gguf/make_model_goldens.py        # needs gguf, numpy, mlx, llama-cpp-python

Four shapes, weights from scripts/engine/tiny_models.py's generator (seed 19):
  phi35      MHA, untied, LongRoPE                                hidden 64, 2 layers
  phi4mini   GQA 4:2, partial rotary 0.75, tied embeddings        hidden 64, 2 layers
  phi35k / phi4minik   the same kinds at hidden 256, 1 layer (k-quants need rows of 256)
with stories260K's 512-token SentencePiece vocabulary. Each is written as an F32 GGUF with the
gguf package (llama.cpp's phi3 layout, through scripts/bench/make_gguf.py's hyperparameters),
then quantized by llama.cpp itself (llama_cpp.llama_model_quantize, scripts/bench/
quantize_gguf.py): phi35 to Q8_0, Q4_0, Q4_1, Q5_0, Q5_1; phi4mini to Q8_0 and Q4_0; the
k-shapes to Q4_K_M. And stories260K.gguf itself (architecture llama: Q/K rows stored permuted
for GGML's rope) quantized to Q4_0 and Q8_0: phikit must un-permute the quantized attn_q/attn_k
rows (its reference config: karpathy--stories260K-phi3). llama.cpp picks the mix (Q4_0 files keep a Q8_0 output matrix, Q4_K_M
files hold Q4_K, Q5_K and Q6_K). The F32 intermediates are not kept.

goldens.json, per file:
- tensors: per Hugging Face name its GGUF name, GGML type and the sha256 of its values as
  gguf.quants.dequantize gives them (float32, little-endian, row-major, -0.0 as +0.0): phikit's
  converted tensor (scale*q + bias in float32) must hash the same for every exact type;
  for the others (Q6_K), `mlx_error` is the max abs error of mlx.core.quantize's 8-bit g32
  affine quantization of those values: phikit's re-quantization must not be worse.
- reference: greedy tokens of a float64 forward pass over the stored values
  (scripts/engine/make_mx_oracle.py's forward), with the top 8 logits and the spread per step;
- llama: llama.cpp's own greedy tokens on the file (scripts/bench/run_llamacpp.py, 1 thread),
  and `llama_agrees`, how many of them equal the reference's before the first difference.
The context stays below original_max_position_embeddings, so every engine uses the short
LongRoPE factors (llama.cpp chooses by context size, the others by sequence length).
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import gguf
import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "scripts/engine"))
sys.path.insert(0, str(REPO / "scripts/bench"))
import make_gguf  # noqa: E402
import make_mx_oracle  # noqa: E402
import tiny_models as tm  # noqa: E402
from gguf_model import HF, stored  # noqa: E402

OUT = REPO / "Tests/PhiKitTests/Fixtures/gguf/models"
STORIES = Path(subprocess.check_output([REPO / "scripts/fixtures.sh"], text=True).strip()) \
    / "karpathy--tinyllamas/stories260K.gguf"
SEED, AMPLITUDE, NEW_TOKENS, TOP = 19, 0.25, 24, 8
PROMPT = make_mx_oracle.PROMPT
EXACT = {"F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K"}


def shape(hidden, inter, layers, heads, kv, partial, tied):
    rope = int(hidden // heads * partial)
    short, long = tm.longrope_factors(rope // 2, 0.03, 0.5)
    return tm.phi3_config(
        hidden_size=hidden, intermediate_size=inter, num_hidden_layers=layers,
        num_attention_heads=heads, num_key_value_heads=kv, vocab_size=512,
        partial_rotary_factor=partial, tie_word_embeddings=tied, sliding_window=None,
        max_position_embeddings=8192, original_max_position_embeddings=4096,
        rope_scaling={"type": "longrope", "short_factor": short, "long_factor": long})


SHAPES = {
    "phi35": (shape(64, 128, 2, 4, 4, 1.0, False), ["Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1"]),
    "phi4mini": (shape(64, 128, 2, 4, 2, 0.75, True), ["Q8_0", "Q4_0"]),
    "phi35k": (shape(256, 256, 1, 4, 4, 1.0, False), ["Q4_K_M"]),
    "phi4minik": (shape(256, 256, 1, 8, 2, 0.75, True), ["Q4_K_M"]),
}


def gguf_name(hf_name):
    """model.layers.0.self_attn.qkv_proj.weight -> blk.0.attn_qkv.weight (llama.cpp's phi3)."""
    names = {v: k for k, v in HF.items()}
    parts = hf_name.split(".")
    if parts[1] == "layers":
        return f"blk.{parts[2]}.{names['.'.join(parts[3:-1])]}.weight"
    return names[".".join(parts[:-1])] + ".weight"


def write_f32_gguf(path, name, cfg):
    """The F32 GGUF llama.cpp's converter would write for these weights (phi3 layout)."""
    w = gguf.GGUFWriter(str(path), "phi3")
    # Not "phi3" in the name: llama.cpp would then look for Phi-3's special tokens, which the
    # stories vocabulary has not (its loader throws unordered_map::at).
    w.add_name(f"tiny random {name.replace('phi', 'Phi ')}")
    for hf_name, v in tm.weights(cfg, SEED, AMPLITUDE).items():
        w.add_tensor(gguf_name(hf_name), np.ascontiguousarray(v, dtype=np.float32))
    _, long_f, short_f, _ = make_gguf.rope_params(cfg)
    w.add_tensor("rope_factors_long.weight", np.array(long_f, dtype=np.float32))
    w.add_tensor("rope_factors_short.weight", np.array(short_f, dtype=np.float32))
    make_gguf.add_hparams(w, cfg, gguf.LlamaFileType.ALL_F32)
    finish_with_stories_vocabulary(w)


def finish_with_stories_vocabulary(w):
    """Adds stories260K's 512-token SentencePiece vocabulary and writes the file out."""
    stories = gguf.GGUFReader(str(STORIES))
    w.add_tokenizer_model("llama")
    w.add_token_list(stories.fields["tokenizer.ggml.tokens"].contents())
    w.add_token_scores(stories.fields["tokenizer.ggml.scores"].contents())
    w.add_token_types(stories.fields["tokenizer.ggml.token_type"].contents())
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def mlx_error(values):
    """Max abs error of mlx's own affine 8-bit g32 quantization of these values."""
    import mlx.core as mx

    x = mx.array(values)
    wq, s, b = mx.quantize(x, group_size=32, bits=8)
    back = np.array(mx.dequantize(wq, s, b, group_size=32, bits=8).astype(mx.float32))
    return float(np.abs(back.astype(np.float64) - values).max())


def reference(cfg, weights, forward=make_mx_oracle.forward):
    """Greedy tokens of a float64 `forward` over the stored values ({name: (values, …)}),
    with the top logits and the spread at each step."""
    w = {k: v[0].astype(np.float64) for k, v in weights.items()}
    seq, steps = list(PROMPT), []
    for _ in range(NEW_TOKENS):
        logits = forward(cfg, w, seq)
        top = np.argsort(-logits, kind="stable")[:TOP]
        steps.append({"top": [[int(i), float(logits[i])] for i in top],
                      "spread": float(logits.max() - logits.min())})
        seq.append(int(top[0]))
    return seq[len(PROMPT):], steps


def llama_greedy(path, work):
    ids = Path(work) / "prompt.json"
    ids.write_text(json.dumps(PROMPT))
    r = subprocess.run([sys.executable, str(REPO / "scripts/bench/run_llamacpp.py"), str(path),
                        "--prompt-ids", str(ids), "-m", str(NEW_TOKENS), "--threads", "1"],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["tokens"]


def golden_entry(path, shape, qt, tensors, cfg, weights, work, forward=make_mx_oracle.forward):
    """One file's goldens: its tensors' entries, the float64 reference walk with `forward`
    and llama.cpp's greedy tokens (and how far they agree)."""
    tokens, steps = reference(cfg, weights, forward)
    llama = llama_greedy(path, work)
    agree = next((i for i, (a, b) in enumerate(zip(llama, tokens)) if a != b), len(tokens))
    print(f"{path.name}: {os.path.getsize(path)} bytes, types "
          f"{sorted({t['type'] for t in tensors.values()})}, llama.cpp agrees with "
          f"the reference for {agree} of {len(tokens)} tokens", file=sys.stderr)
    return {"file": path.name, "shape": shape, "type": qt, "tensors": tensors,
            "reference": tokens, "steps": steps, "llama": llama, "llama_agrees": agree}


def stories_config():
    """stories260K's phi3 config, in the form make_mx_oracle.forward reads (plain rope)."""
    cfg = json.loads((STORIES.parents[1] / "karpathy--stories260K-phi3/config.json").read_text())
    half = cfg["hidden_size"] // cfg["num_attention_heads"] // 2
    cfg["rope_scaling"] = {"type": "longrope", "short_factor": [1.0] * half, "long_factor": [1.0] * half}
    return cfg


def main():
    import llama_cpp

    OUT.mkdir(parents=True, exist_ok=True)
    files = []
    with tempfile.TemporaryDirectory() as work:
        sources = [(name, cfg, types, None) for name, (cfg, types) in SHAPES.items()]
        sources.append(("stories260K", stories_config(), ["Q4_0", "Q8_0"], STORIES))
        for name, cfg, types, source in sources:
            f32 = source or Path(work) / f"{name}-F32.gguf"
            if source is None:
                write_f32_gguf(f32, name, cfg)
            for qt in types:
                path = OUT / f"{name}-{qt}.gguf"
                subprocess.run([sys.executable, str(REPO / "scripts/bench/quantize_gguf.py"),
                                str(f32), str(path), qt, "--threads", "1"], check=True,
                               capture_output=True)
                weights = stored(path)
                tensors = {}
                for hf_name, (v, t) in sorted(weights.items()):
                    parts = t.split("+")
                    # + 0 makes -0.0 (d*(q-8) with a negative d) +0.0: values compared, not signs
                    # of zero (phikit's d*q + (-8d) yields +0.0 there).
                    plain = (v + np.float32(0)).astype("<f4")
                    entry = {"type": t, "sha256": hashlib.sha256(plain.tobytes()).hexdigest()}
                    if len(parts) == 1:
                        entry["gguf"] = gguf_name(hf_name)
                    if not set(parts) <= EXACT:
                        entry["mlx_error"] = mlx_error(v)
                    tensors[hf_name] = entry
                files.append(golden_entry(path, name, qt, tensors, cfg, weights, work))
    import mlx.core as mx

    golden = {"prompt": PROMPT, "seed": SEED, "amplitude": AMPLITUDE, "files": files,
              "configs": {n: c for n, c, _, _ in sources},
              "versions": {"gguf": gguf.__version__ if hasattr(gguf, "__version__") else "",
                           "llama_cpp_python": llama_cpp.__version__, "mlx": mx.__version__,
                           "numpy": np.__version__}}
    (OUT / "goldens.json").write_text(json.dumps(golden, separators=(",", ":")) + "\n")
    print(f"wrote {OUT}/goldens.json", file=sys.stderr)


if __name__ == "__main__":
    main()
