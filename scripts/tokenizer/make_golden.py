#!/usr/bin/env python3
"""Golden ids and decodes for the tokenizer tests, from the `tokenizers` library.

Reads Tests/PhiTextTests/Fixtures/tokenizer/corpus.jsonl (see make_corpus.py) and writes,
for each tokenizer below, golden-<name>.json next to it:

  {"tokenizer": path, "tokenizers_version": "0.23.3", "entries": [
     [token count, fnv1a64 of the ids (16 hex digits), ids or null,
      decode(ids) or null when it equals the text, decode(ids, skip_special_tokens=True) or
      null when it equals decode(ids)], ...],
   "decode_cases": [[ids, decode(ids), decode(ids, skip_special_tokens=True)], ...]}

Ids are encode(text) with add_special_tokens=True. (Python's decode skips special tokens by
default; both calls here say which they want.) Full ids are kept for every FULL_EVERY-th
text and for short encodings, hashes for the rest, so the files stay small; the Swift test
prints the text, both counts and phikit's ids when a hash differs, and
`scripts/tokenizer/show_golden.py NAME INDEX` prints the expected ids and tokens.
The hash is FNV-1a 64 over the ids as little-endian uint32. Each decode is null when it gives
the text back, the string when short (or in a full entry), else {"h": FNV-1a 64 of its UTF-8}.

`decode_cases` are random id sequences (not encodings of text): byte tokens in invalid
orders, special tokens, rare ids — decode must match there too.

Usage: make_golden.py  (run with the reference venv's python: tokenizers 0.23.3)
"""

import subprocess
import json
import random
import struct
import sys
from pathlib import Path

import tokenizers
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "Tests/PhiTextTests/Fixtures/tokenizer"
SHARED = Path(subprocess.check_output([ROOT / "scripts/fixtures.sh"], text=True).strip())
TOKENIZERS = {
    "phi35": SHARED / "microsoft--Phi-3.5-mini-instruct/tokenizer.json",
    "phi4mini": SHARED / "_derived/microsoft--Phi-4-mini-instruct/tokenizer.json",
    "stories260k": ROOT / "models/stories-260k/tokenizer.json",
    "phi3early": SHARED / "ort-extensions-testdata--phi-3/tokenizer.json",
    # Phi-1/1.5/2's shape (GPT-2/CodeGen byte-level BPE, whitespace-run added tokens):
    # made by make_phi2like_tokenizer.py
    "phi2like": FIXTURES / "phi2like-tokenizer.json",
}
FULL_EVERY = 40
FULL_IF_AT_MOST = 12


def fnv1a64(ids):
    h = 0xCBF29CE484222325
    for b in struct.pack(f"<{len(ids)}I", *ids):
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def expected_text(decoded, text, full):
    """null when the decode gives the text back; the string when short (or a full entry);
    else {"h": fnv1a64 of its UTF-8}."""
    if decoded == text:
        return None
    if full or len(decoded) <= 80:
        return decoded
    h = 0xCBF29CE484222325
    for b in decoded.encode("utf-8"):
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return {"h": f"{h:016x}"}


def decode_cases(tok, rng):
    size = tok.get_vocab_size(with_added_tokens=True)
    vocab = tok.get_vocab(with_added_tokens=True)
    byte_ids = [vocab[f"<0x{b:02X}>"] for b in range(256) if f"<0x{b:02X}>" in vocab]
    special = [t.id if hasattr(t, "id") else i for i, t in tok.get_added_tokens_decoder().items()]
    emoji = tok.encode("🤖 é 日本", add_special_tokens=False).ids
    cases = [[], [0], emoji, emoji[:-1], emoji[::-1], special, special + emoji]
    for _ in range(300):
        ids = []
        for _ in range(rng.randint(1, 12)):
            r = rng.random()
            if r < 0.3 and byte_ids:
                ids += rng.sample(byte_ids, rng.randint(1, 4))
            elif r < 0.4:
                ids.append(rng.choice(special))
            elif r < 0.5:
                ids += emoji[: rng.randint(1, len(emoji))]
            else:
                ids.append(rng.randrange(size))
        cases.append(ids)
    return [[ids, tok.decode(ids, skip_special_tokens=False), tok.decode(ids, skip_special_tokens=True)]
            for ids in cases]


def main():
    texts = [json.loads(line) for line in (FIXTURES / "corpus.jsonl").read_text("utf-8").split("\n")[:-1]]
    for name, path in TOKENIZERS.items():
        tok = Tokenizer.from_file(str(path))
        entries = []
        tokens = 0
        for i, text in enumerate(texts):
            ids = tok.encode(text).ids
            tokens += len(ids)
            full = i % FULL_EVERY == 0 or len(ids) <= FULL_IF_AT_MOST
            decoded = tok.decode(ids, skip_special_tokens=False)
            skipped = tok.decode(ids, skip_special_tokens=True)
            entries.append([len(ids), fnv1a64(ids), ids if full else None,
                            expected_text(decoded, text, full), expected_text(skipped, text, full)])
        out = {"tokenizer": str(path.relative_to(ROOT.parent)), "tokenizers_version": tokenizers.__version__,
               "texts": len(texts), "tokens": tokens, "entries": entries,
               "decode_cases": decode_cases(tok, random.Random(7))}
        dest = FIXTURES / f"golden-{name}.json"
        dest.write_text(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n", "utf-8")
        print(f"{dest.name}: {len(texts)} texts, {tokens} tokens, {dest.stat().st_size} bytes",
              file=sys.stderr)


if __name__ == "__main__":
    main()
