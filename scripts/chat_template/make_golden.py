#!/usr/bin/env python3
"""Golden renders of real chat templates, made with transformers' apply_chat_template.

Writes Tests/PhiTextTests/Fixtures/chat_template/golden.json: for every template listed in
templates.json (beside it) and every conversation below, with add_generation_prompt false and
true (and template-specific extras: tools, dates, thinking switches), either the exact string
`tokenizer.apply_chat_template(conversation, tokenize=False, ...)` returns, or the error it
raises ("raised" for the template's own raise_exception, "error" for anything else).

Templates are rendered through a real tokenizer object: AutoTokenizer for the shared Phi
fixtures (so special tokens come from the real files), and a TokenizersBackend carrying the
template and its model's special tokens for the others. `strftime_now` is pinned to NOW.

Run with the reference venv (transformers 5.23.0, jinja2 3.1.6):
    /work/venv/bin/python scripts/chat_template/make_golden.py
The template texts themselves are in Fixtures/chat_template/templates/ (see templates.json for
where each came from; a few were transcribed by hand from public copies of the model files).
"""

import json
import os
import sys

import jinja2
import transformers
from tokenizers import Tokenizer, models
from transformers import AutoTokenizer, PreTrainedTokenizerFast

from reference_env import FIXTURES, NOW, ROOT, SHARED, pin_clock

pin_clock()


def msg(role, content):
    return {"role": role, "content": content}


def s(c):
    return msg("system", c)


def u(c):
    return msg("user", c)


def a(c):
    return msg("assistant", c)


CONVERSATIONS = {
    "user": [u("Hello!")],
    "system-user": [s("You are a helpful assistant."), u("What is 2+2?")],
    "multi-turn": [s("You are terse."), u("Hi"), a("Hello! How can I help?"), u("Tell me a joke.")],
    "no-system-multi": [u("Hi"), a("Hello."), u("Bye"), a("Goodbye!")],
    "unicode": [
        u("Héllo wörld 🤖 — 日本語のテキスト\nsecond line\n\n\tindented"),
        a("Ça va? ✓ 👍🏽 👨‍👩‍👧\r\ncrlf and\u00a0nbsp"),
        u("flags 🇫🇷, zero\u200bwidth, combining e\u0301, RTL مرحبا"),
    ],
    "empty": [s(""), u(""), a(""), u("")],
    "whitespace": [u("   padded both sides   \n\n"), a("\n  answer after a newline \t"), u("\t")],
    "jinja-text": [u("{{ not_a_variable }} {% if x %} {# c #} {%- raw %} ' \" \\ <b>&amp;</b> %s {0}")],
    "long": [s("sys"), u("q1"), a("a1"), u("q2"), a("a2"), u("q3"), a("a3"), u("q4")],
    "user-user": [u("first"), u("second")],
    "assistant-first": [a("I start."), u("ok")],
    "system-only": [s("Only a system message.")],
    "system-late": [u("hi"), a("hello"), s("late system"), u("again")],
    "think": [u("2+2?"), a("<think>\nadd them\n</think>\n\n4"), u("and 3+3?")],
    "reasoning-field": [
        u("2+2?"),
        {"role": "assistant", "content": "4", "reasoning_content": "Two plus two is four."},
        u("thanks"),
    ],
    "null-fields": [
        {"role": "user", "content": "hi", "name": None},
        {"role": "assistant", "content": "hello", "tool_calls": None},
        u("bye"),
    ],
}

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"},
            },
            "required": ["city"],
        },
    },
}
CLOCK = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current time in a time zone — «ünïcode».",
        "parameters": {
            "type": "object",
            "properties": {
                "tz": {"type": "string", "description": "IANA zone", "default": "UTC"},
                "digits": {"type": "number", "description": "precision", "default": 1.5},
                "tags": {"type": "array", "items": {"type": "string"}, "description": "labels"},
            },
            "required": [],
        },
    },
}
TOOLS = [WEATHER, CLOCK]

TOOL_CALL = {
    "id": "call12345",
    "type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}},
}
TOOL_CONVERSATIONS = {
    "tool-call": [
        s("You can call tools."),
        u("Weather in Paris?"),
        {"role": "assistant", "content": "", "tool_calls": [TOOL_CALL]},
        {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": '{"temp": 18, "sky": "clear"}'},
        a("It is 18°C and clear in Paris."),
        u("Thanks!"),
    ],
    "tool-call-null-content": [
        u("Weather in Paris?"),
        {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]},
        {"role": "tool", "tool_call_id": "call12345", "content": "18C"},
    ],
}
CONVERSATIONS.update(TOOL_CONVERSATIONS)
CONVERSATIONS["phi-tools-in-system"] = [
    {"role": "system", "content": "You are a helpful assistant with some tools.", "tools": json.dumps(TOOLS)},
    u("What is the weather like in Paris today?"),
]
BASIC = [name for name in CONVERSATIONS if name not in TOOL_CONVERSATIONS and name != "phi-tools-in-system"]

