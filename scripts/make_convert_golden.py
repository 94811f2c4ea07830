#!/usr/bin/env python3
"""Golden files for `phikit convert`, produced by `mlx_lm.convert` itself.

Run with the reference venv:  /opt/phikit-ref/bin/python scripts/make_convert_golden.py
(mlx 0.32.4 CPU, mlx-lm 0.32.2, transformers 5.23; no torch needed.)

What it writes, under Tests/PhiKitTests/Fixtures/convert/:
  sources/<source>/   a TINY Hugging Face checkpoint, described rather than stored:
      config.json, generation_config.json (optional), *.py (optional),
      model.safetensors.index.json (sharded sources only) -- committed verbatim;
      weights.json -- the safetensors files to synthesise: per file, per tensor,
      name/dtype/shape/seed and the sha256 of the bytes the generator must produce.
      Weights are NOT committed (a bf16 Phi-3.5-shaped source that still has a
      128-wide hidden dim is ~0.7 MB; four of them would break the 1.5 MB budget).
      Instead both this script and the Swift tests build them from a counter-based
      splitmix64 generator that emits float BIT PATTERNS directly (no rounding
      anywhere), and the Swift side checks the source sha256s first.
      Tokenizer files are copied from Tests/Fixtures at generation AND test time
      (weights.json "tokenizer_files" maps output name -> fixture path).
  cases/<case>/       what mlx_lm.convert wrote for one option set:
      manifest.json   options, the sorted list of output files, every tensor
                      (file, name, dtype, shape, sha256 of its bytes, in the order mlx_lm
                      hands them to save_safetensors), the "bits per weight" line;
      config.json, model.safetensors.index.json, README.md -- the exact bytes.

Sources: Phi-3.5- and Phi-4-mini-shaped (model_type phi3) and Phi-2-shaped (phi).
Cases: q4/g64 for every source; the full bits x groups grid on both flavours; every
--q-mode (mxfp4, nvfp4, mxfp8) and --quant-predicate recipe (mixed_2_6 ... mixed_4_6) on
both flavours, with a --dequantize of each mode; --dtype
casts with and without -q; a no-op convert; a --dequantize of a quantized output
(source = another case's output); an MLX model re-saved with and without a cast; a
multi-shard output (make_shards patched to a byte
limit, since mlx_lm's 5 GB constant cannot be reached by a tiny model).
"""

import subprocess
import contextlib
import copy
import hashlib
import io
import json
import os
import shutil
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(subprocess.check_output([ROOT / "scripts" / "fixtures.sh"], text=True).strip())
OUT = ROOT / "Tests" / "PhiKitTests" / "Fixtures" / "convert"

MASK64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15

# ---------------------------------------------------------------- generator
# value i of a tensor = splitmix64(seed + (i+1)*GOLDEN); the bits are mapped to a float
# with a random sign, a random mantissa and an exponent in [-9, -2] (log-uniform
# magnitudes, like trained weights spanning a few octaves). Every row r with
# r % 17 == 3 is then made constant (its first value) to exercise the scale == 0 path.
# The Swift twin lives in Tests/PhiKitTests/ConvertFixtureGenerator.swift.


def splitmix(seed: int, n: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        i = np.arange(1, n + 1, dtype=np.uint64)
        z = np.uint64(seed) + i * np.uint64(GOLDEN)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def fnv1a64(s: str) -> int:
    h = 0xCBF29CE484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001B3) & MASK64
    return h


