#!/usr/bin/env python3
"""Why phikit re-quantizes Q6_K (and the other types without an exact MLX form) to affine
8-bit g32 with float32 scales: the max abs error of each candidate target, per GGML type.

    python3 scripts/gguf/requant_errors.py FILE.gguf [--phikit-json SUMMARY.json]

For every tensor whose type phikit cannot transcode exactly, its values as
gguf.quants.dequantize gives them are quantized to each MLX target and back, and the largest
absolute difference is kept, per GGML type:
  affine 8-bit g32, float32 scale/bias (min/max, round to nearest) — phikit's choice
  affine 8-bit g32 / g64 and 6-bit g32, float16 scale/bias — mlx.core.quantize
  float16, bfloat16 (--dtype)
With --phikit-json (the output of `phikit convert FILE.gguf --json`), phikit's own reported
errors are shown beside them. Needs gguf, numpy, mlx.
"""
import argparse
import json
import sys
from pathlib import Path

import gguf
import numpy as np
from gguf.quants import dequantize

EXACT = {"F32", "F16", "BF16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "MXFP4"}


def affine_f32(w, bits, group):
    """Min/max affine quantization with float32 scale and bias, as phikit re-quantizes."""
    g = w.reshape(-1, group)
    lo, hi = g.min(1, keepdims=True), g.max(1, keepdims=True)
    scale = ((hi - lo) / np.float32(2**bits - 1)).astype(np.float32)
    safe = np.where(scale == 0, np.float32(1), scale)
    q = np.clip(np.rint((g - lo) / safe), 0, 2**bits - 1).astype(np.float32)
    return (scale * q + lo).reshape(w.shape)


def mlx_affine(w, bits, group):
    import mlx.core as mx

    x = mx.array(w)
    q, s, b = mx.quantize(x, group_size=group, bits=bits)
    return np.array(mx.dequantize(q, s, b, group_size=group, bits=bits).astype(mx.float32))


def bf16(w):
    u = w.astype(np.float32).view(np.uint32)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16  # round to nearest even
    return u.astype(np.uint32).view(np.float32)


TARGETS = {
    "8-bit g32 f32 scales (phikit)": lambda w: affine_f32(w, 8, 32),
    "8-bit g32 f16 scales (mlx)": lambda w: mlx_affine(w, 8, 32),
    "8-bit g64 f16 (mlx)": lambda w: mlx_affine(w, 8, 64),
    "6-bit g32 f16 (mlx)": lambda w: mlx_affine(w, 6, 32),
    "float16": lambda w: w.astype(np.float16).astype(np.float32),
    "bfloat16": bf16,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("gguf", type=Path)
    ap.add_argument("--phikit-json", type=Path)
    a = ap.parse_args()
    reported = {}
    if a.phikit_json:
        s = json.loads(a.phikit_json.read_text())
        reported = {t["tensor"]: t["max_abs_error"] for t in s["inexact"]}
    worst = {}  # type -> {target: error}
    counts = {}
    for t in gguf.GGUFReader(str(a.gguf)).tensors:
        name = t.tensor_type.name
        counts[name] = counts.get(name, 0) + 1
        if name in EXACT:
            continue
        w = dequantize(t.data, t.tensor_type).astype(np.float32).reshape(-1, int(t.shape[0]))
        row = worst.setdefault(name, {})
        for label, f in TARGETS.items():
            err = float(np.abs(f(w).astype(np.float64) - w).max())
            row[label] = max(row.get(label, 0.0), err)
        if t.name in reported:
            row["phikit reported"] = max(row.get("phikit reported", 0.0), reported[t.name])
        row["tensors"] = row.get("tensors", 0) + 1
        row["max |w|"] = max(row.get("max |w|", 0.0), float(np.abs(w).max()))
        print(f"{t.name} {name}: " + ", ".join(f"{k} {v:.3g}" for k, v in row.items()),
              file=sys.stderr)
    print(json.dumps({"file": str(a.gguf), "tensor_types": counts, "max_abs_error": worst}, indent=2))


if __name__ == "__main__":
    main()
