#!/usr/bin/env python3
"""Quantize a float GGUF with llama.cpp's own quantizer: upstream's `llama-quantize` when
build_llamacpp.sh has built it (LLAMA_CPP_BIN; no Python package needed), else
llama-cpp-python's llama_cpp.llama_model_quantize (its vendored, older copy of the same code).

    quantize_gguf.py IN.gguf OUT.gguf TYPE [--threads N]

TYPE: F16, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K_M, Q8_0, or Q4_0-pure (every matrix Q4_0, the output matrix too; the
default mix keeps the output/tied-embedding matrix at Q6_K, as `llama-quantize` does).
Writes OUT.gguf.partial, renames at the end.
"""
import argparse
import ctypes
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llama_upstream  # noqa: E402

TYPES = ["F16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q4_K_M", "Q8_0"]


def quantize_upstream(tool, inp, out, qtype, pure, threads):
    """`llama-quantize [--pure] IN OUT TYPE THREADS`; returns its exit status."""
    cmd = [tool] + (["--pure"] if pure else []) + [str(inp), str(out), qtype, str(threads)]
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.dirname(tool))
    return subprocess.run(cmd, env=env, stdout=sys.stderr).returncode


def quantize_python(inp, out, qtype, pure, threads):
    """llama-cpp-python's llama_model_quantize; returns its status."""
    import llama_cpp
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{qtype}")
    params.pure = pure
    params.nthread = threads
    return llama_cpp.llama_model_quantize(str(inp).encode(), str(out).encode(),
                                          ctypes.byref(params))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inp", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("type", choices=sorted(TYPES) + ["Q4_0-pure"])
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    a = ap.parse_args()
    if not a.inp.is_file():
        print(f"error: {a.inp} not found", file=sys.stderr)
        sys.exit(1)
    qtype, pure = a.type.removesuffix("-pure"), a.type.endswith("-pure")
    tmp = a.out.with_name(a.out.name + ".partial")
    tool = llama_upstream.binary("llama-quantize")
    if tool:
        rc = quantize_upstream(tool, a.inp, tmp, qtype, pure, a.threads)
    else:
        rc = quantize_python(a.inp, tmp, qtype, pure, a.threads)
    if rc != 0:
        tmp.unlink(missing_ok=True)
        print(f"error: {tool or 'llama_model_quantize'} ({a.inp} -> {a.type}) returned {rc}",
              file=sys.stderr)
        sys.exit(1)
    os.replace(tmp, a.out)
    print(f"wrote {a.out} ({a.out.stat().st_size / 1e9:.2f} GB, {a.type})")


if __name__ == "__main__":
    main()