def gen_bits(dtype: str, shape, seed: int) -> bytes:
    n = int(np.prod(shape))
    z = splitmix(seed, n)
    sign = z & np.uint64(1)
    e_off = (z >> np.uint64(1)) % np.uint64(8)  # 0..7 -> exponent -2..-9
    if dtype == "BF16":
        e = np.uint64(125) - e_off
        m = (z >> np.uint64(8)) & np.uint64(0x7F)
        bits = ((sign << np.uint64(15)) | (e << np.uint64(7)) | m).astype(np.uint16)
    elif dtype == "F16":
        e = np.uint64(13) - e_off
        m = (z >> np.uint64(8)) & np.uint64(0x3FF)
        bits = ((sign << np.uint64(15)) | (e << np.uint64(10)) | m).astype(np.uint16)
    elif dtype == "F32":
        e = np.uint64(125) - e_off
        m = (z >> np.uint64(8)) & np.uint64(0x7FFFFF)
        bits = ((sign << np.uint64(31)) | (e << np.uint64(23)) | m).astype(np.uint32)
    else:
        raise ValueError(dtype)
    if len(shape) == 2:
        rows, cols = shape
        bits = bits.reshape(rows, cols)
        for r in range(3, rows, 17):
            bits[r, :] = bits[r, 0]
    return bits.astype(bits.dtype.newbyteorder("<")).tobytes()


# ---------------------------------------------------------------- HF checkpoints


def phi_tensors(cfg):
    """HF tensor names and shapes of a Phi-3 checkpoint, in HF's (sorted) order."""
    h, inter, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    heads = cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads", heads)
    hd = h // heads
    t = {"model.embed_tokens.weight": [v, h], "model.norm.weight": [h]}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = [h]
        t[p + "post_attention_layernorm.weight"] = [h]
        t[p + "self_attn.qkv_proj.weight"] = [heads * hd + 2 * kv * hd, h]
        t[p + "self_attn.o_proj.weight"] = [h, heads * hd]
        t[p + "mlp.gate_up_proj.weight"] = [2 * inter, h]
        t[p + "mlp.down_proj.weight"] = [h, inter]
    if not cfg.get("tie_word_embeddings", False):
        t["lm_head.weight"] = [v, h]
    return dict(sorted(t.items()))


def phi2_tensors(cfg):
    """HF tensor names and shapes of a phi (Phi-2) checkpoint, sorted: biases everywhere
    but the embedding."""
    h, inter, v = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    t = {"model.embed_tokens.weight": [v, h], "model.final_layernorm.weight": [h],
         "model.final_layernorm.bias": [h], "lm_head.weight": [v, h], "lm_head.bias": [v]}
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        for name, shape in [("self_attn.q_proj", [h, h]), ("self_attn.k_proj", [h, h]),
                            ("self_attn.v_proj", [h, h]), ("self_attn.dense", [h, h]),
                            ("mlp.fc1", [inter, h]), ("mlp.fc2", [h, inter]),
                            ("input_layernorm", [h])]:
            t[p + name + ".weight"] = shape
            t[p + name + ".bias"] = shape[:1]
    return dict(sorted(t.items()))


def phi2_config():
    """microsoft/phi-2's config.json (as transformers 4.37 wrote it; from knowledge, the Hub
    is not reachable here), shrunk."""
    return {
        "_name_or_path": "microsoft/phi-2", "architectures": ["PhiForCausalLM"],
        "attention_dropout": 0.0, "bos_token_id": 310, "embd_pdrop": 0.0, "eos_token_id": 310,
        "hidden_act": "gelu_new", "hidden_size": 128, "initializer_range": 0.02,
        "intermediate_size": 256, "layer_norm_eps": 1e-05, "max_position_embeddings": 2048,
        "model_type": "phi", "num_attention_heads": 4, "num_hidden_layers": 2,
        "num_key_value_heads": 4, "partial_rotary_factor": 0.4, "qk_layernorm": False,
        "resid_pdrop": 0.1, "rope_scaling": None, "rope_theta": 10000.0,
        "tie_word_embeddings": False, "torch_dtype": "float16",
        "transformers_version": "4.37.0", "use_cache": True, "vocab_size": 320}


