#!/usr/bin/env python3
"""Quantize a float GGUF with llama.cpp's own quantizer (llama_cpp.llama_model_quantize).

    quantize_gguf.py IN.gguf OUT.gguf TYPE [--threads N]

TYPE: F16, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K_M, Q8_0, or Q4_0-pure (every matrix Q4_0, the output matrix too; the
default mix keeps the output/tied-embedding matrix at Q6_K, as `llama-quantize` does).
Writes OUT.gguf.partial, renames at the end.
"""
import argparse
import ctypes
import os
import sys
from pathlib import Path

import llama_cpp

FTYPES = {
    "F16": llama_cpp.LLAMA_FTYPE_MOSTLY_F16,
    "Q4_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0,
    "Q4_1": llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_1,
    "Q5_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q5_0,
    "Q5_1": llama_cpp.LLAMA_FTYPE_MOSTLY_Q5_1,
    "Q4_K_M": llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_K_M,
    "Q8_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inp", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("type", choices=sorted(FTYPES) + ["Q4_0-pure"])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    a = ap.parse_args()
    if not a.inp.is_file():
        print(f"error: {a.inp} not found", file=sys.stderr)
        sys.exit(1)
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = FTYPES[a.type.removesuffix("-pure")]
    params.pure = a.type.endswith("-pure")
    params.nthread = a.threads
    tmp = a.out.with_name(a.out.name + ".partial")
    rc = llama_cpp.llama_model_quantize(str(a.inp).encode(), str(tmp).encode(),
                                        ctypes.byref(params))
    if rc != 0:
        tmp.unlink(missing_ok=True)
        print(f"error: llama_model_quantize({a.inp} -> {a.type}) returned {rc}", file=sys.stderr)
        sys.exit(1)
    os.replace(tmp, a.out)
    print(f"wrote {a.out} ({a.out.stat().st_size / 1e9:.2f} GB, {a.type})")


if __name__ == "__main__":
    main()
