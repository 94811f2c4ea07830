#!/usr/bin/env python3
"""The official `openai` client (pip install openai) against `phikit serve`: chat,
completions, streaming, usage, logprobs, tools and errors, on the bundled stories-260k and on a
scripted Phi-4-mini-shaped model whose greedy answers are known (see serve_support.py).

    PHIKIT_BIN=.build/release/phikit python3 scripts/serve/openai_client_test.py

Prints one line per check and ends with "N passed, M failed"; exits 1 if any failed."""

import json
import shutil
import subprocess
import sys

import openai

from serve_support import Server, check, phikit_binary, summary, write_scripted_model

TOOL_SCRIPT = ('Let me check.<|tool_call|>{"name":"get_weather","arguments":{"city": "Paris"}}'
               '<|/tool_call|>')
GREETING = "Hello from phikit! Every word arrives the moment it is generated."
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather", "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]},
    },
}


def expect_error(name, kind, call, status, fragment=""):
    try:
        call()
    except kind as error:
        body = error.body if isinstance(error.body, dict) else {}
        shape = all(k in body for k in ("message", "type", "param", "code"))
        check(name, error.status_code == status and shape and fragment in str(body.get("message")),
              f"{error.status_code} {body}")
        return
    except Exception as error:  # noqa: BLE001 - report whatever else came
        check(name, False, f"{type(error).__name__}: {error}")
        return
    check(name, False, "no error")


