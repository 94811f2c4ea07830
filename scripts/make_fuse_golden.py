#!/usr/bin/env python3
"""Golden files for `phikit fuse`, produced by `mlx_lm.fuse` itself.

Run with mlx 0.32.4 (CPU), mlx-lm 0.32.2:  python3 scripts/make_fuse_golden.py

The base models are the convert goldens' tiny checkpoints (scripts/make_convert_golden.py's
generator; the Swift tests rebuild them the same way) and, for quantized bases, the output of
one of its cases (which phikit convert reproduces byte for byte). What this script adds,
under Tests/PhiKitTests/Fixtures/fuse/:
  adapters/<name>/   adapters.safetensors + adapter_config.json in mlx_lm.lora's format:
      random lora_a / lora_b (and DoRA's m) for the modules mlx_lm would wrap (the last
      `num_layers` layers, `keys` or every Linear of a layer), small rank, so a few KB each;
  cases/<case>/      what `mlx_lm.fuse --model BASE --adapter-path ADAPTER [--dequantize]`
      wrote: manifest.json (options, files, every tensor's file/name/dtype/shape/sha256 in
      save order), config.json, model.safetensors.index.json, README.md -- the exact bytes.
"""

import contextlib
import hashlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_convert_golden as cg  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "Tests" / "PhiKitTests" / "Fixtures" / "fuse"

# The Linear modules of one layer that mlx_lm wraps when `keys` is absent (in module order).
LAYER_KEYS = {
    "phi3": ["self_attn.qkv_proj", "self_attn.o_proj", "mlp.gate_up_proj", "mlp.down_proj"],
    "phi": ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.dense",
            "mlp.fc1", "mlp.fc2"],
}

# name: (base source, fine_tune_type, num_layers, rank, scale, keys or None, dtype of a/b/m)
ADAPTERS = {
    "phi35-lora": ("phi35-bf16", "lora", 2, 4, 20.0, None, "float32"),
    "phi35-lora-head": ("phi35-bf16", "lora", 1, 2, 0.3,
                        ["self_attn.o_proj", "lm_head"], "float32"),
    "phi4-lora-partial": ("phi4-bf16", "lora", 1, 4, 0.3,
                          ["self_attn.qkv_proj", "mlp.down_proj"], "float32"),
    "phi4-dora": ("phi4-bf16", "dora", 2, 4, 2.0, None, "float32"),
    "phi4-lora-bf16": ("phi4-fp32", "lora", 2, 2, 16.0, None, "bfloat16"),
    "phi35-dora-f16": ("phi35-fp16", "dora", 1, 2, 8.0, None, "float16"),
    "phi2-lora": ("phi2-fp16", "lora", 2, 2, 10.0, None, "float32"),
    "phi2-dora": ("phi2-fp16", "dora", 1, 2, 10.0, ["self_attn.q_proj", "mlp.fc2"],
                  "float32"),
}

# name: (base: a convert source or case:<convert case>, adapter, --dequantize)
CASES = {
    "phi35-bf16-lora": ("phi35-bf16", "phi35-lora", False),
    "phi35-bf16-lora-head": ("phi35-bf16", "phi35-lora-head", False),
    "phi4-bf16-lora-partial": ("phi4-bf16", "phi4-lora-partial", False),
    "phi4-bf16-dora": ("phi4-bf16", "phi4-dora", False),
    "phi4-fp32-lora-bf16": ("phi4-fp32", "phi4-lora-bf16", False),
    "phi35-fp16-dora-f16": ("phi35-fp16", "phi35-dora-f16", False),
    "phi2-fp16-lora": ("phi2-fp16", "phi2-lora", False),
    "phi2-fp16-dora": ("phi2-fp16", "phi2-dora", False),
    "phi4-q4g64-lora": ("case:phi4-bf16-q4g64", "phi4-lora-partial", False),
    "phi4-q4g64-dora": ("case:phi4-bf16-q4g64", "phi4-dora", False),
    "phi4-q4g64-lora-dequantize": ("case:phi4-bf16-q4g64", "phi4-lora-partial", True),
    "phi35-q3g32-lora": ("case:phi35-bf16-q3g32", "phi35-lora", False),
    "phi2-q4g64-lora": ("case:phi2-fp16-q4g64", "phi2-lora", False),
    "phi4-mxfp4-lora": ("case:phi4-bf16-mxfp4", "phi4-lora-partial", False),
}


def module_shapes(cfg):
    """Linear module path (relative to a layer, or top level) -> [out, in]."""
    h, inter = cfg["hidden_size"], cfg["intermediate_size"]
    heads = cfg["num_attention_heads"]
    kv = cfg.get("num_key_value_heads", heads)
    hd = h // heads
    if cfg["model_type"] == "phi":
        return {"self_attn.q_proj": [h, h], "self_attn.k_proj": [h, h],
                "self_attn.v_proj": [h, h], "self_attn.dense": [h, h],
                "mlp.fc1": [inter, h], "mlp.fc2": [h, inter],
                "lm_head": [cfg["vocab_size"], h]}
    return {"self_attn.qkv_proj": [heads * hd + 2 * kv * hd, h],
            "self_attn.o_proj": [h, heads * hd], "mlp.gate_up_proj": [2 * inter, h],
            "mlp.down_proj": [h, inter], "lm_head": [cfg["vocab_size"], h]}