def phi35_config(dtype_key="torch_dtype", dtype="bfloat16"):
    with open(SHARED / "microsoft--Phi-3.5-mini-instruct" / "config.json") as f:
        cfg = json.load(f)
    cfg.update(hidden_size=128, intermediate_size=192, num_hidden_layers=2,
               num_attention_heads=4, num_key_value_heads=4, vocab_size=320)
    rot = 128 // 4 // 2  # head_dim 32, full rotary -> 16 factors
    cfg["rope_scaling"]["long_factor"] = cfg["rope_scaling"]["long_factor"][:rot]
    cfg["rope_scaling"]["short_factor"] = cfg["rope_scaling"]["short_factor"][:rot]
    # token ids moved inside the tiny vocabulary (phikit validates them; mlx_lm does not)
    cfg.update(bos_token_id=1, eos_token_id=300, pad_token_id=300)
    if dtype_key != "torch_dtype":
        # transformers >= 4.56 writes "dtype"; mlx_lm.convert only looks at torch_dtype
        del cfg["torch_dtype"]
    cfg[dtype_key] = dtype
    return cfg


def phi4_config(dtype="bfloat16"):
    path = SHARED / "_derived" / "mlx-community--Phi-4-mini-instruct-4bit" / "config.json"
    with open(path) as f:
        cfg = json.load(f)
    cfg.pop("quantization")
    cfg.pop("quantization_config")
    cfg.update(hidden_size=128, intermediate_size=160, num_hidden_layers=2,
               num_attention_heads=4, num_key_value_heads=2, vocab_size=320)
    rot = int(128 // 4 * 0.75) // 2  # rope_dim 24 -> 12 factors
    cfg["rope_scaling"]["long_factor"] = cfg["rope_scaling"]["long_factor"][:rot]
    cfg["rope_scaling"]["short_factor"] = cfg["rope_scaling"]["short_factor"][:rot]
    cfg.update(bos_token_id=299, eos_token_id=310, pad_token_id=299)
    cfg["torch_dtype"] = dtype
    return cfg


PHI35_TOKENIZER = {n: f"microsoft--Phi-3.5-mini-instruct/{n}" for n in [
    "added_tokens.json", "special_tokens_map.json", "tokenizer.json",
    "tokenizer.model", "tokenizer_config.json"]}
PHI4_TOKENIZER = {n: f"_derived/microsoft--Phi-4-mini-instruct/{n}" for n in [
    "tokenizer.json", "tokenizer_config.json"]}

# Phi-3.5's generation_config.json with its ids (32007, 32001, 32000) moved into the vocab.
PHI35_GENCONFIG = {"_from_model_config": True, "bos_token_id": 1,
                   "eos_token_id": [307, 301, 300], "pad_token_id": 300,
                   "transformers_version": "4.43.3"}
PHI4_GENCONFIG = {"bos_token_id": 299, "eos_token_id": [310, 299],
                  "pad_token_id": 299, "transformers_version": "4.45.0"}
PY_STUB = '# stand-in for a remote-code file; mlx_lm.convert copies every *.py\n'

# name: (config, dtype of the stored weights, shards, generation config, extra files)
SOURCES = {
    "phi35-bf16": (phi35_config(), "BF16", 2, "phi35", {"configuration_phi3.py": PY_STUB}),
    "phi35-fp16": (phi35_config(dtype="float16"), "F16", 1, "phi35", {}),
    "phi35-dtypekey-fp32": (phi35_config("dtype", "bfloat16"), "F32", 1, None, {}),
    "phi4-bf16": (phi4_config(), "BF16", 1, None, {}),
    "phi4-fp32": (phi4_config("float32"), "F32", 1, "phi4", {}),
    "phi2-fp16": (phi2_config(), "F16", 1, None, {}),
}

DT_SIZE = {"BF16": 2, "F16": 2, "F32": 4, "U32": 4}


def write_safetensors(path: Path, tensors, metadata):
    """tensors: list of (name, dtype, shape, bytes) in file order (HF-style, padded)."""
    header, off = {"__metadata__": metadata}, 0
    for name, dt, shape, b in tensors:
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(b)]}
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for *_, b in tensors:
            f.write(b)


