#!/usr/bin/env python3
"""Goldens for every tokenizer component phikit implements, one small tokenizer per variant.

The real Phi tokenizers (make_golden.py) only use some components. Here each variant takes a
base tokenizer and swaps in other normalizers, pre-tokenizers (every Split behaviour, Metaspace
schemes, Digits, Whitespace, Punctuation, ByteLevel options, o200k/cl100k/GPT-2 and
backtracking-only regexes), added-token options (single_word, lstrip, rstrip, normalized),
BPE options (unk and fuse_unk, continuing_subword_prefix, end_of_word_suffix, ignore_merges),
post-processors and decoders. The `tokenizers` library encodes and decodes a sample of the
corpus with each; the Swift test must give the same ids and texts.

Bases (written next to the output, used by the tests as-is):
  base-sp.json     the stories-260k tokenizer (SentencePiece-style BPE, byte fallback)
  base-bytelevel.json, base-suffix.json   small BPEs trained here on the corpus (deterministic
                   enough; the committed files are the reference, not the training)

Output: Tests/PhiTextTests/Fixtures/tokenizer/components.json
  {"texts": [...], "variants": [{"name", "base", "replace": {top-level key: value},
    "model": {model key: value}, "ids": [[...] per text], "ids_plain": [[...] without
    special tokens, or null when equal], "skipped": [decode(ids, skip_special_tokens=True):
    null when it is the input text], "decoded": [decode(ids): null when equal to skipped]}]}
  A decode that is not null is the string when short, else {"h": FNV-1a 64 of its UTF-8}.
"""

import copy
import json
from pathlib import Path

from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "Tests/PhiTextTests/Fixtures/tokenizer"


def expected(decoded, reference):
    """null when the decode equals `reference`, the string when short, else its hash."""
    if decoded == reference:
        return None
    if len(decoded) <= 40:
        return decoded
    h = 0xCBF29CE484222325
    for b in decoded.encode("utf-8"):
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return {"h": f"{h:016x}"}


def sample_texts():
    corpus = [json.loads(l) for l in (FIXTURES / "corpus.jsonl").read_text("utf-8").split("\n")[:-1]]
    texts = [t[:56] for t in corpus[::80]]
    texts += ["", " ", "Hello  World", "  it's  DONE'll 123 4567 x1y2", "a\tb\nc\r\nd   e",
              "<s>x</s> <|user|> hi <|end|>\n next", "hello<sep>world", "word<sep> word <sep>word",
              "The USA's PM said: «¿Qué?» — 3.14%!", "İstanbul ǅemal ﬁne Ⅻ ①", "ＡＢＣ１２３ ｶﾀｶﾅ",
              "e\u0301 a\u030a", "  leading", "trailing  ", "x" * 40, "日本語のテキスト🤖🤖"]
    return texts


def train(pre, vocab_size, **kw):
    tok = Tokenizer(models.BPE(**{k: v for k, v in kw.items() if k in ("continuing_subword_prefix", "end_of_word_suffix", "unk_token")}))
    tok.pre_tokenizer = pre
    # NFC: no two vocabulary keys that are canonically equivalent (the Swift test edits the
    # base with PhiFormats' JSONValue, which rejects such keys as duplicates).
    tok.normalizer = normalizers.NFC()
    alphabet = pre_tokenizers.ByteLevel.alphabet() if isinstance(pre, pre_tokenizers.ByteLevel) else []
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False, initial_alphabet=alphabet,
                                  special_tokens=["<unk>", "<s>", "</s>"], **{k: v for k, v in kw.items() if k != "unk_token"})
    corpus = [json.loads(l) for l in (FIXTURES / "corpus.jsonl").read_text("utf-8").split("\n")[:-1]]
    tok.train_from_iterator(corpus[:1500], trainer)
    return json.loads(tok.to_str())


def sp(**pre):
    return {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True, **pre}


def split(pattern, behavior, invert=False, regex=True):
    return {"type": "Split", "pattern": {"Regex" if regex else "String": pattern}, "behavior": behavior,
            "invert": invert}


