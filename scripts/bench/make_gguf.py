#!/usr/bin/env python3
"""Write a Phi-3-family Hugging Face checkpoint as a float GGUF for llama.cpp (arch `phi3`).

    make_gguf.py SRC_DIR OUT.gguf

The benchmark gives llama.cpp the SAME weights phikit converts: the tensors are copied
bit for bit in the checkpoint's float dtype (bf16 stays bf16, fp16 stays fp16; norms become
f32, which is exact), then `quantize_gguf.py` makes Q4_0 / Q4_K_M from this file.

What llama.cpp's own converter (convert_hf_to_gguf.py, class Phi3MiniModel) writes, and so
what we write, learned from reading it:
- tensors: HF names mapped with gguf's TensorNameMap for MODEL_ARCH.PHI3 (fused attn_qkv,
  fused ffn_up = gate_up_proj, no `output` when the embeddings are tied: llama.cpp then uses
  token_embd as the output matrix), plus rope_factors_long/short (f32) for LongRoPE.
- hyperparameters: context and original context length, sizes, heads, rms eps, rope
  dimension count = int(partial_rotary_factor * hidden) / heads, rope base, sliding window,
  and the LongRoPE attention factor sqrt(1 + ln(max/orig) / ln(orig)).
- vocabulary: Phi-3/3.5 is SentencePiece ("llama" model; tokenizer.model pieces, scores and
  types, then the added tokens of added_tokens.json / tokenizer_config.json /
  tokenizer.json), Phi-4-mini is byte-level BPE ("gpt2" model, pre-tokenizer "gpt-4o", merges
  from tokenizer.json). Both padded with [PADi] entries up to config.vocab_size, like the
  converter, because llama.cpp wants one vocabulary entry per embedding row.

Reads the shards through numpy memmaps, so RSS stays small while writing ~7.6 GB.
The output is written to OUT.gguf.partial and renamed at the end.
"""
import argparse
import json
import math
import os
import sys
from pathlib import Path

import gguf
import numpy as np

from compare_outputs import Unreadable, tensors_of

# safetensors dtype -> (numpy dtype to view the bytes as, GGML type to store them as)
FLOAT_TYPES = {
    "BF16": (np.uint16, gguf.GGMLQuantizationType.BF16),
    "F16": (np.float16, gguf.GGMLQuantizationType.F16),
    "F32": (np.float32, gguf.GGMLQuantizationType.F32),
}
FILE_TYPE = {"BF16": gguf.LlamaFileType.MOSTLY_BF16, "F16": gguf.LlamaFileType.MOSTLY_F16,
             "F32": gguf.LlamaFileType.ALL_F32}
TT = gguf.TokenType