def build_source(name, fixture_dir: Path, model_dir: Path):
    cfg, dt, nshards, gen, extra = SOURCES[name]
    fixture_dir.mkdir(parents=True, exist_ok=True)
    model_dir.mkdir(parents=True, exist_ok=True)
    with open(fixture_dir / "config.json", "w") as f:
        json.dump(cfg, f, indent=2)
    if gen:
        with open(fixture_dir / "generation_config.json", "w") as f:
            json.dump(PHI35_GENCONFIG if gen == "phi35" else PHI4_GENCONFIG, f, indent=2)
    for fname, text in extra.items():
        (fixture_dir / fname).write_text(text)

    names = list((phi2_tensors if cfg["model_type"] == "phi" else phi_tensors)(cfg).items())
    per = -(-len(names) // nshards)
    files, weight_map, total = [], {}, 0
    for s in range(nshards):
        fname = "model.safetensors" if nshards == 1 else \
            f"model-{s + 1:05d}-of-{nshards:05d}.safetensors"
        entries, data = [], []
        for tname, shape in names[s * per:(s + 1) * per]:
            seed = fnv1a64(f"{name}:{tname}")
            b = gen_bits(dt, shape, seed)
            data.append((tname, dt, shape, b))
            entries.append({"name": tname, "dtype": dt, "shape": shape,
                            "seed": f"{seed:016x}",
                            "sha256": hashlib.sha256(b).hexdigest()})
            weight_map[tname] = fname
            total += len(b)
        write_safetensors(model_dir / fname, data, {"format": "pt"})
        files.append({"file": fname, "metadata": {"format": "pt"}, "tensors": entries})
    if nshards > 1:
        with open(fixture_dir / "model.safetensors.index.json", "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": weight_map},
                      f, indent=2)
    tok = PHI35_TOKENIZER if name.startswith("phi35") else PHI4_TOKENIZER
    with open(fixture_dir / "weights.json", "w") as f:
        json.dump({"generator": "splitmix64-bits-v1", "files": files,
                   "tokenizer_files": tok}, f, indent=1)
    # the model dir = committed files + synthesised weights + tokenizer copies
    for p in fixture_dir.iterdir():
        if p.name != "weights.json":
            shutil.copyfile(p, model_dir / p.name)
    for out_name, rel in tok.items():
        shutil.copyfile(SHARED / rel, model_dir / out_name)


# ---------------------------------------------------------------- cases

BITS = [2, 3, 4, 5, 6, 8]
GROUPS = [32, 64, 128]
MODES = ["mxfp4", "nvfp4", "mxfp8"]
RECIPES = ["mixed_2_6", "mixed_3_4", "mixed_3_6", "mixed_4_6"]


