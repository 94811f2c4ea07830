#!/opt/phikit-ref/bin/python
"""Golden safetensors files for Tests/PhiFormatsTests (SafeTensorsReaderTests, HalfFloatTests).

Writes into Tests/PhiFormatsTests/Fixtures/safetensors/:
  dtypes.safetensors     every dtype phikit knows (F64 … BOOL, F8_E4M3, F8_E5M2), a scalar
                         (shape []), an empty tensor (shape [0, 3]) and metadata (one key: the Rust
                         serializer orders several keys at random); written by
                         the safetensors library itself (0.8, Rust serializer).
  mlx_bf16.safetensors   a bf16 matrix and an f32 vector written by mlx.core.save_safetensors,
                         with {"format": "mlx"} as mlx_lm writes it.
  expected.json          per file: tensor name → dtype, shape, data as hex, decoded values;
                         plus half-float conversion pairs computed by numpy (f16) and mlx (bf16).

Run:   /opt/phikit-ref/bin/python scripts/make_safetensors_golden.py
Check the other direction (a file phikit's SafeTensorsWriter wrote, read by Python):
       PHIKIT_ROUNDTRIP_OUT=/tmp/rt.safetensors swift test --scratch-path .build-formats \
           --filter SafeTensorsWriterTests/reproducesPythonFileExactly
       /opt/phikit-ref/bin/python scripts/make_safetensors_golden.py --check /tmp/rt.safetensors
"""
import json
import os
import struct
import sys

import mlx.core as mx
import numpy as np
import safetensors
from safetensors import TensorSpec, safe_open

OUT = os.path.join(os.path.dirname(__file__), "..", "Tests", "PhiFormatsTests", "Fixtures", "safetensors")


def golden_tensors():
    """name -> (numpy dtype name understood by TensorSpec, safetensors code, shape, raw bytes)."""
    t = {}

    def add(name, arr, spec_dtype, code):
        arr = arr.copy(order="C")  # (np.ascontiguousarray would turn the scalar into shape [1])
        t[name] = (spec_dtype, code, list(arr.shape), arr.tobytes())

    add("f64", np.array([1.5, -2.25, 1e300], dtype=np.float64), "float64", "F64")
    add("f32", np.array([[0.1, -0.0], [np.inf, 3.4028235e38]], dtype=np.float32), "float32", "F32")
    add("f16", np.array([1.0, 65504.0, 6.0e-8, -0.5], dtype=np.float16), "float16", "F16")
    # bf16 has no numpy dtype here (no ml_dtypes): take the bit patterns from mlx.
    bf = mx.array([1.0, -3.140625, 1e-3, 3.0e38], dtype=mx.bfloat16).view(mx.uint16)
    add("bf16", np.array(bf, dtype=np.uint16), "bfloat16", "BF16")
    add("i64", np.array([-(2**63), 2**63 - 1], dtype=np.int64), "int64", "I64")
    add("i32", np.array([-7, 7, 2**31 - 1], dtype=np.int32), "int32", "I32")
    add("i16", np.array([-300, 300], dtype=np.int16), "int16", "I16")
    add("i8", np.array([-128, 127], dtype=np.int8), "int8", "I8")
    add("u64", np.array([2**64 - 1], dtype=np.uint64), "uint64", "U64")
    add("u32", np.array([[1, 2], [3, 0xFFFFFFFF]], dtype=np.uint32), "uint32", "U32")
    add("u16", np.array([65535, 1], dtype=np.uint16), "uint16", "U16")
    add("u8", np.array([0, 255, 7], dtype=np.uint8), "uint8", "U8")
    add("bool", np.array([True, False, True], dtype=np.uint8), "bool", "BOOL")
    add("f8_e4m3", np.array([0x38, 0xB8, 0x7E], dtype=np.uint8), "float8_e4m3fn", "F8_E4M3")
    add("f8_e5m2", np.array([0x3C, 0xBC], dtype=np.uint8), "float8_e5m2", "F8_E5M2")
    add("scalar", np.array(42.0, dtype=np.float32), "float32", "F32")
    add("empty", np.zeros((0, 3), dtype=np.float32), "float32", "F32")
    return t


def decoded(code, raw):
    """Values for the expected file (floats as repr strings so NaN/inf survive JSON)."""
    if code in ("F8_E4M3", "F8_E5M2", "BOOL", "U8"):
        return list(raw)
    if code == "BF16":
        bits = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
        return [repr(float(x)) for x in bits.view(np.float32)]
    np_types = {"F64": np.float64, "F32": np.float32, "F16": np.float16, "I64": np.int64,
                "I32": np.int32, "I16": np.int16, "I8": np.int8, "U64": np.uint64,
                "U32": np.uint32, "U16": np.uint16}
    arr = np.frombuffer(raw, dtype=np_types[code])
    return [repr(float(x)) for x in arr] if code.startswith("F") else [int(x) for x in arr]


