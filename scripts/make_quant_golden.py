#!/usr/bin/env python3
"""Golden files for phikit's MLX affine quantizer (Tests/PhiFormatsTests/Fixtures/quant).

Run with the reference venv (mlx from PyPI, CPU):
    /opt/phikit-ref/bin/python scripts/make_quant_golden.py [OUT_DIR]

For each input dtype (float32, float16, bfloat16), one 22x128 input matrix is built. Every
row holds four 32-value blocks of one "kind": typical weights, adversarial groups (all
equal, all zero, tiny ranges, huge magnitudes, |min| == |max|, exact rounding midpoints,
subnormals, q0 = edge/scale exactly on an even + .5, ...). Because the kinds are laid out
in aligned 32-blocks, the groups of 32, 64 and 128 are all adversarial. The input is
quantized with mlx.core.quantize for every bits in {2,3,4,5,6,8} x group_size in
{32,64,128}, and dequantized with mlx.core.dequantize.

Files (all little-endian raw bytes):
  input_<dtype>.bin                    the 22x128 input as mlx saw it (after astype)
  <dtype>_b<bits>_g<group>.bin         packed weight (uint32) || scales || biases
                                       [|| dequantized output, only for group 64]
  manifest.json                        shapes, byte counts, and an FNV-1a 64 hash of
                                       every dequantized output (full bytes for group 64)
The Swift tests read only these files; they never run Python.
"""
import json
import os
import sys

import mlx.core as mx
import numpy as np

ROWS, COLS, BLOCK = 22, 128, 32
DTYPES = {"float32": mx.float32, "float16": mx.float16, "bfloat16": mx.bfloat16}
BITS = [2, 3, 4, 5, 6, 8]
GROUPS = [32, 64, 128]
F32 = np.float32


