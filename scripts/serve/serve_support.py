"""Shared by the serve scripts: start `phikit serve` on a free port, and write a scripted
model — a Phi-4-mini-shaped model (real tokenizer and chat template from Tests/Fixtures)
whose greedy answer to any chat is a given text. Its one layer is all zeros and its embeddings
form a lookup table: each token of the text (and <|assistant|>, where answers start) has its
own dimension, and the output row of the token that follows reads that dimension. The text's
tokens must all differ."""

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = subprocess.check_output([os.path.join(ROOT, "scripts", "fixtures.sh")], text=True).strip()
PHI4_TOKENIZER = os.path.join(FIXTURES, "_derived", "microsoft--Phi-4-mini-instruct")
ASSISTANT, END = 200019, 200020


RESULTS = []


def check(name, condition, detail=""):
    """Records one check and prints it: "ok    NAME", or "FAIL  NAME  (DETAIL)"."""
    RESULTS.append(bool(condition))
    print(("ok    " if condition else "FAIL  ") + name + ("" if condition else f"  ({detail})"))


def summary():
    """Prints "N passed, M failed"; returns the exit status (1 when any failed)."""
    failed = RESULTS.count(False)
    print(f"{len(RESULTS) - failed} passed, {failed} failed")
    return 1 if failed else 0


def phikit_binary():
    return os.environ.get("PHIKIT_BIN", os.path.join(ROOT, ".build", "release", "phikit"))


class Server:
    """`phikit serve MODEL --port 0 …`; `url` is http://127.0.0.1:PORT/v1."""

    def __init__(self, model, *options):
        self.process = subprocess.Popen(
            [phikit_binary(), "serve", model, "--port", "0", *options],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        self.lines = []
        first = self.process.stderr.readline()
        self.lines.append(first)
        match = re.search(r"on http://127\.0\.0\.1:(\d+)", first)
        if not match:
            self.process.kill()
            raise RuntimeError("phikit serve did not start: " + first + self.process.stderr.read())
        self.port = int(match.group(1))
        self.base = f"http://127.0.0.1:{self.port}"
        self.url = self.base + "/v1"
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self):
        for line in self.process.stderr:
            self.lines.append(line)

    def stop(self):
        self.process.terminate()
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()


def write_scripted_model(script, hidden=64):
    vocab = 200064
    directory = tempfile.mkdtemp(prefix="phikit-scripted-")
    for name in ["tokenizer.json", "tokenizer_config.json"]:
        shutil.copy(os.path.join(PHI4_TOKENIZER, name), directory)
    config = {
        "model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "hidden_size": hidden,
        "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 4,
        "num_key_value_heads": 2, "vocab_size": vocab, "max_position_embeddings": 4096,
        "partial_rotary_factor": 0.75, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16", "eos_token_id": 199999,
    }
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f)
    with open(os.path.join(directory, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": [END, 199999]}, f)
    encoded = subprocess.run(
        [phikit_binary(), "tokenize", directory, script, "--no-special-tokens"],
        check=True, capture_output=True, text=True).stdout.split()
    ids = [ASSISTANT] + [int(i) for i in encoded] + [END]
    if len(set(ids)) != len(ids) or len(ids) > hidden:
        raise ValueError("the script's tokens must all differ: " + script)

    p = "model.layers.0."
    head_dim = hidden // 4
    tensors = [
        ("model.embed_tokens.weight", [vocab, hidden]),
        (p + "input_layernorm.weight", [hidden]),
        (p + "self_attn.qkv_proj.weight", [(4 + 2 * 2) * head_dim, hidden]),
        (p + "self_attn.o_proj.weight", [hidden, hidden]),
        (p + "post_attention_layernorm.weight", [hidden]),
        (p + "mlp.gate_up_proj.weight", [128, hidden]),
        (p + "mlp.down_proj.weight", [hidden, 64]),
        ("model.norm.weight", [hidden]),
        ("lm_head.weight", [vocab, hidden]),
    ]
    header, start, offset = {"__metadata__": {"format": "pt"}}, {}, 0
    for name, shape in tensors:
        size = 2
        for d in shape:
            size *= d
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + size]}
        start[name] = offset
        offset += size
    blob = json.dumps(header).encode()
    blob += b" " * (-len(blob) % 8)
    base = 8 + len(blob)
    one, four = struct.pack("<H", 0x3F80), struct.pack("<H", 0x4080)
    with open(os.path.join(directory, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(blob)) + blob)
        f.truncate(base + offset)  # zeros, as a sparse hole

        def put(name, index, value):
            f.seek(base + start[name] + 2 * index)
            f.write(value)

        for name in [p + "input_layernorm.weight", p + "post_attention_layernorm.weight",
                     "model.norm.weight"]:
            for i in range(hidden):
                put(name, i, one)
        for k, token in enumerate(ids):
            put("model.embed_tokens.weight", token * hidden + k, one)
            if k + 1 < len(ids):
                put("lm_head.weight", ids[k + 1] * hidden + k, four)
    return directory
