#!/usr/bin/env python3
"""Tiny phi2 GGUF models quantized by llama.cpp, and what phikit must make of them
(Tests/PhiKitTests/Fixtures/gguf/models/phi2*.gguf and phi2-goldens.json, read by
GGUFModelGoldenTests beside goldens.json, in the same form).

    python3 scripts/gguf/make_phi2_goldens.py   # needs gguf, numpy, torch, llama-cpp-python

A Phi-2-proportioned random model (scripts/engine/tiny_models.py's generator, seed 29: MHA,
hidden 64, 2 layers, 2 heads of 32, rotary 0.4 → 12 rotated dims, biases everywhere, LayerNorm)
with stories260K's 512-token SentencePiece vocabulary, written as an F32 GGUF in llama.cpp's
phi2 layout (convert_hf_to_gguf.py's Phi2Model hyperparameters: rope.dimension_count =
int(partial_rotary_factor * hidden) // heads, attention.layer_norm_epsilon), two ways:
  phi2       attn_q, attn_k, attn_v (what the converter writes for PhiForCausalLM today)
  phi2fused  attn_qkv weight and bias (GGUFs made from Phi-2's original mixer.Wqkv)
then quantized by llama.cpp itself (scripts/bench/quantize_gguf.py): phi2 to Q8_0, Q4_0 and
Q5_1, phi2fused to Q4_0. Goldens as make_model_goldens.py's: per Hugging Face tensor the GGML
type and the sha256 of gguf.quants.dequantize's float32 values; greedy tokens of a float64
forward pass over those stored values (scripts/engine/make_phi_goldens.py's, transformers'
PhiForCausalLM) with the top logits and spread per step; llama.cpp's greedy tokens.
"""
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import gguf
import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "scripts/engine"))
import make_model_goldens as mmg  # noqa: E402
import make_phi_goldens  # noqa: E402
import tiny_models as tm  # noqa: E402
from gguf_model import PHI2, stored_phi2  # noqa: E402

SEED = 29
CONFIG = tm.phi_config(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                       num_attention_heads=2, num_key_value_heads=2, vocab_size=512,
                       partial_rotary_factor=0.4, max_position_embeddings=2048)
FILES = {"phi2": (False, ["Q8_0", "Q4_0", "Q5_1"]), "phi2fused": (True, ["Q4_0"])}


def write_f32_gguf(path, cfg, fused):
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    w = gguf.GGUFWriter(str(path), "phi2")
    w.add_name("tiny random Phi 2")
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(h)
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_head_count(heads)
    w.add_head_count_kv(cfg["num_key_value_heads"])
    w.add_layer_norm_eps(cfg["layer_norm_eps"])
    w.add_rope_dimension_count(int(cfg["partial_rotary_factor"] * h) // heads)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    names = {v: k for k, v in PHI2.items()}
    weights = tm.weights(cfg, SEED, mmg.AMPLITUDE)
    for hf_name, v in weights.items():
        parts = hf_name.split(".")
        kind = parts[-1]
        if parts[1] != "layers":
            w.add_tensor(f"{names['.'.join(parts[:-1])]}.{kind}", v.astype(np.float32))
            continue
        module = ".".join(parts[3:-1])
        if fused and module in ("self_attn.k_proj", "self_attn.v_proj"):
            continue  # written with q_proj
        name = f"blk.{parts[2]}.{names[module]}.{kind}"
        if fused and module == "self_attn.q_proj":
            p = f"model.layers.{parts[2]}.self_attn."
            v = np.concatenate([weights[p + m + "." + kind] for m in ("q_proj", "k_proj", "v_proj")])
            name = f"blk.{parts[2]}.attn_qkv.{kind}"
        w.add_tensor(name, np.ascontiguousarray(v, dtype=np.float32))
    mmg.finish_with_stories_vocabulary(w)


def main():
    import llama_cpp

    files = []
    with tempfile.TemporaryDirectory() as work:
        for name, (fused, types) in FILES.items():
            f32 = Path(work) / f"{name}-F32.gguf"
            write_f32_gguf(f32, CONFIG, fused)
            for qt in types:
                path = mmg.OUT / f"{name}-{qt}.gguf"
                subprocess.run([sys.executable, str(REPO / "scripts/bench/quantize_gguf.py"),
                                str(f32), str(path), qt, "--threads", "1"], check=True,
                               capture_output=True)
                weights = stored_phi2(path)
                tensors = {}
                for hf_name, (v, t, gguf_name) in sorted(weights.items()):
                    plain = (v + np.float32(0)).astype("<f4")  # -0.0 as +0.0, as mmg does
                    assert t in mmg.EXACT, f"{path.name}: {hf_name} is {t}"
                    tensors[hf_name] = {"type": t, "gguf": gguf_name,
                                        "sha256": hashlib.sha256(plain.tobytes()).hexdigest()}
                files.append(mmg.golden_entry(path, name, qt, tensors, CONFIG, weights, work,
                                              make_phi_goldens.forward))
    golden = {"prompt": mmg.PROMPT, "seed": SEED, "amplitude": mmg.AMPLITUDE, "files": files,
              "configs": {"phi2": CONFIG, "phi2fused": CONFIG},
              "versions": {"llama_cpp_python": llama_cpp.__version__, "numpy": np.__version__}}
    (mmg.OUT / "phi2-goldens.json").write_text(json.dumps(golden, separators=(",", ":")) + "\n")
    print(f"wrote {mmg.OUT}/phi2-goldens.json", file=sys.stderr)


if __name__ == "__main__":
    main()
