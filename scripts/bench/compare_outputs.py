#!/usr/bin/env python3
"""Check that two MLX model dirs hold byte-identical tensors.

    compare_outputs.py A_DIR B_DIR

Compares per tensor, not per file, so a different shard split still counts as identical:
same tensor names, same dtype and shape, same bytes (both files mmapped, compared in 64 MB
chunks), and the same `quantization` / `quantization_config` in config.json.
Shard layout and safetensors metadata differences are printed as notes, not failures.

Exit 0 if identical, 1 if not, 2 if a dir can't be read. The last line is a one-line summary.
"""
import json
import mmap
import struct
import sys
from pathlib import Path

import numpy as np

CHUNK = 64 << 20
QUANT_KEYS = ("quantization", "quantization_config")


class Unreadable(Exception):
    pass


def read_header(path):
    """(header dict without __metadata__, metadata, byte offset where data starts)."""
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise Unreadable(f"{path}: shorter than 8 bytes, not a safetensors file")
        (n,) = struct.unpack("<Q", raw)
        if n > 100 << 20:
            raise Unreadable(f"{path}: header length {n} is implausible, not a safetensors file")
        header = json.loads(f.read(n))
    meta = header.pop("__metadata__", {})
    return header, meta, 8 + n


def tensors_of(d):
    """{name: (file, dtype, shape, absolute start, absolute end)}, plus {file: metadata}."""
    files = sorted(d.glob("*.safetensors"))
    if not files:
        raise Unreadable(f"{d}: no *.safetensors files")
    out, metas = {}, {}
    for f in files:
        header, meta, base = read_header(f)
        metas[f.name] = meta
        for name, t in header.items():
            if name in out:
                raise Unreadable(f"{d}: tensor {name} appears in {out[name][0].name} and {f.name}")
            s, e = t["data_offsets"]
            out[name] = (f, t["dtype"], t["shape"], base + s, base + e)
    return out, metas


def quant_fields(d):
    p = d / "config.json"
    if not p.exists():
        raise Unreadable(f"{d}: no config.json")
    cfg = json.loads(p.read_text())
    return {k: cfg.get(k) for k in QUANT_KEYS}


def main():
    if len(sys.argv) != 3:
        print("usage: compare_outputs.py A_DIR B_DIR", file=sys.stderr)
        sys.exit(2)
    a_dir, b_dir = Path(sys.argv[1]), Path(sys.argv[2])
    try:
        ta, ma = tensors_of(a_dir)
        tb, mb = tensors_of(b_dir)
        qa, qb = quant_fields(a_dir), quant_fields(b_dir)
    except (Unreadable, OSError, ValueError) as e:
        print(f"UNREADABLE: {e}")
        sys.exit(2)

    problems = []  # human-readable, in order found; the first one goes into the summary
    only_a, only_b = sorted(set(ta) - set(tb)), sorted(set(tb) - set(ta))
    if only_a:
        problems.append(f"{len(only_a)} tensors only in A (first: {only_a[0]})")
    if only_b:
        problems.append(f"{len(only_b)} tensors only in B (first: {only_b[0]})")
    for k in QUANT_KEYS:
        if qa[k] != qb[k]:
            problems.append(f"config.json {k} differs: {qa[k]} vs {qb[k]}")
    if sorted(ma) != sorted(mb):
        print(f"note: shard files differ: {sorted(ma)} vs {sorted(mb)}")
    elif ma != mb:
        print(f"note: safetensors metadata differs: {ma} vs {mb}")

    maps = {}  # one mmap per file (as a uint8 array), reused across its tensors

    def view(path, s, e):
        if path not in maps:
            with open(path, "rb") as f:
                maps[path] = np.frombuffer(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), np.uint8)
        m = maps[path]
        if e > len(m):
            raise Unreadable(f"{path}: tensor data runs past the end of the file (truncated?)")
        return m[s:e]

    n_diff_tensors, n_diff_bytes, total = 0, 0, 0
    common = sorted(set(ta) & set(tb))
    try:
        for name in common:
            fa, da, sa, a0, a1 = ta[name]
            fb, db, sb, b0, b1 = tb[name]
            if (da, sa) != (db, sb):
                n_diff_tensors += 1
                problems.append(f"{name}: {da}{sa} vs {db}{sb}")
                continue
            va, vb = view(fa, a0, a1), view(fb, b0, b1)
            total += len(va)
            diff = 0
            for off in range(0, len(va), CHUNK):
                ca, cb = va[off:off + CHUNK], vb[off:off + CHUNK]
                # numpy, not memoryview ==: memoryview compares element by element (~0.5 GB/s).
                if not np.array_equal(ca, cb):  # count bytes only where something differs
                    diff += int(np.count_nonzero(ca != cb))
            if diff:
                n_diff_tensors += 1
                n_diff_bytes += diff
                problems.append(f"{name}: {diff} of {len(va)} bytes differ")
    except Unreadable as e:
        print(f"UNREADABLE: {e}")
        sys.exit(2)

    for p in problems[1:20]:
        print(f"  {p}")
    if problems:
        print(f"DIFFERENT: {problems[0]}; {n_diff_tensors} of {len(common)} common tensors differ, "
              f"{n_diff_bytes} bytes in all")
        sys.exit(1)
    print(f"IDENTICAL: {len(common)} tensors, {total / 1e9:.3f} GB byte-identical, quantization config equal")


if __name__ == "__main__":
    main()
