#!/usr/bin/env python3
"""Write a Phi-3-shaped Hugging Face checkpoint with random weights, for `make bench`.

    make_random_checkpoint.py OUT_DIR [--config PATH] [--tokenizer-dir DIR] [--dtype bfloat16]
                              [--seed N] [--small]

Default: full-size Phi-3.5-mini (shapes from the fixture config.json, tensor names and the
2-shard split from the fixture model.safetensors.index.json): 195 tensors, 3.82 B params,
7.64 GB in bf16. `--small` shrinks the dims (2 layers, 4 heads of the config's head_dim,
GQA kept when the config has it; the vocabulary stays full) for a quick smoke test.
Any phi3 config works: scripts/bench/configs/phi4-mini-config.json gives Phi-4-mini's shape
(GQA 24/8, vocab 200064, tied embeddings: no lm_head tensor), with
`--tokenizer-dir $(scripts/fixtures.sh)/_derived/microsoft--Phi-4-mini-instruct`.

Why written by hand: the safetensors format is 8-byte LE header length + JSON header + raw
data, so we can stream one chunk at a time and never hold 7.6 GB in RAM (safetensors'
Python API wants every tensor in memory at once).

Values: i.i.d. draws from N(0, 0.02) discretised to the output dtype. We build a 65536-entry
inverse-CDF table (quantile (i+0.5)/65536, rounded to bf16/fp16 with round-to-nearest-even)
and index it with random uint16s. That is ~10x faster than rng.standard_normal + rounding
(~300 M values/s vs ~20 M/s here), and exact as a sample of "normal, rounded to bf16" up to
the tails being clipped at ~4.3 sigma. float32 output uses rng.standard_normal (slower).

Re-running with the same arguments is a no-op: OUT_DIR/.random-checkpoint.json records what
was generated. The checkpoint is written into OUT_DIR.partial and renamed at the end, so an
interrupted run never leaves a dir that looks complete.
"""
import subprocess
import argparse
import hashlib
import json
import os
import shutil
import struct
import sys
import time
import zlib
from pathlib import Path
from statistics import NormalDist

import numpy as np

STAMP = ".random-checkpoint.json"
GENERATOR_VERSION = 1  # bump when the output bytes would change for the same arguments
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_FIXTURE = Path(os.environ.get("PHIKIT_FIXTURES") or subprocess.check_output(
    [REPO_ROOT / "scripts/fixtures.sh"], text=True).strip()) \
    / "microsoft--Phi-3.5-mini-instruct"
# Files copied next to the weights so mlx_lm.convert / phikit convert can load the tokenizer.
AUX_FILES = ["config.json", "generation_config.json", "tokenizer.json", "tokenizer.model",
             "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"]
SAFETENSORS_DTYPE = {"bfloat16": "BF16", "float16": "F16", "float32": "F32"}
ITEMSIZE = {"bfloat16": 2, "float16": 2, "float32": 4}
CHUNK = 1 << 25  # elements per write: 64 MB of bf16, keeps RSS ~ 0.5 GB
STD = 0.02
SHARD_LIMIT = 5 * 10**9  # transformers' default max_shard_size "5GB", used when there is no index


