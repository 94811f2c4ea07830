#!/usr/bin/env python3
"""Model directories that exercise how transformers finds a chat template and its special
tokens, and what AutoTokenizer.from_pretrained makes of each.

Writes Tests/PhiTextTests/Fixtures/chat_template/loader/<scenario>/ (a tiny WordLevel
tokenizer.json plus the files under test) and loader/expected.json: per scenario, the template
text `tokenizer.get_chat_template()` returns and `tokenizer.special_tokens_map`, or the error
(no template, or several templates and none named "default").

    /work/venv/bin/python scripts/chat_template/make_loader_golden.py
"""

import json
import os
import shutil
import sys

from tokenizers import Tokenizer, models
from transformers import AutoTokenizer

from reference_env import FIXTURES

OUT = os.path.join(FIXTURES, "loader")

A = "{% for m in messages %}[A:{{ m.content }}]{% endfor %}{{ eos_token }}"
B = "{% for m in messages %}[B:{{ m.content }}]{% endfor %}{{ bos_token }}"
C = "{{ 'tool_use template' }}"


def added(content, typed=True):
    """An AddedToken as saved files hold it ("__type" in tokenizer_config.json only)."""
    token = {"__type": "AddedToken"} if typed else {}
    return {**token, "content": content, "lstrip": False, "normalized": False, "rstrip": False, "single_word": False, "special": True}


SCENARIOS = {
    "config-string": {"tokenizer_config.json": {"chat_template": A, "bos_token": "<s>", "eos_token": "</s>"}},
    "added-token-objects": {"tokenizer_config.json": {"chat_template": A, "bos_token": added("<bos>"), "eos_token": added("<eos>"), "pad_token": None, "unk_token": "<unk>"}},
    "jinja-file-wins": {
        "tokenizer_config.json": {"chat_template": A, "eos_token": "</s>", "bos_token": "<s>"},
        "chat_template.jinja": B,
    },
    "jinja-file-only": {"tokenizer_config.json": {"eos_token": "</s>", "bos_token": "<s>"}, "chat_template.jinja": B + "\n"},
    "named-list": {"tokenizer_config.json": {"chat_template": [{"name": "tool_use", "template": C}, {"name": "default", "template": A}], "eos_token": "</s>"}},
    "named-list-without-default": {"tokenizer_config.json": {"chat_template": [{"name": "tool_use", "template": C}], "eos_token": "</s>"}},
    "named-directory": {
        "tokenizer_config.json": {"chat_template": A, "eos_token": "</s>"},
        "chat_template.jinja": B,
        "chat_templates/tool_use.jinja": C,
    },
    "special-tokens-map-overrides": {
        "tokenizer_config.json": {"chat_template": A, "eos_token": "</s>", "bos_token": "<s>"},
        "special_tokens_map.json": {"eos_token": added("<|end|>", typed=False), "pad_token": "<pad>"},
    },
    "special-tokens-map-ignored": {
        "tokenizer_config.json": {"chat_template": A, "eos_token": "</s>", "added_tokens_decoder": {"0": added("<unk>", typed=False)}},
        "special_tokens_map.json": {"eos_token": "<|end|>"},
    },
    "no-template": {"tokenizer_config.json": {"eos_token": "</s>"}},
}


def write(directory, name, content):
    path = os.path.join(directory, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        if isinstance(content, str):
            f.write(content)
        else:
            json.dump(content, f, ensure_ascii=False, indent=2)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    expected = {}
    for scenario, files in SCENARIOS.items():
        directory = os.path.join(OUT, scenario)
        os.makedirs(directory)
        Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>")).save(os.path.join(directory, "tokenizer.json"))
        for name, content in files.items():
            write(directory, name, content)
        tok = AutoTokenizer.from_pretrained(directory)
        try:
            expected[scenario] = {"template": tok.get_chat_template(), "special_tokens": tok.special_tokens_map}
        except ValueError as e:
            expected[scenario] = {"error": str(e).split("!")[0], "special_tokens": tok.special_tokens_map}
    write(OUT, "expected.json", expected)
    print(json.dumps({k: ("template" if "template" in v else "error") for k, v in expected.items()}), file=sys.stderr)


if __name__ == "__main__":
    main()