def case_list():
    cases = []
    for src in SOURCES:
        cases.append(dict(name=f"{src}-q4g64", source=src, quantize=True, bits=4, group=64))
    for src in ["phi35-bf16", "phi4-bf16"]:
        for b in BITS:
            for g in GROUPS:
                if (b, g) != (4, 64):
                    cases.append(dict(name=f"{src}-q{b}g{g}", source=src, quantize=True,
                                      bits=b, group=g))
    cases += [
        dict(name="phi35-bf16-f16", source="phi35-bf16", dtype="float16"),
        dict(name="phi35-bf16-f32-q4g64", source="phi35-bf16", quantize=True, bits=4,
             group=64, dtype="float32"),
        dict(name="phi4-fp32-bf16-q3g32", source="phi4-fp32", quantize=True, bits=3,
             group=32, dtype="bfloat16"),
        dict(name="phi35-fp16-bf16", source="phi35-fp16", dtype="bfloat16"),
        dict(name="phi4-bf16-copy", source="phi4-bf16"),
        dict(name="phi4-bf16-q4g64-dequant", source="case:phi4-bf16-q4g64", dequantize=True),
        dict(name="phi35-bf16-q3g32-dequant-f32", source="case:phi35-bf16-q3g32",
             dequantize=True, dtype="float32"),
        # an MLX model re-saved: packed weights kept, scales/biases cast (or not)
        dict(name="phi4-bf16-q4g64-resave", source="case:phi4-bf16-q4g64"),
        dict(name="phi4-bf16-q4g64-resave-f16", source="case:phi4-bf16-q4g64", dtype="float16"),
        dict(name="phi35-bf16-q4g64-shards", source="phi35-bf16", quantize=True, bits=4,
             group=64, max_shard_bytes=60000),
    ]
    # MLX's other formats (issue 18): every --q-mode and --quant-predicate on both flavours,
    # a float32 source through the fp modes (mlx computes them in the source dtype), and a
    # --dequantize of each mode (mlx dequantizes fp modes to bfloat16 whatever --dtype says).
    for src in ["phi35-bf16", "phi4-bf16"]:
        for mode in MODES:
            cases.append(dict(name=f"{src}-{mode}", source=src, quantize=True, mode=mode))
        for recipe in RECIPES:
            cases.append(dict(name=f"{src}-{recipe}", source=src, quantize=True,
                              quant_predicate=recipe))
    # model_type phi: biases on every Linear and LayerNorm (mlx_lm refuses the mixed recipes:
    # no down_proj)
    cases += [
        dict(name="phi2-fp16-q8g32", source="phi2-fp16", quantize=True, bits=8, group=32),
        dict(name="phi2-fp16-mxfp4", source="phi2-fp16", quantize=True, mode="mxfp4"),
        dict(name="phi2-fp16-bf16", source="phi2-fp16", dtype="bfloat16"),
        dict(name="phi2-fp16-q4g64-dequant", source="case:phi2-fp16-q4g64", dequantize=True),
    ]
    cases += [
        dict(name="phi4-fp32-mxfp4", source="phi4-fp32", quantize=True, mode="mxfp4"),
        dict(name="phi35-fp16-nvfp4", source="phi35-fp16", quantize=True, mode="nvfp4"),
        dict(name="phi35-bf16-mixed_3_6-g32", source="phi35-bf16", quantize=True, group=32,
             quant_predicate="mixed_3_6"),
        dict(name="phi4-bf16-mxfp4-dequant", source="case:phi4-bf16-mxfp4", dequantize=True),
        dict(name="phi35-bf16-nvfp4-dequant-f16", source="case:phi35-bf16-nvfp4",
             dequantize=True, dtype="float16"),
        dict(name="phi4-bf16-mxfp8-dequant", source="case:phi4-bf16-mxfp8", dequantize=True),
        dict(name="phi35-bf16-mixed_2_6-dequant", source="case:phi35-bf16-mixed_2_6",
             dequantize=True),
        dict(name="phi4-bf16-mxfp4-resave", source="case:phi4-bf16-mxfp4"),
    ]
    return cases


def patched_make_shards(limit):
    """mlx_lm.utils.make_shards with a byte limit instead of `gb << 30`."""
    def make_shards(weights, max_file_size_gb=None):
        shards, size = [], 0
        for k, v in weights.items():
            if not shards or size + v.nbytes > limit:
                shards.append({})
                size = 0
            shards[-1][k] = v
            size += v.nbytes
        return shards
    return make_shards


def read_tensors(path: Path):
    b = path.read_bytes()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8:8 + n])
    meta = header.pop("__metadata__", None)
    out = {}
    for name, t in header.items():
        s, e = t["data_offsets"]
        out[name] = (t["dtype"], t["shape"], b[8 + n + s:8 + n + e], s)
    return meta, out


