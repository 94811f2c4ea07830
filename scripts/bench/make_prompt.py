#!/usr/bin/env python3
"""Make a prompt text that is exactly N tokens for a model's tokenizer.

    make_prompt.py TOKENIZER.json N OUT_PREFIX

Writes OUT_PREFIX.txt (the text, no trailing newline) and OUT_PREFIX.ids.json (its token ids,
as the `tokenizers` library encodes it with the tokenizer's own special-token handling, i.e.
what `phikit run --no-chat-template -p TEXT` must feed the model). Neither Phi-3.5's nor
Phi-4-mini's tokenizer.json adds a BOS token, so N ids means N positions for both engines;
llama.cpp gets these ids directly, so both engines process the same tokens.

The text is plain English prose, repeated, cut at a word boundary where the count is N.
"""
import json
import sys
from pathlib import Path

from tokenizers import Tokenizer

PROSE = (
    "The lighthouse keeper climbed the spiral stairs every evening at dusk, counting the steps "
    "out of habit although he had known the number for years. From the gallery he could see "
    "the fishing boats returning to the harbour, their lamps swinging with the swell, and the "
    "long grey line of the coast bending away to the north. He trimmed the wick, polished the "
    "great lens until it shone, and wrote the weather in the log: wind from the west, a light "
    "rain, visibility good. Later, when the beam was turning steadily, he made tea on the small "
    "stove and read by the window, looking up now and then to watch the light sweep across the "
    "water and the rocks below."
).split()


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        sys.exit(2)
    tok = Tokenizer.from_file(sys.argv[1])
    n, prefix = int(sys.argv[2]), Path(sys.argv[3])
    words, count = [], 0
    while count < n:
        words.append(PROSE[len(words) % len(PROSE)])
        count = len(tok.encode(" ".join(words)).ids)
        if count > n:
            # This word added more than one token: drop it and fill with single-token words.
            words.pop()
            for filler in ("the", "a", "and", "of", "to", "sea", "light"):
                ids = tok.encode(" ".join(words + [filler])).ids
                if len(ids) == n:
                    words.append(filler)
                    count = n
                    break
            else:
                sys.exit(f"error: cannot reach exactly {n} tokens with this tokenizer")
    text = " ".join(words)
    ids = tok.encode(text).ids
    assert len(ids) == n, (len(ids), n)
    prefix.with_suffix(".txt").write_text(text)
    prefix.with_suffix(".ids.json").write_text(json.dumps(ids) + "\n")
    print(f"{prefix}.txt: {len(text)} characters, {len(ids)} tokens")


if __name__ == "__main__":
    main()
