#!/usr/bin/env python3
"""Golden prompts for `phikit tokenize --chat` and `run`: a conversation rendered with the
model's chat template (transformers' apply_chat_template, add_generation_prompt=True) and the
text encoded with the `tokenizers` library without added special tokens, which is what
apply_chat_template(tokenize=True) does. transformers' own ids are stored for information:
they equal the `tokenizers` ids except where the transformers tokenizer class re-splits the
text its own way (the reconstructed Phi-4-mini file loads as GPT2Tokenizer, whose regex splits
"\tand" differently); phikit follows tokenizer.json, i.e. the `tokenizers` library.

Run with the reference venv: /work/venv/bin/python scripts/tokenizer/make_chat_prompt_golden.py
Writes Tests/PhiKitTests/Fixtures/chat_prompt/golden.json.
"""
import subprocess
import json
import pathlib

import tokenizers
import transformers
from transformers import AutoTokenizer

REPO = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(subprocess.check_output([REPO / "scripts/fixtures.sh"], text=True).strip())
MODELS = ["microsoft--Phi-3.5-mini-instruct", "_derived/microsoft--Phi-4-mini-instruct"]
CONVERSATIONS = [
    [{"role": "user", "content": "What is the gravity on Mars and the moon?"}],
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi"}],
    [
        {"role": "user", "content": "Write a haiku\nabout  tabs\tand 🤖."},
        {"role": "assistant", "content": "Tabs hide in the code"},
        {"role": "user", "content": "Another, in 日本語"},
    ],
]


def main():
    cases = []
    for model in MODELS:
        directory = SHARED / model
        auto = AutoTokenizer.from_pretrained(directory)
        raw = tokenizers.Tokenizer.from_file(str(directory / "tokenizer.json"))
        for conversation in CONVERSATIONS:
            text = auto.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
            ids = raw.encode(text, add_special_tokens=False).ids
            reference = auto.apply_chat_template(conversation, add_generation_prompt=True, tokenize=True)
            if not isinstance(reference, list):
                reference = reference["input_ids"]
            cases.append({"model": model, "conversation": conversation, "text": text,
                          "ids": ids, "transformers_ids": list(reference)})
    out = REPO / "Tests/PhiKitTests/Fixtures/chat_prompt/golden.json"
    out.write_text(json.dumps({"transformers": transformers.__version__,
                               "tokenizers": tokenizers.__version__, "cases": cases},
                              ensure_ascii=False, indent=1) + "\n")
    print(f"wrote {len(cases)} cases to {out}")


if __name__ == "__main__":
    main()