def run_case(case, src_dir: Path, out_dir: Path, order_log):
    import mlx_lm
    import mlx_lm.utils as mu
    import mlx.core as mx

    # record the order in which mlx_lm hands the tensors to the writer
    orig_save = mx.save_safetensors
    orig_shards = mu.make_shards

    def spy(path, arrays, metadata=None):
        order_log.append((Path(path).name, list(arrays.keys())))
        return orig_save(path, arrays, metadata=metadata)

    mx.save_safetensors = spy
    if "max_shard_bytes" in case:
        mu.make_shards = patched_make_shards(case["max_shard_bytes"])
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            mlx_lm.convert(str(src_dir), str(out_dir), quantize=case.get("quantize", False),
                           q_bits=case.get("bits"), q_group_size=case.get("group"),
                           dtype=case.get("dtype"), dequantize=case.get("dequantize", False),
                           q_mode=case.get("mode", "affine"),
                           quant_predicate=case.get("quant_predicate"))
    finally:
        mx.save_safetensors = orig_save
        mu.make_shards = orig_shards
    return buf.getvalue()


def compact_manifest(m) -> str:
    """JSON with one line per tensor: small to commit, easy to diff."""
    lines = ["{"]
    for k, v in m.items():
        if k == "tensors":
            rows = [json.dumps(t, separators=(",", ":")) for t in v]
            lines.append(' "tensors": [\n  ' + ",\n  ".join(rows) + "\n ],")
        else:
            lines.append(f" {json.dumps(k)}: {json.dumps(v)},")
    lines[-1] = lines[-1].rstrip(",")
    return "\n".join(lines) + "\n}\n"


def main():
    # `make_convert_golden.py PREFIX` remakes only the sources named PREFIX… and their cases
    # (the whole set takes half an hour on a loaded machine); no argument remakes everything.
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    if not only and OUT.exists():
        shutil.rmtree(OUT)
    work = Path(tempfile.mkdtemp(prefix="phikit-convert-golden-"))
    models = {}
    for src in SOURCES:
        if not src.startswith(only):
            continue
        models[src] = work / "src" / src
        shutil.rmtree(OUT / "sources" / src, ignore_errors=True)
        build_source(src, OUT / "sources" / src, models[src])
    for case in case_list():
        src = case["source"]
        if not src.removeprefix("case:").startswith(only):
            continue
        shutil.rmtree(OUT / "cases" / case["name"], ignore_errors=True)
        src_dir = models[src[5:]] if src.startswith("case:") else models[src]
        out_dir = work / "out" / case["name"]
        order = []
        log = run_case(case, src_dir, out_dir, order)
        models[case["name"]] = out_dir
        bpw = next((l.split("with ")[1].split(" bits")[0] for l in log.splitlines()
                    if "bits per weight" in l), None)
        files = sorted(p.name for p in out_dir.iterdir())
        tensors = []
        for fname, names in order:
            meta, ts = read_tensors(out_dir / fname)
            assert meta == {"format": "mlx"}, meta
            assert sorted(names) == sorted(ts), (names, ts.keys())
            for n in names:
                dt, shape, b, _ = ts[n]
                tensors.append({"file": fname, "name": n, "dtype": dt, "shape": shape,
                                "sha256": hashlib.sha256(b).hexdigest()})
        options = {k: v for k, v in case.items() if k not in ("name",)}
        manifest = {"case": case["name"], "options": options, "files": files,
                    "bits_per_weight": bpw, "tensors": tensors, "log": log.splitlines()}
        cdir = OUT / "cases" / case["name"]
        cdir.mkdir(parents=True)
        with open(cdir / "manifest.json", "w") as f:
            f.write(compact_manifest(manifest))
        for keep in ["config.json", "model.safetensors.index.json", "README.md"]:
            shutil.copy(out_dir / keep, cdir / keep)
        print(f"{case['name']}: {len(tensors)} tensors, bpw {bpw}, files {files}")
    if os.environ.get("KEEP_WORK"):
        print("kept", work)
    else:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
