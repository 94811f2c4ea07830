#!/usr/bin/env python3
"""A tokenizer.json shaped like Phi-1/1.5/2's (microsoft/phi-2: the CodeGen tokenizer, i.e.
GPT-2's byte-level BPE plus added tokens for runs of spaces and tabs), small enough to commit:
Tests/PhiTextTests/Fixtures/tokenizer/phi2like-tokenizer.json.

The real file (written from knowledge; the Hub is not reachable here) has: no normalizer;
ByteLevel pre-tokenizer (add_prefix_space false, trim_offsets true, use_regex true); BPE
without byte fallback, unk or dropout; ByteLevel post-processor and decoder; id 50256
`<|endoftext|>` (special, not normalized) followed by 38 non-special, normalized added
tokens: runs of 31 down to 2 spaces, then of 9 down to 2 tabs. Here the BPE is trained on
the tokenizer corpus (Tests/PhiTextTests/Fixtures/tokenizer/corpus.jsonl) to 2,000 tokens,
and the added tokens follow it in the same order and kinds.

    python3 scripts/tokenizer/make_phi2like_tokenizer.py   (tokenizers 0.23)
then scripts/tokenizer/make_golden.py for golden-phi2like.json.
"""
import json
from pathlib import Path

from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "Tests/PhiTextTests/Fixtures/tokenizer"


def main():
    texts = [json.loads(line) for line in (FIXTURES / "corpus.jsonl").read_text("utf-8").split("\n")[:-1]]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True,
                                                 use_regex=True)
    tok.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
    tok.post_processor = processors.ByteLevel(add_prefix_space=True, trim_offsets=False,
                                              use_regex=True)
    trainer = trainers.BpeTrainer(vocab_size=2000, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer)
    tok.add_special_tokens([AddedToken("<|endoftext|>", normalized=False, special=True)])
    runs = [" " * n for n in range(31, 1, -1)] + ["\t" * n for n in range(9, 1, -1)]
    tok.add_tokens([AddedToken(r, normalized=True, special=False) for r in runs])
    dest = FIXTURES / "phi2like-tokenizer.json"
    tok.save(str(dest))
    print(f"{dest.name}: {tok.get_vocab_size()} tokens, {dest.stat().st_size} bytes")


if __name__ == "__main__":
    main()
