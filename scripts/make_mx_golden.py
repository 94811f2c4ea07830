#!/usr/bin/env python3
"""Golden files for phikit's MLX mxfp4 / nvfp4 / mxfp8 quantizer (Tests/PhiFormatsTests/
Fixtures/mxfp).

    pip install mlx mlx-cpu        # mlx 0.32 from PyPI, CPU
    python3 scripts/make_mx_golden.py [OUT_DIR]

For each source dtype (float32, float16, bfloat16) one 20x128 input is built whose rows are
kinds of 32-value blocks: typical weights, all-zero groups, signed zeros, one huge value,
subnormals of the dtype, +-max of the dtype, values on the E2M1 midpoints (0.25, 0.75, ...,
5) and the E4M3 edges (448, 464, 480) at many binades, amax just above a power of two times 6
or 448 (the E8M0 exponent is rounded up), scales that round to zero. The input is quantized
with mlx.core.quantize in each mode and dequantized with mlx.core.dequantize (bfloat16, the
default, in full; float32 and float16 as FNV-1a hashes).

A second part checks decoding alone: every scale byte 0..255 with every code, dequantized
in each output dtype.

Files (little-endian raw bytes):
  input_<dtype>.bin               the input as mlx saw it (after astype)
  <dtype>_<mode>.bin              packed weight (uint32) || scales (uint8) || dequantized bf16
                                  (NaN canonical, see canonical())
  decode_<mode>.bin               packed weight || scales (the decoding input)
  manifest.json                   shapes, byte counts and FNV-1a 64 hashes of every output
A NaN anywhere in the input is refused by phikit; mlx is not asked about it.
The Swift tests read only these files.
"""
import json
import os
import sys

import mlx.core as mx
import numpy as np

ROWS, COLS, BLOCK = 20, 128, 32
DTYPES = {"float32": mx.float32, "float16": mx.float16, "bfloat16": mx.bfloat16}
MODES = {"mxfp4": (32, 4), "nvfp4": (16, 4), "mxfp8": (32, 8)}
F32 = np.float32


def fnv1a64(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def canonical(a: mx.array) -> bytes:
    """Raw bytes with every NaN written as the positive quiet NaN of its dtype (0x7fc00000,
    0x7e00, 0x7fc0): decoding scale byte 255 (2^128) gives NaN = 0 * inf, whose payload and
    sign are the CPU's business, not the format's."""
    nan = {mx.float32: 0x7FC00000, mx.float16: 0x7E00, mx.bfloat16: 0x7FC0}[a.dtype]
    bits = np.array(a.view(mx.uint32 if a.dtype == mx.float32 else mx.uint16))
    isnan = np.isnan(np.array(a.astype(mx.float32)))
    return np.where(isnan, bits.dtype.type(nan), bits).tobytes()


def raw(a: mx.array) -> bytes:
    if a.dtype == mx.bfloat16:
        return np.array(a.view(mx.uint16)).tobytes()
    return np.array(a).tobytes()


def make_input(dtype_name, rng):
    big = {"float32": 3.4028235e38, "float16": 65504.0, "bfloat16": 3.3895314e38}[dtype_name]
    sub = {"float32": 1e-40, "float16": 3e-6, "bfloat16": 1e-40}[dtype_name]
    n = lambda s: (rng.standard_normal(BLOCK) * s).astype(F32)
    u = lambda lo, hi: rng.uniform(lo, hi, BLOCK).astype(F32)

    def onehot(v, rest=0.0):
        x = (rng.standard_normal(BLOCK) * rest).astype(F32)
        x[rng.integers(0, BLOCK)] = v
        return x

    def pick(values, scale):
        return (rng.choice(values, BLOCK) * scale).astype(F32)

    e2m1_mid = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 6.0, -0.25, -0.75, -1.25, -2.5, -5, 0.0]
    e4m3_edge = [448, 464, 470, 479, 480, 500, 0.0009765625, 0.001953125, 0.0029296875,
                 15.5, 17, 240, 248, -464, -448]
    # amax a little above 6 * 2^k (mxfp4) or 448 * 2^k (mxfp8): the E8M0 exponent rounds up.
    above = lambda m, k: onehot(F32(m * 2.0 ** k) * F32(1 + 2 ** -10), 2.0 ** k)
    rows = [
        [n(0.02), n(0.02), n(0.05), n(0.01)],                            # typical weights
        [n(1.0), n(3.0), n(0.3), u(-1, 1)],                              # random
        [np.zeros(BLOCK, F32), np.where(rng.integers(0, 2, BLOCK) == 1, F32(0), F32(-0.0)),
         np.zeros(BLOCK, F32), onehot(1.0)],                            # zeros, signed zeros
        [onehot(1e4, 0.01), onehot(-6e4, 0.01), onehot(big), onehot(-big, 1.0)],  # one huge
        [u(-sub, sub), u(0, sub), onehot(sub), onehot(-sub, sub / 8)],  # subnormals
        [np.full(BLOCK, F32(big)), np.full(BLOCK, F32(-big)),           # +-max
         pick([big, -big, 0.0, 1.0], 1), pick([big, 1e-3], 1)],
        [pick(e2m1_mid, 1), pick(e2m1_mid, 2 ** -3), pick(e2m1_mid, 2 ** 5),
         pick(e2m1_mid + [6.0] * 4, 2 ** -9)],                          # E2M1 midpoints
        [pick(e4m3_edge, 1), pick(e4m3_edge, 2 ** -8), pick(e4m3_edge, 2 ** 6),
         pick(e4m3_edge, 1 / 6)],                                       # E4M3 edges
        [above(6, 0), above(6, -7), above(448, 0), above(448, -20)],    # exponent rounds up
        [onehot(6.0), onehot(12.0), onehot(448.0), onehot(-896.0)],     # exact powers
        [onehot(1e-30, 1e-31), onehot(2e-3, 1e-4), onehot(5e-4, 1e-5), n(1e-4)],  # tiny scales
        [u(-2, -0.1), u(0.1, 2), u(40, 50), u(-1e-3, -1e-4)],           # one sign only
    ]
    for k in (-20, -6, -1, 0, 3, 12):                                   # binades
        rows.append([n(2.0 ** k), pick(e2m1_mid, 2.0 ** k), pick(e4m3_edge, 2.0 ** k),
                     onehot(F32(7) * F32(2.0 ** k), 2.0 ** (k - 2))])
    while len(rows) < ROWS:
        rows.append([n(0.05), n(0.5), n(5), n(50)])
    assert len(rows) == ROWS
    w = np.stack([np.concatenate(r) for r in rows]).astype(F32)
    w = np.clip(w, -big, big)  # the binade rows overflow float16
    arr = mx.array(w).astype(DTYPES[dtype_name])
    assert np.isfinite(np.array(arr.astype(mx.float32))).all()
    return arr