def lone_run(prompt, max_tokens):
    out = subprocess.run([phikit_binary(), "run", "stories-260k", "-p", prompt, "-m",
                          str(max_tokens), "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["text"]


def stories():
    server = Server("stories-260k")
    client = openai.OpenAI(base_url=server.url, api_key="unused", max_retries=0)
    try:
        expected = lone_run("Once upon a time", 40)
        r = client.completions.create(model="stories-260k", prompt="Once upon a time",
                                      max_tokens=40, temperature=0)
        check("completions: greedy text equals phikit run", r.choices[0].text == expected,
              repr(r.choices[0].text))
        check("completions: usage", (r.usage.prompt_tokens, r.usage.completion_tokens,
                                     r.usage.total_tokens) == (5, 40, 45), r.usage)
        check("completions: cached_tokens reported",
              r.usage.prompt_tokens_details.cached_tokens == 0, r.usage)
        check("completions: finish_reason length", r.choices[0].finish_reason == "length")

        stream = client.completions.create(
            model="stories-260k", prompt="Once upon a time", max_tokens=40, temperature=0,
            stream=True, stream_options={"include_usage": True})
        pieces, usage = [], None
        for chunk in stream:
            if chunk.choices:
                pieces.append(chunk.choices[0].text)
            if chunk.usage:
                usage = chunk.usage
        check("completions: streamed pieces add up", "".join(pieces) == expected, pieces[:5])
        check("completions: stream usage chunk", usage and usage.completion_tokens == 40, usage)

        cut = expected.index("Lily")
        r = client.completions.create(model="stories-260k", prompt="Once upon a time",
                                      max_tokens=40, temperature=0, stop=["Lily", "zebra"])
        check("completions: stop string", r.choices[0].text == expected[:cut]
              and r.choices[0].finish_reason == "stop", repr(r.choices[0].text))

        r = client.completions.create(model="stories-260k", prompt="Once upon a time",
                                      max_tokens=8, temperature=0, logprobs=3)
        lp = r.choices[0].logprobs
        check("completions: logprobs", len(lp.tokens) == 8 and "".join(lp.tokens) ==
              r.choices[0].text and all(len(t) <= 3 for t in lp.top_logprobs)
              and all(v <= 0 for v in lp.token_logprobs), lp)

        r = client.completions.create(model="stories-260k", prompt="Once upon a time",
                                      max_tokens=40, temperature=0, echo=True)
        check("completions: echo", r.choices[0].text == "Once upon a time" + expected,
              repr(r.choices[0].text[:40]))
        expect_error("errors: suffix is 400", openai.BadRequestError,
                     lambda: client.completions.create(model="stories-260k", prompt="x",
                                                       suffix="y"), 400, "fill-in-the-middle")

        expect_error("errors: n=2 is 400", openai.BadRequestError, lambda: client.completions.create(
            model="stories-260k", prompt="x", n=2), 400, "'n' must be 1")
        expect_error("errors: unknown model is 404", openai.NotFoundError,
                     lambda: client.completions.create(model="gpt-4o", prompt="x"), 404, "gpt-4o")
        expect_error("errors: wrong type names the field", openai.BadRequestError,
                     lambda: client.completions.create(model="stories-260k", prompt="x",
                                                       extra_body={"temperature": "hot"}),
                     400, "'temperature' must be a number")
        expect_error("errors: prompt beyond the context is 400 with the counts",
                     openai.BadRequestError,
                     lambda: client.completions.create(model="stories-260k",
                                                       prompt="word " * 600, max_tokens=5),
                     400, "maximum context length is 512 tokens")
        expect_error("errors: chat on a base model", openai.BadRequestError,
                     lambda: client.chat.completions.create(
                         model="stories-260k", messages=[{"role": "user", "content": "hi"}]),
                     400, "no chat template")
        models = client.models.list()
        check("models: lists the model", [m.id for m in models.data] == ["stories-260k"])
    finally:
        check("stories server exits 0 on SIGTERM", server.stop() == 0)


def scripted():
    tool_model = write_scripted_model(TOOL_SCRIPT)
    greeting_model = write_scripted_model(GREETING)
    server = Server(tool_model, "--api-key", "sekrit")
    greeter = Server(greeting_model)
    try:
        client = openai.OpenAI(base_url=server.url, api_key="sekrit", max_retries=0)
        messages = [{"role": "user", "content": "What is the weather in Paris?"}]
        r = client.chat.completions.create(
            model=client.models.list().data[0].id, messages=messages, tools=[WEATHER_TOOL],
            temperature=0)
        choice = r.choices[0]
        call = (choice.message.tool_calls or [None])[0]
        check("tools: finish_reason tool_calls", choice.finish_reason == "tool_calls", choice)
        check("tools: parsed call", call is not None and call.type == "function"
              and call.function.name == "get_weather"
              and json.loads(call.function.arguments) == {"city": "Paris"}, call)
        check("tools: text before the call stays content",
              choice.message.content == "Let me check.", choice.message.content)

        stream = client.chat.completions.create(
            model=client.models.list().data[0].id, messages=messages, tools=[WEATHER_TOOL],
            temperature=0, stream=True)
        content, calls, finish = "", [], None
        for chunk in stream:
            delta = chunk.choices[0].delta
            content += delta.content or ""
            calls += delta.tool_calls or []
            finish = chunk.choices[0].finish_reason or finish
        check("tools: streamed call", len(calls) == 1 and calls[0].function.name == "get_weather"
              and finish == "tool_calls" and content == "Let me check.", (content, calls))

        # The answer turned into a tool call, its result, and the next turn: the template
        # renders the call back in the model's syntax, and the cache reuses the prefix.
        history = messages + [
            {"role": "assistant", "content": "Let me check.", "tool_calls": [
                {"id": call.id, "type": "function", "function": {
                    "name": "get_weather", "arguments": call.function.arguments}}]},
            {"role": "tool", "tool_call_id": call.id, "content": '{"sky": "sunny"}'},
        ]
        r = client.chat.completions.create(model=client.models.list().data[0].id,
                                           messages=history, tools=[WEATHER_TOOL], temperature=0)
        check("tools: a conversation with a tool result is accepted",
              r.choices[0].finish_reason in ("tool_calls", "stop"), r.choices[0])
        check("cache: the next turn reuses the cached prefix",
              r.usage.prompt_tokens_details.cached_tokens > 0, r.usage)

        # tool_choice: "required" skips "Let me check." and starts with the call; a named
        # function on a model that never writes arguments after it gives the text back.
        model = client.models.list().data[0].id
        r = client.chat.completions.create(model=model, messages=messages, tools=[WEATHER_TOOL],
                                           tool_choice="required", temperature=0)
        call = (r.choices[0].message.tool_calls or [None])[0]
        check("tool_choice required: the answer is the call",
              r.choices[0].finish_reason == "tool_calls" and r.choices[0].message.content is None
              and call is not None and call.function.name == "get_weather", r.choices[0])
        r = client.chat.completions.create(model=model, messages=messages, tools=[WEATHER_TOOL],
                                           tool_choice="none", temperature=0)
        check("tool_choice none: text, nothing parsed", r.choices[0].finish_reason == "stop"
              and r.choices[0].message.content == TOOL_SCRIPT, r.choices[0])
        named = {"type": "function", "function": {"name": "get_weather"}}
        r = client.chat.completions.create(model=model, messages=messages, tools=[WEATHER_TOOL],
                                           tool_choice=named, temperature=0, max_tokens=4)
        check("tool_choice named: no call made, the text is content",
              not r.choices[0].message.tool_calls and r.choices[0].message.content.startswith(
                  '<|tool_call|>[{"name": "get_weather", "arguments":'), r.choices[0])
        expect_error("tool_choice: a function not in tools is 400", openai.BadRequestError,
                     lambda: client.chat.completions.create(
                         model=model, messages=messages, tools=[WEATHER_TOOL],
                         tool_choice={"type": "function", "function": {"name": "x"}}),
                     400, "'x'")

        wrong = openai.OpenAI(base_url=server.url, api_key="wrong", max_retries=0)
        expect_error("auth: a wrong key is 401", openai.AuthenticationError,
                     lambda: wrong.models.list(), 401)

        plain = openai.OpenAI(base_url=greeter.url, api_key="unused", max_retries=0)
        model = plain.models.list().data[0].id
        r = plain.chat.completions.create(model=model, messages=messages, temperature=0,
                                          logprobs=True, top_logprobs=2)
        content = r.choices[0].message.content
        check("chat: greedy answer", content == GREETING, content)
        entries = r.choices[0].logprobs.content
        check("chat: logprobs per token", "".join(e.token for e in entries) == GREETING
              and all(len(e.top_logprobs) == 2 and e.top_logprobs[0].token == e.token
                      for e in entries), entries[:2])
        check("chat: usage", r.usage.completion_tokens == len(entries)
              and r.usage.total_tokens == r.usage.prompt_tokens + len(entries), r.usage)
        stream = plain.chat.completions.create(model=model, messages=messages, temperature=0,
                                               stream=True, stream_options={"include_usage": True})
        text, usage = "", None
        for chunk in stream:
            if chunk.choices:
                text += chunk.choices[0].delta.content or ""
            usage = chunk.usage or usage
        check("chat: streamed deltas add up", text == GREETING, text)
        check("chat: stream usage", usage is not None and usage.completion_tokens == len(entries))
        r = plain.chat.completions.create(model=model, messages=messages, temperature=0,
                                          stop=["arrives"])
        check("chat: stop string", r.choices[0].message.content == "Hello from phikit! Every word "
              and r.choices[0].finish_reason == "stop", r.choices[0].message.content)
        r = plain.chat.completions.create(model=model, messages=messages, max_tokens=3)
        check("chat: max_tokens gives length", r.choices[0].finish_reason == "length"
              and r.usage.completion_tokens == 3, r.choices[0])
    finally:
        check("scripted servers exit 0 on SIGTERM", server.stop() == 0 and greeter.stop() == 0)
        shutil.rmtree(tool_model, ignore_errors=True)
        shutil.rmtree(greeting_model, ignore_errors=True)


if __name__ == "__main__":
    stories()
    scripted()
    sys.exit(summary())