# Template-specific extras: (conversation, extra kwargs) rendered with both add_generation_prompt.
EXTRAS = {
    "phi-4-mini": [("phi-tools-in-system", {})],
    "phi-4-mini-reasoning": [("phi-tools-in-system", {})],
    "llama-3.1": [
        ("system-user", {"date_string": "01 Jan 2025"}),
        ("system-user", {"tools_in_user_message": False, "tools": TOOLS}),
        ("tool-call", {"builtin_tools": ["brave_search", "wolfram_alpha"], "tools": TOOLS}),
        ("user", {"custom_tools": [WEATHER]}),
        ("system-only", {"tools": TOOLS}),
    ],
    "llama-3.2": [("system-user", {"date_string": "01 Jan 2025"}), ("system-user", {"tools_in_user_message": False, "tools": TOOLS})],
    "qwen3": [("multi-turn", {"enable_thinking": False}), ("reasoning-field", {"enable_thinking": True}), ("think", {})],
    "smollm3": [("multi-turn", {"enable_thinking": False}), ("system-user", {"xml_tools": TOOLS}), ("system-user", {"python_tools": TOOLS})],
    "gpt-oss": [
        ("system-user", {"reasoning_effort": "high"}),
        ("system-user", {"model_identity": "You are Phikit's test model.", "builtin_tools": ["browser", "python"]}),
    ],
    "llama-2-chat-hf-internal": [("user", {"USE_DEFAULT_PROMPT": True}), ("multi-turn", {"USE_DEFAULT_PROMPT": True})],
    "gemma-4": [("system-user", {"enable_thinking": True})],
}
TOOL_TEMPLATES_MARKERS = ("tools", "tool_calls")


def load_templates():
    with open(os.path.join(FIXTURES, "templates.json"), encoding="utf-8") as f:
        manifest = json.load(f)["templates"]
    tokenizers = {}
    for name, entry in manifest.items():
        if "model_dir" in entry:
            tok = AutoTokenizer.from_pretrained(os.path.join(SHARED, entry["model_dir"]))
            text = tok.get_chat_template()
        else:
            with open(os.path.join(FIXTURES, "templates", entry["file"]), encoding="utf-8", newline="") as f:
                text = f.read()
            backend = Tokenizer(models.WordLevel({"<unk>": 0}, unk_token="<unk>"))
            tok = PreTrainedTokenizerFast(tokenizer_object=backend, chat_template=text, **entry["special_tokens"])
        tokenizers[name] = (tok, text)
    return manifest, tokenizers


def render(tok, conversation, add_generation_prompt, extra):
    kwargs = dict(extra)
    tools = kwargs.pop("tools", None)
    try:
        text = tok.apply_chat_template(
            conversation, tools=tools, tokenize=False, add_generation_prompt=add_generation_prompt, **kwargs
        )
        return {"expected": text}
    except jinja2.exceptions.TemplateError as e:
        if type(e) is jinja2.exceptions.TemplateError:  # raise_exception(message)
            return {"raised": str(e)}
        return {"error": f"{type(e).__name__}: {e}"}
    except Exception as e:  # a TypeError etc. inside the template
        return {"error": f"{type(e).__name__}: {e}"}


def main():
    manifest, tokenizers = load_templates()
    cases = []
    templates = {}
    for name, (tok, text) in tokenizers.items():
        templates[name] = {k: v for k, v in manifest[name].items() if k != "source"}
        templates[name]["special_tokens"] = tok.special_tokens_map
        plan = [(c, {}) for c in BASIC]
        if any(marker in text for marker in TOOL_TEMPLATES_MARKERS):
            plan += [(c, {"tools": TOOLS}) for c in TOOL_CONVERSATIONS]
            plan += [("system-user", {"tools": TOOLS})]
        plan += EXTRAS.get(name, [])
        for conversation, extra in plan:
            for agp in (False, True):
                case = {"template": name, "conversation": conversation, "add_generation_prompt": agp}
                if extra:
                    case["extra"] = extra
                case.update(render(tok, CONVERSATIONS[conversation], agp, extra))
                cases.append(case)
    golden = {
        "generator": "scripts/chat_template/make_golden.py",
        "transformers": transformers.__version__,
        "jinja2": jinja2.__version__,
        "now": NOW.isoformat(),
        "conversations": CONVERSATIONS,
        "templates": templates,
        "cases": cases,
    }
    path = os.path.join(FIXTURES, "golden.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=1)
        f.write("\n")
    outcomes = {}
    for c in cases:
        kind = next(k for k in ("expected", "raised", "error") if k in c)
        outcomes[kind] = outcomes.get(kind, 0) + 1
    print(f"{len(cases)} cases over {len(templates)} templates: {outcomes}; wrote {os.path.relpath(path, ROOT)} "
          f"({os.path.getsize(path)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
