#!/usr/bin/env python3
"""Goldens for phikit's GGUF block decoders and exact transcoding.

    python3 scripts/gguf/make_block_goldens.py [OUT_DIR]   (default Tests/PhiKitTests/Fixtures/gguf)

Writes
  blocks.gguf                  one 4 x 256 tensor per GGML type, made of RANDOM block bytes
                               (every code pattern, not just what a quantizer emits) with sane
                               scales: fp16 d/dmin in +-[1e-4, 0.1], MXFP4 exponents 100..140;
                               plus `Q4_0_big`/`Q8_0_big` whose d makes -8d / -128d overflow
                               fp16 (phikit must fall back to float32 scales there).
  blocks-expected.safetensors  gguf.quants.dequantize of each tensor (float32), the reference
                               phikit's values must equal bit for bit (+-0 aside).

Needs `pip install gguf numpy safetensors` (gguf 0.19.0 was used). Deterministic (seeded).
"""
import sys
from pathlib import Path

import gguf
import numpy as np
from gguf.constants import GGML_QUANT_SIZES
from gguf.quants import dequantize
from safetensors.numpy import save_file

T = gguf.GGMLQuantizationType
ROWS, COLS = 4, 256
TYPES = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K", "Q2_K", "IQ4_NL",
         "MXFP4"]
# Byte offsets of the fp16 scale fields in each block (ggml-common.h).
HALF_FIELDS = {"Q4_0": [0], "Q4_1": [0, 2], "Q5_0": [0], "Q5_1": [0, 2], "Q8_0": [0],
               "Q4_K": [0, 2], "Q5_K": [0, 2], "Q6_K": [208], "Q2_K": [80, 82], "IQ4_NL": [0]}


def random_blocks(rng, name, big=False):
    qt = T[name]
    block, size = GGML_QUANT_SIZES[qt]
    n = ROWS * COLS // block
    raw = rng.integers(0, 256, size=(n, size), dtype=np.uint8)
    for off in HALF_FIELDS.get(name, []):
        mag = rng.uniform(9000, 12000, n) if big else 10 ** rng.uniform(-4, -1, n)
        sign = rng.choice([-1.0, 1.0], n) if name in ("Q4_0", "Q5_0", "Q8_0", "Q6_K", "IQ4_NL") else 1.0
        halves = (mag * sign).astype(np.float16)
        raw[:, off:off + 2] = halves.view(np.uint8).reshape(n, 2)
    if name == "MXFP4":
        raw[:, 0] = rng.integers(100, 141, n)
    return raw.reshape(ROWS, COLS // block * size)


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "Tests/PhiKitTests/Fixtures/gguf")
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(19)
    tensors = {}
    for name in TYPES:
        tensors[name] = (random_blocks(rng, name), T[name])
    tensors["Q4_0_big"] = (random_blocks(rng, "Q4_0", big=True), T.Q4_0)
    tensors["Q8_0_big"] = (random_blocks(rng, "Q8_0", big=True), T.Q8_0)
    floats = rng.standard_normal((ROWS, COLS)).astype(np.float32)
    tensors["F32"] = (floats, T.F32)
    tensors["F16"] = (floats.astype(np.float16), T.F16)
    bf16 = (floats.view(np.uint32) >> 16).astype(np.uint16)
    tensors["BF16"] = (bf16, T.BF16)

    w = gguf.GGUFWriter(str(out / "blocks.gguf"), "llama")
    expected = {}
    for name, (data, qt) in tensors.items():
        if qt == T.BF16:
            w.add_tensor(name, data.view(np.uint8).reshape(ROWS, COLS * 2), raw_dtype=qt)
        elif qt in (T.F32, T.F16):
            w.add_tensor(name, data)
        else:
            w.add_tensor(name, data, raw_dtype=qt)
        raw = data.view(np.uint8) if qt not in (T.F32, T.F16) else data
        expected[name] = np.ascontiguousarray(
            dequantize(raw.reshape(ROWS, -1) if qt not in (T.F32, T.F16) else raw, qt)
            .astype(np.float32).reshape(ROWS, COLS))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    save_file(expected, str(out / "blocks-expected.safetensors"))
    for f in ("blocks.gguf", "blocks-expected.safetensors"):
        print(f"{out / f}: {(out / f).stat().st_size} bytes")


if __name__ == "__main__":
    main()