def die(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def to_f32(raw, st_dtype):
    """A small tensor (a norm) as float32; bf16 -> f32 is exact (append 16 zero bits)."""
    if st_dtype == "BF16":
        return (np.asarray(raw, dtype=np.uint32) << 16).view(np.float32)
    return np.asarray(raw, dtype=np.float32)


def rope_params(cfg):
    """(rope dims, long factors, short factors, attention factor) as llama.cpp expects them."""
    h, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    rope_dims = int(cfg.get("partial_rotary_factor", 1.0) * h) // heads
    rs = cfg.get("rope_scaling") or {}
    kind = (rs.get("type") or rs.get("rope_type") or "").lower()
    if not rs.get("long_factor"):
        return rope_dims, None, None, None
    if kind not in ("longrope", "su"):
        die(f"rope_scaling type {kind!r}: only longrope/su are handled here")
    long_f, short_f = rs["long_factor"], rs.get("short_factor")
    if short_f is None or len(long_f) != len(short_f) or len(long_f) * 2 != rope_dims:
        die(f"rope factor lists must both have rope_dims/2 = {rope_dims // 2} entries")
    orig = cfg["original_max_position_embeddings"]
    scale = cfg["max_position_embeddings"] / orig
    attn = math.sqrt(1 + math.log(scale) / math.log(orig)) if scale > 1.0 else 1.0
    return rope_dims, long_f, short_f, attn


def add_hparams(w, cfg, file_type):
    rope_dims, _, _, attn = rope_params(cfg)
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_rope_scaling_orig_ctx_len(
        cfg.get("original_max_position_embeddings", cfg["max_position_embeddings"]))
    w.add_embedding_length(cfg["hidden_size"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_head_count(cfg["num_attention_heads"])
    w.add_head_count_kv(cfg.get("num_key_value_heads") or cfg["num_attention_heads"])
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_rope_dimension_count(rope_dims)
    w.add_rope_freq_base(cfg.get("rope_theta", 10000.0))
    w.add_file_type(file_type)
    # The converter writes 0 when the config has none (that is how it tells Phi-4 apart).
    w.add_sliding_window(cfg.get("sliding_window") or 0)
    if attn is not None:
        w.add_rope_scaling_attn_factors(attn)
    w.add_quantization_version(gguf.GGML_QUANT_VERSION)


def pad_vocab(tokens, toktypes, vocab_size, scores=None):
    """Fill ids the tokenizer does not use with [PADi] (UNUSED), up to the embedding rows."""
    if len(tokens) > vocab_size:
        die(f"tokenizer has {len(tokens)} tokens but config.vocab_size is {vocab_size}")
    for i in range(len(tokens), vocab_size):
        tokens.append(f"[PAD{i}]".encode())
        toktypes.append(TT.UNUSED)
        if scores is not None:
            scores.append(-10000.0)


def added_tokens(src):
    """{id: (content, special)} from tokenizer_config.json then tokenizer.json (last wins)."""
    out = {}
    p = src / "added_tokens.json"
    if p.is_file():
        out.update({i: (c, False) for c, i in json.loads(p.read_text()).items()})
    p = src / "tokenizer_config.json"
    if p.is_file():
        for i, d in json.loads(p.read_text()).get("added_tokens_decoder", {}).items():
            out[int(i)] = (d["content"], bool(d.get("special")))
    p = src / "tokenizer.json"
    if p.is_file():
        for d in json.loads(p.read_text()).get("added_tokens", []):
            out[int(d["id"])] = (d["content"], bool(d.get("special")))
    return out


def add_spm_vocab(w, src, vocab_size):
    from sentencepiece import SentencePieceProcessor

    sp = SentencePieceProcessor()
    sp.LoadFromFile(str(src / "tokenizer.model"))
    tokens, scores, types = [], [], []
    for i in range(sp.vocab_size()):
        tokens.append(sp.IdToPiece(i).encode())
        scores.append(sp.GetScore(i))
        types.append(TT.UNKNOWN if sp.IsUnknown(i) else TT.CONTROL if sp.IsControl(i)
                     else TT.UNUSED if sp.IsUnused(i) else TT.BYTE if sp.IsByte(i) else TT.NORMAL)
    pad_vocab(tokens, types, vocab_size, scores)
    for i, (content, special) in added_tokens(src).items():
        if i < vocab_size:
            tokens[i], scores[i] = content.encode(), -1000.0
            types[i] = TT.CONTROL if special else TT.USER_DEFINED
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    gguf.SpecialVocab(src, n_vocab=len(tokens)).add_to_gguf(w)


def add_bpe_vocab(w, src, vocab_size):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(src / "tokenizer.json"))
    by_id = {i: t for t, i in tok.get_vocab(with_added_tokens=True).items()}
    added = added_tokens(src)
    tokens, types = [], []
    for i in range(max(by_id) + 1):
        if i not in by_id:
            tokens.append(f"[PAD{i}]".encode())
            types.append(TT.UNUSED)
        elif i in added:
            tokens.append(added[i][0].encode())
            types.append(TT.CONTROL if added[i][1] else TT.USER_DEFINED)
        else:
            tokens.append(by_id[i].encode())
            types.append(TT.NORMAL)
    pad_vocab(tokens, types, vocab_size)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-4o")  # o200k pre-tokenizer: what llama.cpp names Phi-4-mini's
    w.add_token_list(tokens)
    w.add_token_types(types)
    gguf.SpecialVocab(src, load_merges=True, n_vocab=len(tokens)).add_to_gguf(w)


def add_vocab(w, src, cfg):
    tc = src / "tokenizer_config.json"
    klass = json.loads(tc.read_text()).get("tokenizer_class") if tc.is_file() else None
    if klass == "GPT2Tokenizer":  # how the converter tells Phi-4's BPE from Phi-3's SPM
        add_bpe_vocab(w, src, cfg["vocab_size"])
    elif (src / "tokenizer.model").is_file():
        add_spm_vocab(w, src, cfg["vocab_size"])
    else:
        die(f"{src}: neither a GPT2Tokenizer tokenizer_config.json nor a tokenizer.model")


def add_tensors(w, src, cfg):
    """Map and add every tensor; returns the checkpoint's float dtype (safetensors name)."""
    try:
        tensors, _ = tensors_of(src)
    except (Unreadable, OSError, ValueError) as e:
        die(str(e))
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.PHI3, cfg["num_hidden_layers"])
    dtypes = {t[1] for t in tensors.values()}
    if len(dtypes) != 1 or not dtypes <= FLOAT_TYPES.keys():
        die(f"{src}: expected one float dtype (BF16/F16/F32) for all tensors, found {dtypes}")
    (st_dtype,) = dtypes
    np_dtype, ggml_type = FLOAT_TYPES[st_dtype]
    for name, (path, _, shape, start, end) in sorted(tensors.items()):
        gname = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if gname is None:
            die(f"tensor {name}: no llama.cpp phi3 name for it")
        count = int(np.prod(shape))
        if (end - start) != count * np.dtype(np_dtype).itemsize:
            die(f"tensor {name}: {end - start} bytes do not match shape {shape} of {st_dtype}")
        data = np.memmap(path, dtype=np_dtype, mode="r", offset=start, shape=tuple(shape))
        if len(shape) == 1:
            w.add_tensor(gname, to_f32(data, st_dtype))
        elif st_dtype == "BF16":
            # gguf wants raw bytes for bf16: a uint8 view, its shape is converted back by type.
            w.add_tensor(gname, data.view(np.uint8), raw_dtype=ggml_type)
        else:
            w.add_tensor(gname, data)
    _, long_f, short_f, _ = rope_params(cfg)
    if long_f is not None:
        w.add_tensor(gguf.TENSOR_NAMES[gguf.MODEL_TENSOR.ROPE_FACTORS_LONG] + ".weight",
                     np.array(long_f, dtype=np.float32))
        w.add_tensor(gguf.TENSOR_NAMES[gguf.MODEL_TENSOR.ROPE_FACTORS_SHORT] + ".weight",
                     np.array(short_f, dtype=np.float32))
    return st_dtype


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", type=Path, help="Hugging Face phi3 checkpoint directory")
    ap.add_argument("out", type=Path, help="GGUF file to write")
    a = ap.parse_args()
    cfg_path = a.src / "config.json"
    if not cfg_path.is_file():
        die(f"{cfg_path} not found")
    cfg = json.loads(cfg_path.read_text())
    if cfg.get("model_type") != "phi3":
        die(f"model_type {cfg.get('model_type')!r}: this writer knows phi3 only")

    tmp = a.out.with_name(a.out.name + ".partial")
    w = gguf.GGUFWriter(tmp, gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.PHI3])
    w.add_name(a.src.name)
    st_dtype = add_tensors(w, a.src, cfg)
    add_hparams(w, cfg, FILE_TYPE[st_dtype])
    add_vocab(w, a.src, cfg)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(tmp, a.out)
    print(f"wrote {a.out} ({a.out.stat().st_size / 1e9:.2f} GB, {st_dtype})")


if __name__ == "__main__":
    main()
