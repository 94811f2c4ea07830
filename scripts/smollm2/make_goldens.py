#!/usr/bin/env python3
"""Goldens for SmolLM2-135M-Instruct (Tests/PhiKitTests/Fixtures/smollm2/), from the Q4_1 GGUF
that scripts/smollm2/fetch_and_convert.sh fetched (run that first).

    python3 scripts/smollm2/make_goldens.py   # gguf, llama-cpp-python, torch, transformers, accelerate

- smollm2-vocab.gguf: the GGUF's metadata without a tensor (the vocabulary, merges, token
  types, chat template; Apache-2.0 as the model, see PROVENANCE.md), so `make test` checks
  phikit's GGUF tokenizer conversion without the 98 MB file;
- tokenizer.json: a corpus (digits, code, emoji, accents, the chat tokens) and the ids
  llama.cpp gives each text from the same GGUF (llama-cpp-python, vocab_only=True,
  special=True, no BOS: the file says add_bos_token false);
- model.json: for a ChatML prompt, transformers' float32 forward pass over the GGUF's
  dequantized weights (from_pretrained(gguf_file=…), which undoes llama.cpp's q/k
  permutation): the last position's 32 largest logits and the largest magnitude, and 24
  greedy tokens with the top-2 gap of every step; plus llama.cpp's own 24 greedy tokens.
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
OUT = os.path.join(ROOT, "Tests", "PhiKitTests", "Fixtures", "smollm2")
GGUF = subprocess.check_output([os.path.join(HERE, "path.sh"), "--gguf"], text=True).strip()
SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
CHAT = (f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n"
        "What is the capital of France?<|im_end|>\n<|im_start|>assistant\n")
CORPUS = [
    "Hello world",
    " Hello World!",
    "The year 2024 had 366 days; 3.14159 is pi, 1,000,000 is a million.",
    "phone: +1 (555) 010-9999, version 0.1.2, ２０２４ and ½ and ²",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    "for (int i = 0; i < 10; ++i) { printf(\"%d\\n\", i); }",
    "    indented\t\ttabs\n\n\nnew lines  double  spaces   ",
    "emoji 🦙🚀👩‍💻 and flags 🇫🇷 ❤️",
    "Café naïve façade — “quotes” and ‘apostrophes’, it's we're I'll",
    "Привет мир, 你好世界, こんにちは, مرحبا",
    CHAT,
    "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|endoftext|>",
    "<|im_start|><|im_end|> text between <|im_start|>assistant",
]


def vocab_only():
    """The GGUF's key/value metadata, no tensors."""
    import gguf

    reader = gguf.GGUFReader(GGUF)
    path = os.path.join(OUT, "smollm2-vocab.gguf")
    writer = gguf.GGUFWriter(path, arch="llama")
    for field in reader.fields.values():
        if field.name.startswith("GGUF.") or field.name == "general.architecture":
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), kind, sub_type=sub)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def tokenize(llm, text):
    return llm.tokenize(text.encode(), add_bos=False, special=True)


def tokenizer_golden():
    import llama_cpp

    llm = llama_cpp.Llama(model_path=GGUF, vocab_only=True, verbose=False)
    cases = [{"text": t, "ids": tokenize(llm, t)} for t in CORPUS]
    write("tokenizer.json", {"cases": cases, "llama_cpp_python": llama_cpp.__version__})
    return cases


def model_golden(prompt):
    import llama_cpp
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(
        os.path.dirname(GGUF), gguf_file=os.path.basename(GGUF), dtype=torch.float32)
    model.eval()
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 2
    ids = torch.tensor([prompt])
    with torch.no_grad():
        logits = model(ids).logits[0, -1].numpy().astype(np.float64)
        out = model.generate(ids, max_new_tokens=24, do_sample=False, output_scores=True,
                             return_dict_in_generate=True)
    top = np.argsort(-logits)[:32]
    steps = []
    for row in out.scores:
        s = np.sort(row[0].numpy().astype(np.float64))
        steps.append(float(f"{s[-1] - s[-2]:.6g}"))
    llm = llama_cpp.Llama(model_path=GGUF, n_ctx=256, verbose=False, seed=0)
    llm.reset()
    llama_tokens = []
    for token in llm.generate(prompt, top_k=1, temp=0.0, reset=True):
        llama_tokens.append(int(token))
        if len(llama_tokens) == 24:
            break
    write("model.json", {
        "prompt": prompt,
        "top_logits": [[int(i), float(f"{logits[i]:.7g}")] for i in top],
        "max_abs_logit": float(f"{np.abs(logits).max():.7g}"),
        "greedy": out.sequences[0, len(prompt):].tolist(),
        "greedy_gaps": steps,
        "llama_cpp_greedy": llama_tokens,
        "transformers": transformers.__version__, "torch": torch.__version__,
        "llama_cpp_python": llama_cpp.__version__,
    })


def write(name, data):
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def main():
    if not os.path.exists(GGUF):
        sys.exit(f"error: {GGUF} is missing\nhint: scripts/smollm2/fetch_and_convert.sh")
    os.makedirs(OUT, exist_ok=True)
    vocab_only()
    cases = tokenizer_golden()
    model_golden(next(c["ids"] for c in cases if c["text"] == CHAT))


if __name__ == "__main__":
    main()