SP_DECODER = {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                                               {"type": "ByteFallback"}, {"type": "Fuse"},
                                               {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
O200K = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
         r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
CL100K = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
BL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}


def added(content, id, **kw):
    base = {"id": id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": True}
    base.update(kw)
    return base


def variants():
    v = []
    # --- SentencePiece-style base: normalizers, Metaspace, splits, added tokens, post/decoders
    v.append(("metaspace_always", "sp", {"normalizer": None, "pre_tokenizer": sp(),
              "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}}, {}))
    v.append(("metaspace_first_nosplit", "sp", {"normalizer": None, "pre_tokenizer": sp(prepend_scheme="first", split=False),
              "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": False}]}}, {}))
    v.append(("metaspace_never", "sp", {"normalizer": None, "pre_tokenizer": sp(prepend_scheme="never"),
              "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "never", "split": True}}, {}))
    v.append(("nfkc_lowercase_strip", "sp", {"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "NFKC"}, {"type": "Lowercase"}, {"type": "Strip", "strip_left": True, "strip_right": True},
        {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}}, {}))
    v.append(("nfc_nfd_replace_regex", "sp", {"normalizer": {"type": "Sequence", "normalizers": [
        {"type": "NFD"}, {"type": "NFC"}, {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "},
        {"type": "Strip", "strip_left": False, "strip_right": True},
        {"type": "Prepend", "prepend": "▁"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}}, {}))
    v.append(("nfkd", "sp", {"normalizer": {"type": "Sequence", "normalizers": [{"type": "NFKD"}, {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]}}, {}))
    v.append(("digits_punctuation", "sp", {"normalizer": None, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Digits", "individual_digits": True}, {"type": "Punctuation", "behavior": "Isolated"}, sp()]}}, {}))
    v.append(("digits_contiguous_whitespace", "sp", {"normalizer": None, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Digits", "individual_digits": False}, {"type": "Whitespace"}]}, "decoder": {"type": "Fuse"}}, {}))
    v.append(("whitespace_split", "sp", {"normalizer": None, "pre_tokenizer": {"type": "WhitespaceSplit"}, "decoder": None}, {}))
    for behavior in ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"]:
        for invert in [False, True]:
            v.append((f"split_{behavior}_{invert}", "sp", {"normalizer": None, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                split(r"[aeiou]|\s", behavior, invert), sp()]}}, {}))
    v.append(("split_string", "sp", {"normalizer": None, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        split("the", "MergedWithNext", regex=False), sp(prepend_scheme="first")]}}, {}))
    v.append(("split_backtracking_regex", "sp", {"normalizer": None, "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        split(r"(?i:[a-z]+?(?=[aeiou])|TH)|\p{N}{2,}|[^\s\w]{1,2}|\s+(?=\s)|\w+", "Isolated"), sp()]}}, {}))
    toks = [added("<s>", 1), added("</s>", 2), added("<sep>", 512, special=False),
            added("world", 513, single_word=True, special=False), added("hi", 514, lstrip=True, rstrip=True, special=False),
            added("<|user|>", 515, lstrip=True), added("<|end|>", 516, rstrip=True),
            added(" next", 517, normalized=True, special=False), added("DONE", 518, normalized=True, special=False)]
    v.append(("added_token_options", "sp", {"added_tokens": toks}, {}))
    v.append(("template_bos_eos", "sp", {"post_processor": {"type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}, "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}}}, {}))
    v.append(("roberta_processing", "sp", {"post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1], "trim_offsets": True, "add_prefix_space": True}}, {}))
    v.append(("bert_processing_in_sequence", "sp", {"post_processor": {"type": "Sequence", "processors": [
        {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True},
        {"type": "BertProcessing", "sep": ["</s>", 2], "cls": ["<s>", 1]}]}}, {}))
    v.append(("strip_decoder", "sp", {"decoder": {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
        {"type": "Strip", "content": " ", "start": 2, "stop": 0}]}}, {}))  # stop > 0 panics in tokenizers on short tokens
    v.append(("unk_no_fallback", "sp", {}, {"byte_fallback": False, "fuse_unk": False}))
    v.append(("unk_fused_no_fallback", "sp", {}, {"byte_fallback": False, "fuse_unk": True}))
    v.append(("no_unk_no_fallback", "sp", {}, {"byte_fallback": False, "unk_token": None}))
    v.append(("no_decoder", "sp", {"decoder": None}, {}))
    # --- byte-level base
    v.append(("bytelevel_gpt2", "bytelevel", {"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
              "post_processor": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
              "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}}, {}))
    v.append(("bytelevel_no_prefix", "bytelevel", {"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}}, {}))
    v.append(("bytelevel_o200k_ignore_merges", "bytelevel", {"pre_tokenizer": {"type": "Sequence", "pretokenizers": [split(O200K, "Isolated"), BL]}}, {"ignore_merges": True}))
    v.append(("bytelevel_cl100k", "bytelevel", {"pre_tokenizer": {"type": "Sequence", "pretokenizers": [split(CL100K, "Isolated"), BL]}}, {}))
    v.append(("bytelevel_custom_regex", "bytelevel", {"pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        split(r"\p{Lu}?\p{Ll}+|\p{Lu}+(?!\p{Ll})|\d{1,2}|[^\s\p{L}\d]+|\s+", "Isolated"), BL]}}, {}))
    v.append(("bytelevel_added_tokens", "bytelevel", {"added_tokens": [added("<s>", 1), added("</s>", 2), added("<|user|>", 900, rstrip=True),
        added(" hello", 901, normalized=False, special=False), added("Ġworld", 902, normalized=True, special=False)]}, {}))
    # Ids in the file that tokenizers does not use: it numbers new tokens after the vocabulary.
    v.append(("added_token_ids_reassigned", "sp", {"added_tokens": [added("<s>", 7), added("DONE", 600, normalized=True),
        added("<sep>", 9000, special=False), added("the", 3)]}, {}))
    # --- prefix/suffix base
    v.append(("continuing_prefix_suffix", "suffix", {}, {}))
    return v


def main():
    bases = {"sp": json.loads((ROOT / "models/stories-260k/tokenizer.json").read_text("utf-8")),
             "bytelevel": train(pre_tokenizers.ByteLevel(add_prefix_space=False), 900),
             "suffix": train(pre_tokenizers.Whitespace(), 700, continuing_subword_prefix="##", end_of_word_suffix="</w>", unk_token="<unk>")}
    bases["bytelevel"]["decoder"] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    bases["suffix"]["decoder"] = {"type": "Fuse"}
    names = {"sp": "base-sp.json", "bytelevel": "base-bytelevel.json", "suffix": "base-suffix.json"}
    for key, name in names.items():
        if key != "sp":
            (FIXTURES / name).write_text(json.dumps(bases[key], ensure_ascii=False) + "\n", "utf-8")
    texts = sample_texts()
    out = {"texts": texts, "variants": []}
    for name, base, replace, model in variants():
        spec = copy.deepcopy(bases[base])
        spec.update(replace)
        spec["model"].update(model)
        tok = Tokenizer.from_str(json.dumps(spec))
        ids = [tok.encode(t).ids for t in texts]
        plain = [tok.encode(t, add_special_tokens=False).ids for t in texts]
        decoded = [tok.decode(i, skip_special_tokens=False) for i in ids]
        skipped = [tok.decode(i, skip_special_tokens=True) for i in ids]
        out["variants"].append({
            "name": name, "base": names[base], "replace": replace, "model": model, "ids": ids,
            "ids_plain": [None if p == i else p for p, i in zip(plain, ids)],
            "skipped": [expected(k, t) for k, t in zip(skipped, texts)],
            "decoded": [expected(d, k) for d, k in zip(decoded, skipped)]})
    dest = FIXTURES / "components.json"
    dest.write_text(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n", "utf-8")
    print(f"{dest}: {len(out['variants'])} variants × {len(texts)} texts, {dest.stat().st_size} bytes")


if __name__ == "__main__":
    main()