def write_dtypes(path):
    tensors = golden_tensors()
    buffers, specs = [], {}
    for name, (spec_dtype, _, shape, raw) in tensors.items():
        buf = np.frombuffer(raw, dtype=np.uint8).copy() if raw else np.zeros(1, dtype=np.uint8)
        buffers.append(buf)  # keep alive during serialize
        specs[name] = TensorSpec(dtype=spec_dtype, shape=shape, data_ptr=buf.ctypes.data, data_len=len(raw))
    data = safetensors.serialize(specs, metadata={"format": "pt"})
    with open(path, "wb") as f:
        f.write(data)
    return {name: {"dtype": code, "shape": shape, "hex": raw.hex(), "values": decoded(code, raw)}
            for name, (_, code, shape, raw) in tensors.items()}


def write_mlx(path):
    w = mx.array(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)).astype(mx.bfloat16)
    b = mx.array([0.5, -1.0, 2.0], dtype=mx.float32)
    mx.save_safetensors(path, {"model.layers.0.weight": w, "model.layers.0.bias": b},
                        metadata={"format": "mlx"})
    out = {}
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    for name, info in header.items():
        if name == "__metadata__":
            continue
        s, e = info["data_offsets"]
        raw = blob[8 + n + s:8 + n + e]
        out[name] = {"dtype": info["dtype"], "shape": info["shape"], "hex": raw.hex(),
                     "values": decoded(info["dtype"], raw)}
    return out


def half_pairs():
    """Float32 bit patterns with numpy's float16 and mlx's bfloat16 conversions (RNE)."""
    rng = np.random.default_rng(1234)
    edge = np.array([0.0, -0.0, 1.0, -1.0, 65504.0, 65519.99, 65520.0, 65536.0, 1e-8, 2.0**-24,
                     2.0**-25, 2.0**-25 * 1.0000001, 2.0**-14, 2.0**-14 * 0.999, 3.0e38, 3.3895314e38,
                     3.4028235e38, np.inf, -np.inf, 1.00390625, 1.01171875, 0.1, 1 / 3],
                    dtype=np.float32)
    with np.errstate(all="ignore"):
        rand = np.concatenate([rng.standard_normal(200).astype(np.float32) * 10.0 ** rng.integers(-9, 9, 200),
                               rng.integers(0, 2**32, 200, dtype=np.uint64).astype(np.uint32).view(np.float32)])
    xs = np.concatenate([edge, rand]).astype(np.float32)  # rand is float64 until here
    xs = xs[~np.isnan(xs)]  # NaN payload conventions differ between libraries; tested in Swift
    with np.errstate(over="ignore"):
        f16 = xs.astype(np.float16).view(np.uint16)
    bf16 = np.array(mx.array(xs).astype(mx.bfloat16).view(mx.uint16), dtype=np.uint16)
    return [[int(u), int(h), int(b)] for u, h, b in zip(xs.view(np.uint32), f16, bf16)]


def check(path):
    """Reads a file phikit wrote with the Python library and compares it to golden_tensors()."""
    want = golden_tensors()
    with safe_open(path, framework="np") as f:
        assert f.metadata() == {"format": "pt"}, f.metadata()
        assert sorted(f.keys()) == sorted(want), (sorted(f.keys()), sorted(want))
        for name, (_, code, shape, raw) in want.items():
            if code in ("BF16", "F8_E4M3", "F8_E5M2"):
                continue  # no numpy dtype without ml_dtypes; their bytes are compared below
            arr = f.get_tensor(name)
            assert list(arr.shape) == shape, (name, arr.shape, shape)
            assert arr.tobytes() == raw, (name, arr.tobytes().hex(), raw.hex())
    # BF16 / F8: safe_open above validated the whole file (offsets, sizes, dtypes); compare
    # their bytes through the header directly (mx.load can't open a file holding F64).
    blob = open(path, "rb").read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    for name, (_, code, shape, raw) in want.items():
        s, e = header[name]["data_offsets"]
        assert blob[8 + n + s:8 + n + e] == raw, name
        assert header[name]["dtype"] == code, name
    print(f"ok: {path}: {len(want)} tensors match (safetensors {safetensors.__version__})")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        check(sys.argv[2])
        return
    os.makedirs(OUT, exist_ok=True)
    expected = {
        "dtypes.safetensors": {"metadata": {"format": "pt"},
                               "tensors": write_dtypes(os.path.join(OUT, "dtypes.safetensors"))},
        "mlx_bf16.safetensors": {"metadata": {"format": "mlx"},
                                 "tensors": write_mlx(os.path.join(OUT, "mlx_bf16.safetensors"))},
        "half_pairs": half_pairs(),
    }
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
    # Sanity: the library reads back what it wrote.
    with safe_open(os.path.join(OUT, "dtypes.safetensors"), framework="np") as f:
        assert f.metadata() == {"format": "pt"}
    print("wrote", os.path.normpath(OUT))


if __name__ == "__main__":
    main()