def make_adapter(name, out_dir: Path):
    import mlx.core as mx

    source, kind, num_layers, rank, scale, keys, dtype = ADAPTERS[name]
    cfg = cg.SOURCES[source][0]
    shapes = module_shapes(cfg)
    rng = np.random.default_rng(cg.fnv1a64(name) & 0xFFFFFFFF)
    layers = cfg["num_hidden_layers"]
    wanted = keys if keys is not None else LAYER_KEYS[cfg["model_type"]]
    tensors = {}
    for i in range(max(0, layers - num_layers), layers):
        for k in wanted:
            if k == "lm_head":
                continue
            out, inp = shapes[k]
            p = f"model.layers.{i}.{k}"
            tensors[p + ".lora_a"] = rng.uniform(-1, 1, (inp, rank)) / np.sqrt(inp)
            tensors[p + ".lora_b"] = rng.standard_normal((rank, out)) * 0.02
            if kind == "dora":
                tensors[p + ".m"] = rng.uniform(0.2, 0.5, (out,))
    if keys is not None and "lm_head" in keys:  # a top-level module: wrapped model-wide
        out, inp = shapes["lm_head"]
        tensors["lm_head.lora_a"] = rng.uniform(-1, 1, (inp, rank)) / np.sqrt(inp)
        tensors["lm_head.lora_b"] = rng.standard_normal((rank, out)) * 0.02
    out_dir.mkdir(parents=True, exist_ok=True)
    arrays = {k: mx.array(v.astype(np.float32)).astype(getattr(mx, dtype))
              for k, v in sorted(tensors.items())}
    mx.save_safetensors(str(out_dir / "adapters.safetensors"), arrays)
    params = {"rank": rank, "dropout": 0.0, "scale": scale}
    if keys is not None:
        params["keys"] = keys
    config = {"fine_tune_type": kind, "num_layers": num_layers, "lora_parameters": params,
              "model": source, "seed": 0}
    with open(out_dir / "adapter_config.json", "w") as f:
        json.dump(config, f, indent=4)


def run_fuse(base: Path, adapter: Path, out: Path, dequantize: bool, order_log):
    import mlx.core as mx
    from mlx_lm import fuse

    orig_save = mx.save_safetensors

    def spy(path, arrays, metadata=None):
        order_log.append((Path(path).name, list(arrays.keys())))
        return orig_save(path, arrays, metadata=metadata)

    argv = ["mlx_lm.fuse", "--model", str(base), "--adapter-path", str(adapter),
            "--save-path", str(out)] + (["--dequantize"] if dequantize else [])
    saved_argv = sys.argv
    sys.argv = argv
    mx.save_safetensors = spy
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            fuse.main()
    finally:
        mx.save_safetensors = orig_save
        sys.argv = saved_argv


def main():
    if OUT.exists():
        shutil.rmtree(OUT)
    work = Path(tempfile.mkdtemp(prefix="phikit-fuse-golden-"))
    models = {}

    def base_dir(spec):
        if spec in models:
            return models[spec]
        if spec.startswith("case:"):
            case = next(c for c in cg.case_list() if c["name"] == spec[5:])
            src = base_dir(case["source"])
            out = work / "bases" / case["name"]
            cg.run_case(case, src, out, [])
        else:
            out = work / "sources" / spec
            cg.build_source(spec, work / "fixture" / spec, out)
        models[spec] = out
        return out

    for name in ADAPTERS:
        make_adapter(name, OUT / "adapters" / name)
    for case, (base, adapter, dequantize) in CASES.items():
        out = work / "out" / case
        order = []
        run_fuse(base_dir(base), OUT / "adapters" / adapter, out, dequantize, order)
        tensors = []
        for fname, names in order:
            meta, ts = cg.read_tensors(out / fname)
            assert meta == {"format": "mlx"}, meta
            for n in names:
                dt, shape, b, _ = ts[n]
                tensors.append({"file": fname, "name": n, "dtype": dt, "shape": shape,
                                "sha256": hashlib.sha256(b).hexdigest()})
        manifest = {"case": case, "options": {"base": base, "adapter": adapter,
                                              "dequantize": dequantize},
                    "files": sorted(p.name for p in out.iterdir()), "tensors": tensors}
        cdir = OUT / "cases" / case
        cdir.mkdir(parents=True)
        with open(cdir / "manifest.json", "w") as f:
            f.write(cg.compact_manifest(manifest))
        for keep in ["config.json", "model.safetensors.index.json", "README.md"]:
            shutil.copy(out / keep, cdir / keep)
        print(f"{case}: {len(tensors)} tensors")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
