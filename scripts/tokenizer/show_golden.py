#!/usr/bin/env python3
"""Prints what `tokenizers` gives for one corpus text: show_golden.py NAME INDEX
(NAME: phi35, phi4mini, stories260k, phi3early; INDEX: the text's line in corpus.jsonl, from 0).
"""
import json
import sys

from make_golden import FIXTURES, TOKENIZERS
from tokenizers import Tokenizer

name, index = sys.argv[1], int(sys.argv[2])
text = json.loads((FIXTURES / "corpus.jsonl").read_text("utf-8").split("\n")[:-1][index])
enc = Tokenizer.from_file(str(TOKENIZERS[name])).encode(text)
print(json.dumps({"text": text, "ids": enc.ids, "tokens": enc.tokens}, ensure_ascii=False))