def decode_input(mode):
    """Every scale byte with every code: 256 groups, codes cycling through all values."""
    group, bits = MODES[mode]
    per_word = 32 // bits
    cols = group * 16
    rows = 256 // 16
    codes = (np.arange(rows * cols) % (1 << bits)).astype(np.uint32)
    codes = np.roll(codes.reshape(rows, cols), 3, axis=1)
    words = np.zeros((rows, cols // per_word), np.uint32)
    for i in range(per_word):
        words |= codes[:, i::per_word] << np.uint32(bits * i)
    scales = np.arange(256, dtype=np.uint8).reshape(rows, 16)
    return mx.array(words), mx.array(scales), rows, cols


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "PhiFormatsTests",
        "Fixtures", "mxfp")
    os.makedirs(out_dir, exist_ok=True)
    mx.set_default_device(mx.cpu)
    rng = np.random.default_rng(20261125)
    manifest = {"mlx_version": mx.__version__, "rows": ROWS, "cols": COLS, "inputs": {},
                "cases": [], "decode": []}
    for dname, dt in DTYPES.items():
        w = make_input(dname, rng)
        fname = f"input_{dname}.bin"
        with open(os.path.join(out_dir, fname), "wb") as f:
            f.write(raw(w))
        manifest["inputs"][dname] = fname
        for mode, (group, bits) in MODES.items():
            q, s = mx.quantize(w, mode=mode)
            assert q.dtype == mx.uint32 and q.shape == (ROWS, COLS * bits // 32)
            assert s.dtype == mx.uint8 and s.shape == (ROWS, COLS // group)
            outs = {o: canonical(mx.dequantize(q, s, mode=mode, dtype=DTYPES[o])) for o in DTYPES}
            qb, sb = raw(q), raw(s)
            case = f"{dname}_{mode}.bin"
            with open(os.path.join(out_dir, case), "wb") as f:
                f.write(qb + sb + outs["bfloat16"])
            manifest["cases"].append({
                "dtype": dname, "mode": mode, "group": group, "bits": bits, "file": case,
                "weight_bytes": len(qb), "scales_bytes": len(sb),
                "dequant_fnv1a64": {o: fnv1a64(b) for o, b in outs.items()}})
    for mode in MODES:
        q, s, rows, cols = decode_input(mode)
        outs = {o: canonical(mx.dequantize(q, s, mode=mode, dtype=DTYPES[o])) for o in DTYPES}
        name = f"decode_{mode}.bin"
        with open(os.path.join(out_dir, name), "wb") as f:
            f.write(raw(q) + raw(s))
        manifest["decode"].append({
            "mode": mode, "file": name, "rows": rows, "cols": cols,
            "weight_bytes": len(raw(q)), "scales_bytes": len(raw(s)),
            "dequant_fnv1a64": {o: fnv1a64(b) for o, b in outs.items()}})
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(out_dir, p)) for p in os.listdir(out_dir))
    print(f"wrote {len(manifest['cases'])} cases to {out_dir}, {total} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