def fnv1a64(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def midpoint_block(rng, n_bins, sign):
    """A block whose values sit exactly on q + 0.5 for a given n_bins: range n_bins*0.5,
    step 0.25, so scale = 0.5 exactly and every odd multiple of 0.25 is a midpoint."""
    lo = -F32(n_bins) * F32(0.5)
    m = rng.integers(0, 2 * n_bins + 1, BLOCK)
    m[0], m[1] = 0, 2 * n_bins  # make sure min and max are both present
    x = (lo + F32(0.25) * m.astype(F32)).astype(F32)
    return x if sign < 0 else (-x).astype(F32)


def make_input(dtype_name, rng):
    huge = F32(6e4) if dtype_name == "float16" else F32(1e30)
    sub = F32(1e-6) if dtype_name == "float16" else F32(1e-40)  # subnormal in each dtype
    u = lambda lo, hi: rng.uniform(lo, hi, BLOCK).astype(F32)
    n = lambda s: (rng.standard_normal(BLOCK) * s).astype(F32)

    def tie():
        a = F32(rng.uniform(0.1, 3))
        x = u(-a, a)
        x[rng.integers(0, BLOCK)] = -a
        x[(rng.integers(1, BLOCK) + 7) % BLOCK] = a
        return x

    def tie_pair():  # only -a and a
        a = F32(rng.uniform(0.1, 3))
        return np.where(rng.integers(0, 2, BLOCK) == 1, a, -a).astype(F32)

    def onehot(v):
        x = np.zeros(BLOCK, F32)
        x[rng.integers(0, BLOCK)] = v
        return x

    def outlier():
        x = n(0.02)
        x[rng.integers(0, BLOCK)] = F32(4.0)
        return x

    def signed_zeros():
        return np.where(rng.integers(0, 2, BLOCK) == 1, F32(0.0), F32(-0.0)).astype(F32)

    rows = [
        [n(0.02), n(0.02), n(0.05), n(0.01)],                         # typical weights
        [n(1.0), n(1.0), n(3.0), n(0.3)],                             # random normal
        [u(-1, 1), u(-1, 1), u(0, 1), u(-0.5, 0.25)],                 # random uniform
        [np.full(BLOCK, F32(0.37)), np.full(BLOCK, F32(-0.37)),       # all equal
         np.full(BLOCK, F32(3.0)), np.full(BLOCK, F32(1e-3))],
        [np.zeros(BLOCK, F32), signed_zeros(), np.zeros(BLOCK, F32), signed_zeros()],
        [np.full(BLOCK, F32(-1.25)), np.full(BLOCK, F32(-7.0)),       # constant negative
         np.full(BLOCK, F32(-1e-4)), np.full(BLOCK, F32(-1.25))],
        [(F32(1) + u(-1, 1) * F32(1e-7)).astype(F32), u(-1e-8, 1e-8),  # tiny ranges
         (F32(1e-3) + u(-1, 1) * F32(1e-8)).astype(F32), (F32(-1) - u(0, 1) * F32(1e-7)).astype(F32)],
        [u(-huge, huge), u(-huge, huge), u(0, huge), u(-huge, 0)],   # huge magnitudes
        [u(-2, -0.1), u(-2, -0.1), u(-50, -40), u(-1e-3, -1e-4)],     # negative only
        [u(0.1, 2), u(0.1, 2), u(40, 50), u(1e-4, 1e-3)],             # positive only
        [u(-sub, sub), u(-sub, sub), u(0, sub), u(-sub, 0)],         # subnormals
        [tie(), tie(), tie_pair(), tie()],                            # |min| == |max|
        [midpoint_block(rng, 3, -1), midpoint_block(rng, 7, -1),      # exact .5 midpoints
         midpoint_block(rng, 15, -1), midpoint_block(rng, 31, -1)],
        [midpoint_block(rng, 15, 1), midpoint_block(rng, 63, 1),      # mirrored (edge = max)
         midpoint_block(rng, 255, 1), midpoint_block(rng, 3, 1)],
        [u(-3e-8, 3e-8), u(-1e-7, 1e-7), u(0, 5e-7), u(-2e-6, 1e-6)],  # around eps = 1e-7
        [onehot(1.0), onehot(-1.0), outlier(), n(1e-3)],              # mixed
    ]
    # q0 ties: for n_bins n, max = 2k+1 and min = max - 2n with k the smallest even
    # integer >= (n-1)/2, so scale0 = 2 exactly and edge/scale0 = +-(k + 0.5): rint gives
    # k (even), roundf would give k+1. Every 32-block holds both ends, so the tie is there
    # at every group size; one row per bits, the edge alternating between max and min.
    for i, bits in enumerate(BITS):
        nb = (1 << bits) - 1
        k = nb // 2
        k += k % 2  # smallest even k with |min| <= max
        hi, lo = F32(2 * k + 1), F32(2 * k + 1 - 2 * nb)
        blocks = []
        for _ in range(COLS // BLOCK):
            x = (lo + F32(0.25) * rng.integers(0, int((hi - lo) * 4) + 1, BLOCK)).astype(F32)
            x[rng.integers(0, BLOCK // 2)] = hi
            x[rng.integers(BLOCK // 2, BLOCK)] = lo
            blocks.append(x if i % 2 == 0 else (-x).astype(F32))
        rows.append(blocks)
    assert len(rows) == ROWS
    w = np.stack([np.concatenate(r) for r in rows]).astype(F32)
    assert w.shape == (ROWS, COLS) and np.isfinite(w).all()
    arr = mx.array(w).astype(DTYPES[dtype_name])
    assert np.isfinite(np.array(arr.astype(mx.float32))).all()
    return arr


def raw(a: mx.array) -> bytes:
    if a.dtype == mx.bfloat16:
        return np.array(a.view(mx.uint16)).tobytes()
    return np.array(a).tobytes()


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "PhiFormatsTests", "Fixtures", "quant")
    os.makedirs(out_dir, exist_ok=True)
    mx.set_default_device(mx.cpu)
    rng = np.random.default_rng(20240607)
    manifest = {"mlx_version": mx.__version__, "rows": ROWS, "cols": COLS,
                "inputs": {}, "cases": []}
    for dname, dt in DTYPES.items():
        w = make_input(dname, rng)
        fname = f"input_{dname}.bin"
        with open(os.path.join(out_dir, fname), "wb") as f:
            f.write(raw(w))
        manifest["inputs"][dname] = fname
        for bits in BITS:
            for group in GROUPS:
                q, s, b = mx.quantize(w, group_size=group, bits=bits, mode="affine")
                d = mx.dequantize(q, s, b, group_size=group, bits=bits, mode="affine")
                mx.eval(q, s, b, d)
                assert q.dtype == mx.uint32 and q.shape == (ROWS, COLS * bits // 32)
                assert s.dtype == dt and s.shape == (ROWS, COLS // group) and b.dtype == dt
                assert d.dtype == dt and d.shape == (ROWS, COLS)
                qb, sb, bb, db = raw(q), raw(s), raw(b), raw(d)
                with_deq = group == 64
                case_name = f"{dname}_b{bits}_g{group}.bin"
                with open(os.path.join(out_dir, case_name), "wb") as f:
                    f.write(qb + sb + bb + (db if with_deq else b""))
                manifest["cases"].append({
                    "dtype": dname, "bits": bits, "group": group, "file": case_name,
                    "weight_bytes": len(qb), "scales_bytes": len(sb), "biases_bytes": len(bb),
                    "dequant_bytes": len(db) if with_deq else 0,
                    "dequant_fnv1a64": fnv1a64(db),
                })
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(out_dir, p)) for p in os.listdir(out_dir))
    print(f"wrote {len(manifest['cases'])} cases to {out_dir}, {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
