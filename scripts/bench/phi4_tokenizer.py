#!/usr/bin/env python3
"""A stand-in Phi-4 (14B) tokenizer: the first 100352 tokens of the Phi-4-mini (o200k) BPE.

    phi4_tokenizer.py OUT_DIR [--source DIR] [--vocab 100352]

Phi-4's own tokenizer (cl100k-based, 100352 ids) is not among the fixtures; Phi-4-mini's o200k
tokenizer is (Tests/Fixtures/_derived). For a benchmark only the shape matters: the
vocabulary must have exactly as many entries as the embedding has rows, and every prompt id
must be below it. BPE ranks are ids in o200k (a merge's result always has a larger id than its
parts), so keeping the ids below N and the merges among them is o200k's BPE cut at rank N.
Phi-4's special tokens are put at their Phi-4 ids (<|endoftext|> 100257, <|im_start|> 100264,
<|im_end|> 100265, <|im_sep|> 100266), replacing the o200k tokens there (and the merges that
made or used them). Writes tokenizer.json and tokenizer_config.json (GPT2Tokenizer, as
scripts/bench/make_gguf.py expects of a byte-level BPE).
"""
import subprocess
import argparse
import json
from pathlib import Path

FIXTURES = Path(subprocess.check_output(
    [Path(__file__).resolve().parents[1] / "fixtures.sh"], text=True).strip())
SPECIAL = {100257: "<|endoftext|>", 100264: "<|im_start|>", 100265: "<|im_end|>",
           100266: "<|im_sep|>"}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--source", type=Path, default=FIXTURES / "_derived/microsoft--Phi-4-mini-instruct")
    ap.add_argument("--vocab", type=int, default=100352)
    a = ap.parse_args()
    tok = json.loads((a.source / "tokenizer.json").read_text())
    model = tok["model"]
    vocab = {t: i for t, i in model["vocab"].items() if i < a.vocab and i not in SPECIAL}
    merges = [m for m in model["merges"]
              if all(p in vocab for p in (m if isinstance(m, list) else m.split(" ")))
              and "".join(m if isinstance(m, list) else m.split(" ")) in vocab]
    vocab.update({c: i for i, c in SPECIAL.items()})  # tokenizers keeps an added token's id
    model["vocab"], model["merges"] = vocab, merges  # only when the model has it too
    tok["added_tokens"] = [
        {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True} for i, c in sorted(SPECIAL.items())]
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "tokenizer.json").write_text(json.dumps(tok, ensure_ascii=False))
    config = {"tokenizer_class": "GPT2Tokenizer", "add_bos_token": False, "add_eos_token": False,
              "bos_token": "<|endoftext|>", "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
              "unk_token": "<|endoftext|>", "clean_up_tokenization_spaces": False,
              "added_tokens_decoder": {str(t["id"]): t for t in tok["added_tokens"]}}
    (a.out / "tokenizer_config.json").write_text(json.dumps(config, indent=2))
    print(f"{a.out}: {len(vocab)} tokens ({len(SPECIAL)} special), {len(merges)} merges")


if __name__ == "__main__":
    main()
