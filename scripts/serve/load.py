#!/usr/bin/env python3
"""Aggregate decode speed of `phikit serve` with 1, 2, 4 and 8 concurrent streaming clients
(and the time to first token), on MODEL (default: a 150 M-parameter Phi-3-shaped model of
zeros with the Phi-3.5 tokenizer, written here: it never stops early). 127.0.0.1 only.

    PHIKIT_BIN=.build/release/phikit python3 scripts/serve/load.py [MODEL] [TOKENS]"""

import http.client
import json
import os
import shutil
import struct
import sys
import tempfile
import threading
import time

from serve_support import FIXTURES, Server


def zero_model():
    hidden, inter, layers, vocab = 1024, 2048, 8, 32064
    directory = tempfile.mkdtemp(prefix="phikit-load-")
    config = {"model_type": "phi3", "hidden_size": hidden, "intermediate_size": inter,
              "num_hidden_layers": layers, "num_attention_heads": 8, "num_key_value_heads": 8,
              "vocab_size": vocab, "max_position_embeddings": 4096, "rms_norm_eps": 1e-5,
              "rope_theta": 10000.0, "tie_word_embeddings": False, "torch_dtype": "bfloat16"}
    json.dump(config, open(os.path.join(directory, "config.json"), "w"))
    shapes = [("model.embed_tokens.weight", [vocab, hidden])]
    for i in range(layers):
        p = f"model.layers.{i}."
        shapes += [(p + "input_layernorm.weight", [hidden]),
                   (p + "self_attn.qkv_proj.weight", [3 * hidden, hidden]),
                   (p + "self_attn.o_proj.weight", [hidden, hidden]),
                   (p + "post_attention_layernorm.weight", [hidden]),
                   (p + "mlp.gate_up_proj.weight", [2 * inter, hidden]),
                   (p + "mlp.down_proj.weight", [hidden, inter])]
    shapes += [("model.norm.weight", [hidden]), ("lm_head.weight", [vocab, hidden])]
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in shapes:
        size = 2
        for d in shape:
            size *= d
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    blob = json.dumps(header).encode()
    blob += b" " * (-len(blob) % 8)
    with open(os.path.join(directory, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(blob)) + blob)
        f.truncate(8 + len(blob) + offset)
    for name in ["tokenizer.json", "tokenizer_config.json"]:
        shutil.copy(os.path.join(FIXTURES, "microsoft--Phi-3.5-mini-instruct", name), directory)
    return directory


def client(port, tokens, results, index):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    body = {"prompt": f"Client {index} says hello", "max_tokens": tokens, "temperature": 0,
            "stream": True, "stream_options": {"include_usage": True}}
    start = time.time()
    connection.request("POST", "/v1/completions", json.dumps(body))
    response = connection.getresponse()
    first, count = None, 0
    for line in response:
        if line.startswith(b"data: {"):
            chunk = json.loads(line[6:])
            if chunk.get("choices") and first is None:
                first = time.time() - start
            if chunk.get("usage"):
                count = chunk["usage"]["completion_tokens"]
    results[index] = (first, count, time.time())


def main():
    own = len(sys.argv) < 2 or not sys.argv[1]
    model = zero_model() if own else sys.argv[1]
    tokens = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    server = Server(model, "--parallel", "8", "--quiet")
    try:
        print("clients  aggregate tok/s  per client tok/s  time to first token (median)")
        for n in [1, 2, 4, 8]:
            results = [None] * n
            threads = [threading.Thread(target=client, args=(server.port, tokens, results, i))
                       for i in range(n)]
            start = time.time()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = max(r[2] for r in results) - start
            total = sum(r[1] for r in results)
            ttft = sorted(r[0] for r in results)[n // 2]
            print(f"{n:7d}  {total / elapsed:15.1f}  {total / elapsed / n:16.1f}  {ttft:8.2f} s")
    finally:
        server.stop()
        if own:
            shutil.rmtree(model, ignore_errors=True)


if __name__ == "__main__":
    main()
