#!/usr/bin/env python3
"""Prints convert_hf_to_gguf.py's BPE pre-tokenizer identifier ("chkhsh") of tokenizer folders,
computed as llama.cpp computes it (get_vocab_base_pre: AutoTokenizer.encode of its check text,
sha256 of str() of the ids), and the tokenizer.ggml.pre name llama.cpp gives it, if any.
The figures in Tests/PhiKitTests/Verify/VerifyLlamaCppTargetTests.swift come from here
(tokenizers 0.23.3, llama.cpp b11434 sources).

llama.cpp pins transformers 4.57.6 for the converter, whose AutoTokenizer encodes a
tokenizer.json through the tokenizers library: so this encodes with tokenizers directly
(special tokens added, as encode does). transformers 5 is not the same: its GPT2Tokenizer
rebuilds the pre-tokenizer and tokenizes the check text of the (derived) Phi-4-mini
tokenizer differently from tokenizers.

usage: LLAMA_CPP=/work/llama/src scripts/verify/llamacpp_chkhsh.py DIR...
"""
import os
import re
import sys
from hashlib import sha256

from tokenizers import Tokenizer

source = open(os.path.join(os.environ.get("LLAMA_CPP", "/work/llama/src"), "conversion/base.py")).read()
body = source[source.index("def get_vocab_base_pre"):source.index("Marker: End get_vocab_base_pre")]
namespace = {}
exec(re.search(r"^\s*(chktxt = .*)$", body, re.M).group(1).strip(), namespace)
known = dict(re.findall(r'if chkhsh == "([0-9a-f]{64})":\s*\n(?:\s*#[^\n]*\n)*\s*res = "([^"]+)"', body))

for directory in sys.argv[1:]:
    ids = Tokenizer.from_file(os.path.join(directory, "tokenizer.json")).encode(namespace["chktxt"]).ids
    digest = sha256(str(ids).encode()).hexdigest()
    print(directory, digest, known.get(digest, "(not recognized)"), len(ids))