def die(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def phi3_tensors(cfg):
    """{name: shape} of a Phi3ForCausalLM checkpoint, from config.json (HF naming)."""
    try:
        h, inter, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
        heads, vocab = cfg["num_attention_heads"], cfg["vocab_size"]
    except KeyError as e:
        die(f"config.json has no field {e}")
    if cfg.get("model_type") != "phi3":
        die(f"model_type {cfg.get('model_type')!r}: only phi3 shapes are known to this script")
    kv = cfg.get("num_key_value_heads") or heads
    head_dim = cfg.get("head_dim") or h // heads
    t = {"model.embed_tokens.weight": [vocab, h], "model.norm.weight": [h]}
    if not cfg.get("tie_word_embeddings", False):
        t["lm_head.weight"] = [vocab, h]
    for i in range(layers):
        p = f"model.layers.{i}."
        t[p + "input_layernorm.weight"] = [h]
        t[p + "post_attention_layernorm.weight"] = [h]
        t[p + "self_attn.qkv_proj.weight"] = [(heads + 2 * kv) * head_dim, h]
        t[p + "self_attn.o_proj.weight"] = [h, heads * head_dim]
        t[p + "mlp.gate_up_proj.weight"] = [2 * inter, h]
        t[p + "mlp.down_proj.weight"] = [h, inter]
    return t


def plan_shards(tensors, index_path, itemsize):
    """[(file name, [tensor names sorted])]. Follows the real repo's index when names match."""
    if index_path and index_path.exists():
        wm = json.loads(index_path.read_text())["weight_map"]
        if set(wm) == set(tensors):
            files = sorted(set(wm.values()))
            return [(f, sorted(n for n in tensors if wm[n] == f)) for f in files]
        print(f"note: tensor names differ from {index_path.name}; sharding greedily at 5 GB")
    shards, size = [], 0
    for n in sorted(tensors):
        nb = int(np.prod(tensors[n])) * itemsize
        if not shards or size + nb > SHARD_LIMIT:
            shards.append([])
            size = 0
        shards[-1].append(n)
        size += nb
    if len(shards) == 1:
        return [("model.safetensors", shards[0])]
    k = len(shards)
    return [(f"model-{i + 1:05d}-of-{k:05d}.safetensors", s) for i, s in enumerate(shards)]


def normal_table(dtype):
    """65536 quantiles of N(0, STD) as raw uint16 bits of bf16/fp16 (round-to-nearest-even)."""
    nd = NormalDist(0.0, STD)
    q = np.array([nd.inv_cdf((i + 0.5) / 65536) for i in range(65536)], dtype=np.float32)
    if dtype == "float16":
        return q.astype(np.float16).view(np.uint16)
    u = q.view(np.uint32)  # bf16 = top 16 bits of fp32, rounded to nearest even (no NaNs here)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def write_shard(path, names, tensors, dtype, seed, table, progress):
    st = SAFETENSORS_DTYPE[dtype]
    item = ITEMSIZE[dtype]
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for n in names:
        nb = int(np.prod(tensors[n])) * item
        header[n] = {"dtype": st, "shape": tensors[n], "data_offsets": [off, off + nb]}
        off += nb
    hb = json.dumps(header, separators=(",", ":")).encode()
    hb += b" " * (-len(hb) % 8)  # pad so the data starts 8-byte aligned, like safetensors does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        for n in names:
            # One generator per tensor, seeded by (seed, name): bytes don't depend on shard layout.
            rng = np.random.Generator(np.random.PCG64([seed, zlib.crc32(n.encode())]))
            left = int(np.prod(tensors[n]))
            while left:
                k = min(left, CHUNK)
                if table is not None:
                    # random_raw gives 64 uniform bits per call: 4 table indices each.
                    idx = rng.bit_generator.random_raw((k + 3) // 4).view(np.uint16)[:k]
                    table[idx].tofile(f)
                else:
                    (rng.standard_normal(k, dtype=np.float32) * np.float32(STD)).tofile(f)
                left -= k
                progress(k * item)
    return off


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--config", type=Path, default=DEFAULT_FIXTURE / "config.json",
                    help="HF config.json to take shapes from; its directory supplies the "
                         "index.json (shard split) and tokenizer files (default: %(default)s)")
    ap.add_argument("--tokenizer-dir", type=Path,
                    help="copy the tokenizer/generation files from here instead of the "
                         "config's directory")
    ap.add_argument("--dtype", default="bfloat16", choices=sorted(SAFETENSORS_DTYPE))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--small", action="store_true",
                    help="tiny Phi-3.5-shaped model (2 layers, hidden 384) for smoke tests")
    a = ap.parse_args()

    if not a.config.is_file():
        die(f"config not found: {a.config} (set --config or PHIKIT_FIXTURES)")
    src = a.config.parent
    aux_src = a.tokenizer_dir or src
    if not aux_src.is_dir():
        die(f"tokenizer dir not found: {aux_src}")
    cfg = json.loads(a.config.read_bytes())
    for k in ("quantization", "quantization_config"):  # accept an MLX config as a shape source
        cfg.pop(k, None)
    if a.small:
        # head_dim stays (96 for Phi-3.5, 128 for Phi-4-mini): the longrope factor lists have
        # rotary_dim/2 entries. MHA stays MHA, GQA stays GQA (4 query heads on 2 kv heads).
        heads = cfg["num_attention_heads"]
        head_dim = cfg.get("head_dim") or cfg["hidden_size"] // heads
        gqa = (cfg.get("num_key_value_heads") or heads) != heads
        cfg.update(hidden_size=4 * head_dim, intermediate_size=512, num_hidden_layers=2,
                   num_attention_heads=4, num_key_value_heads=2 if gqa else 4)
    cfg["torch_dtype"] = a.dtype  # mlx_lm.convert keeps this dtype for scales/biases

    # Hash the effective config (after --small/--dtype edits): it determines every output byte.
    cfg_hash = hashlib.sha256(json.dumps(cfg, sort_keys=True).encode()).hexdigest()
    stamp = {"generator_version": GENERATOR_VERSION, "config_sha256": cfg_hash,
             "dtype": a.dtype, "seed": a.seed, "small": a.small, "std": STD}
    if a.tokenizer_dir:  # only recorded when given, so older Phi-3.5 checkpoints stay valid
        stamp["tokenizer_dir"] = str(a.tokenizer_dir.resolve())
    out = a.out_dir
    if (out / STAMP).exists():
        old = json.loads((out / STAMP).read_text())
        if all(old.get(k) == v for k, v in stamp.items()):
            print(f"{out}: up to date ({old.get('params', '?')} params, {old.get('bytes', '?')} bytes); skipping")
            return
        print(f"{out}: generated with other arguments; regenerating")
    elif out.exists() and any(out.iterdir()):
        die(f"{out} exists, is not empty and was not made by this script; remove it or pick another dir")

    tensors = phi3_tensors(cfg)
    index = None if a.small else src / "model.safetensors.index.json"  # --small never matches it
    shards = plan_shards(tensors, index, ITEMSIZE[a.dtype])
    params = sum(int(np.prod(s)) for s in tensors.values())
    total = params * ITEMSIZE[a.dtype]
    free = shutil.disk_usage(out.resolve().parent if not out.exists() else out).free
    if free < total + (1 << 28):
        die(f"need {total / 1e9:.2f} GB free for {out}, have {free / 1e9:.2f} GB")
    print(f"writing {len(tensors)} tensors, {params / 1e9:.3f} B params, {total / 1e9:.2f} GB "
          f"{a.dtype} in {len(shards)} shard(s) to {out}")

    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    table = normal_table(a.dtype) if a.dtype != "float32" else None
    t0, done, last = time.time(), 0, [0.0]

    def progress(nb):
        nonlocal done
        done += nb
        now = time.time()
        if sys.stderr.isatty() and now - last[0] > 0.5:
            last[0] = now
            print(f"\r  {done / 1e9:6.2f} / {total / 1e9:.2f} GB  {done / 1e9 / (now - t0):.2f} GB/s",
                  end="", file=sys.stderr, flush=True)

    weight_map = {}
    for fname, names in shards:
        write_shard(tmp / fname, names, tensors, a.dtype, a.seed, table, progress)
        weight_map.update({n: fname for n in names})
    if sys.stderr.isatty():
        print(file=sys.stderr)
    if len(shards) > 1:
        idx = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
        (tmp / "model.safetensors.index.json").write_text(json.dumps(idx, indent=2) + "\n")
    (tmp / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    for f in AUX_FILES[1:]:
        if (aux_src / f).exists():
            shutil.copyfile(aux_src / f, tmp / f)  # copyfile: don't inherit the fixtures' read-only mode
        elif f.startswith("tokenizer.json"):
            print(f"warning: {aux_src / f} missing; converters may fail to load the tokenizer",
                  file=sys.stderr)
    dt = time.time() - t0
    stamp.update(params=params, bytes=total, tensors=len(tensors), seconds=round(dt, 1))
    (tmp / STAMP).write_text(json.dumps(stamp, indent=2) + "\n")
    if out.exists():
        shutil.rmtree(out)  # only reached when out is ours (stamp present) or empty
    tmp.rename(out)
    print(f"done in {dt:.1f} s ({total / 1e9 / dt:.2f} GB/s)")


if __name__ == "__main__":
    main()
