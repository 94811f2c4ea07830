#!/usr/bin/env python3
"""The official `openai` (Responses API: client.responses.create, .stream) and `anthropic`
(Messages API: client.messages.create, .stream, .count_tokens) SDKs against `phikit serve`:
text, streaming, a tool call round trip, a scripted agent loop (tool call -> result ->
answer) through each API, the prompt cache shared across the APIs, bad input answered 400
in each API's own error shape while the server keeps answering, and GET /metrics parsed by
prometheus_client's parser. The models are scripted Phi-4-mini-shaped ones whose greedy
answers are known (serve_support.py). With MODEL (a model directory or name), the text,
streaming, count_tokens and error checks also run on it, and its greedy answers through the
three APIs must agree.

    pip install openai anthropic prometheus-client
    PHIKIT_BIN=.build/release/phikit python3 scripts/serve/agent_sdk_check.py [MODEL]

Prints one line per check and ends with "N passed, M failed"; exits 1 if any failed."""

import json
import shutil
import sys
import urllib.request

import anthropic
import openai
from prometheus_client.parser import text_string_to_metric_families

from serve_support import Server, check, summary, write_scripted_model

TOOL_SCRIPT = ('Let me check.<|tool_call|>{"name":"get_weather","arguments":{"city": "Paris"}}'
               '<|/tool_call|>')
GREETING = "Hello from phikit! Every word arrives the moment it is generated."
QUESTION = "What is the weather in Paris?"
RESPONSES_TOOL = {"type": "function", "name": "get_weather", "description": "The weather in a city",
                  "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                 "required": ["city"]}}
# The anthropic SDK no longer has `temperature` (newer Claude models ignore it); the server
# takes it (default 1, as Anthropic's API), so greedy answers ask for it in the body.
GREEDY = {"temperature": 0}
ANTHROPIC_TOOL = {"name": "get_weather", "description": "The weather in a city",
                  "input_schema": RESPONSES_TOOL["parameters"]}


def weather(city):
    return json.dumps({"city": city, "sky": "sunny", "celsius": 21})


def expect_openai_error(name, call, fragment, param=None):
    """A 400 in OpenAI's shape: {"error": {"message", "type", "param", "code"}}."""
    try:
        call()
    except openai.BadRequestError as error:
        body = error.body if isinstance(error.body, dict) else {}
        shape = all(k in body for k in ("message", "type", "param", "code"))
        check(name, shape and fragment in body.get("message", "")
              and (param is None or body.get("param") == param), body)
        return
    except Exception as error:  # noqa: BLE001 - report whatever else came
        check(name, False, f"{type(error).__name__}: {error}")
        return
    check(name, False, "no error")


def expect_anthropic_error(name, call, fragment, status=400):
    """An error in Anthropic's shape: {"type": "error", "error": {"type", "message"}}."""
    try:
        call()
    except anthropic.APIStatusError as error:
        body = error.body if isinstance(error.body, dict) else {}
        inner = body.get("error") or {}
        check(name, error.status_code == status and body.get("type") == "error"
              and inner.get("type") and fragment in inner.get("message", ""),
              f"{error.status_code} {body}")
        return
    except Exception as error:  # noqa: BLE001
        check(name, False, f"{type(error).__name__}: {error}")
        return
    check(name, False, "no error")


def clients(server, key="unused"):
    return (openai.OpenAI(base_url=server.url, api_key=key, max_retries=0),
            anthropic.Anthropic(base_url=server.base, api_key=key, max_retries=0))


# --- Responses API -------------------------------------------------------------------------

def responses_text(client, model, expected):
    r = client.responses.create(model=model, input=QUESTION, instructions="Be brief.",
                                temperature=0, max_output_tokens=64)
    check("responses: greedy text", r.output_text == expected
          and r.status == ("completed" if r.usage.output_tokens < 64 else "incomplete"),
          repr(r.output_text))
    check("responses: usage", r.usage.input_tokens > 0 and r.usage.output_tokens > 0
          and r.usage.total_tokens == r.usage.input_tokens + r.usage.output_tokens, r.usage)
    again = client.responses.create(model=model, input=QUESTION, instructions="Be brief.",
                                    temperature=0, max_output_tokens=64)
    check("responses: the repeated prompt is cached",
          again.usage.input_tokens_details.cached_tokens == again.usage.input_tokens - 1,
          again.usage)
    with client.responses.stream(model=model, input=QUESTION, instructions="Be brief.",
                                 temperature=0, max_output_tokens=64) as stream:
        types, text, final = [], "", None
        for event in stream:
            types.append(event.type)
            if event.type == "response.output_text.delta":
                text += event.delta
            if event.type in ("response.completed", "response.incomplete"):
                final = event.response  # (get_final_response wants response.completed)
    check("responses.stream: deltas add up", final and text == expected == final.output_text,
          repr(text))
    check("responses.stream: event sequence", types[:4] == [
        "response.created", "response.in_progress", "response.output_item.added",
        "response.content_part.added"] and types[-4:] == [
        "response.output_text.done", "response.content_part.done", "response.output_item.done",
        "response.completed" if final and final.status == "completed" else "response.incomplete"],
          types)
    r = client.responses.create(model=model, input=QUESTION, max_output_tokens=3)
    check("responses: max_output_tokens gives incomplete", r.status == "incomplete"
          and r.incomplete_details.reason == "max_output_tokens" and r.usage.output_tokens == 3,
          r.status)
    return r


def responses_agent(client, model):
    history = [{"role": "user", "content": QUESTION}]
    r = client.responses.create(model=model, input=history, tools=[RESPONSES_TOOL], temperature=0)
    calls = [item for item in r.output if item.type == "function_call"]
    check("responses tools: a function_call item", len(calls) == 1
          and calls[0].name == "get_weather" and json.loads(calls[0].arguments) == {"city": "Paris"}
          and r.output_text == "Let me check.", r.output)
    with client.responses.stream(model=model, input=history, tools=[RESPONSES_TOOL],
                                 temperature=0) as stream:
        done = [e for e in stream if e.type == "response.function_call_arguments.done"]
        final = stream.get_final_response()
    streamed = [item for item in final.output if item.type == "function_call"]
    check("responses.stream tools: arguments streamed, call in the final response",
          len(done) == 1 and json.loads(done[0].arguments) == {"city": "Paris"}
          and len(streamed) == 1 and streamed[0].name == "get_weather", final.output)

    # The agent loop: run each call, send its output back, until the model answers in text.
    # This model always asks again, so the last turn says tool_choice "none": answer now.
    turns, answer = 0, None
    while answer is None and turns < 4:
        turns += 1
        history += [item.model_dump(exclude_none=True) for item in r.output]
        for call in [item for item in r.output if item.type == "function_call"]:
            args = json.loads(call.arguments)
            history.append({"type": "function_call_output", "call_id": call.call_id,
                            "output": weather(args["city"])})
        r = client.responses.create(model=model, input=history, tools=[RESPONSES_TOOL],
                                    temperature=0, tool_choice="none" if turns >= 2 else "auto")
        if turns == 1:
            # (tool_choice "none" takes the tools out of the prompt: only this turn extends
            # the first one's prompt.)
            check("responses agent loop: the history's prefix is cached",
                  r.usage.input_tokens_details.cached_tokens > 0, r.usage)
        if not any(item.type == "function_call" for item in r.output):
            answer = r.output_text
    check("responses agent loop: call -> result -> answer", answer == TOOL_SCRIPT and turns == 2,
          (turns, answer))
    return history


def responses_errors(client, model, history):
    expect_openai_error("responses 400: store=true says stateless", lambda: client.responses.create(
        model=model, input="x", store=True), "stateless", "store")
    expect_openai_error("responses 400: previous_response_id", lambda: client.responses.create(
        model=model, input="x", previous_response_id="resp_123"), "stateless",
        "previous_response_id")
    expect_openai_error("responses 400: an image part", lambda: client.responses.create(
        model=model, input=[{"role": "user", "content": [
            {"type": "input_image", "image_url": "https://example.com/a.png"}]}]), "text only")
    expect_openai_error("responses 400: output for an unknown call_id",
                        lambda: client.responses.create(model=model, input=[
                            {"type": "function_call_output", "call_id": "call_nope",
                             "output": "x"}]), "no function_call")
    bad = [dict(item) for item in history]
    for item in bad:
        if item.get("type") == "function_call":
            item["arguments"] = '{"city": "Par'
    expect_openai_error("responses 400: invalid JSON in replayed arguments",
                        lambda: client.responses.create(model=model, input=bad,
                                                        tools=[RESPONSES_TOOL]), "not valid JSON")
    expect_openai_error("responses 400: 10,000 input items", lambda: client.responses.create(
        model=model, input=[{"role": "user", "content": "x"}] * 10_000), "items")
    expect_openai_error("responses 400: a hosted tool", lambda: client.responses.create(
        model=model, input="x", tools=[{"type": "web_search"}]), "hosted tools")
    # text.format goes through the structured-output engine: the answer is the schema's JSON.
    shaped = client.responses.create(model=model, input="x", max_output_tokens=60, text={
        "format": {"type": "json_schema", "name": "w", "schema": {
            "type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"],
            "additionalProperties": False}}})
    try:
        parsed = json.loads(shaped.output_text)
    except ValueError:
        parsed = None
    check("responses: text.format json_schema shapes the answer",
          isinstance(parsed, dict) and isinstance(parsed.get("ok"), bool), repr(shaped.output_text))
    expect_openai_error("responses 400: text.format with a keyword phikit does not enforce",
                        lambda: client.responses.create(model=model, input="x", text={
                            "format": {"type": "json_schema", "name": "w",
                                       "schema": {"type": "object", "not": {}}}}), "not")
    try:
        client.responses.create(model="gpt-5", input="x")
        check("responses 404: unknown model", False, "no error")
    except openai.NotFoundError as error:
        check("responses 404: unknown model", "gpt-5" in str(error.body), error.body)


# --- Anthropic Messages API ----------------------------------------------------------------

def messages_text(client, model, expected):
    request = dict(model=model, max_tokens=64, extra_body=GREEDY, system="Be brief.",
                   messages=[{"role": "user", "content": QUESTION}])
    m = client.messages.create(**request)
    text = "".join(block.text for block in m.content if block.type == "text")
    check("messages: greedy text", text == expected and m.stop_reason in ("end_turn", "max_tokens"),
          repr(text))
    count = client.messages.count_tokens(model=model, system="Be brief.",
                                         messages=request["messages"])
    check("messages.count_tokens: the prompt's tokens", count.input_tokens ==
          m.usage.input_tokens + (m.usage.cache_read_input_tokens or 0), (count, m.usage))
    with client.messages.stream(**request) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    check("messages.stream: text_stream adds up", streamed == expected and
          "".join(b.text for b in final.content if b.type == "text") == expected, repr(streamed))
    check("messages.stream: usage with the cache read", final.usage.output_tokens > 0
          and final.usage.cache_read_input_tokens == count.input_tokens - 1, final.usage)
    m = client.messages.create(**{**request, "max_tokens": 2})
    check("messages: max_tokens stop_reason", m.stop_reason == "max_tokens"
          and m.usage.output_tokens == 2, m)


def messages_agent(client, model):
    messages = [{"role": "user", "content": QUESTION}]
    m = client.messages.create(model=model, max_tokens=64, extra_body=GREEDY,
                               tools=[ANTHROPIC_TOOL], messages=messages)
    uses = [b for b in m.content if b.type == "tool_use"]
    check("messages tools: a tool_use block", m.stop_reason == "tool_use" and len(uses) == 1
          and uses[0].name == "get_weather" and uses[0].input == {"city": "Paris"}
          and m.content[0].type == "text" and m.content[0].text == "Let me check.", m.content)
    with client.messages.stream(model=model, max_tokens=64, extra_body=GREEDY,
                                tools=[ANTHROPIC_TOOL], messages=messages) as stream:
        json_events = [e for e in stream if e.type == "input_json"]
        final = stream.get_final_message()
    streamed = [b for b in final.content if b.type == "tool_use"]
    check("messages.stream tools: input_json streamed, tool_use in the final message",
          json_events and len(streamed) == 1 and streamed[0].input == {"city": "Paris"}
          and final.stop_reason == "tool_use", final.content)

    turns, answer = 0, None
    while answer is None and turns < 4:
        turns += 1
        messages.append({"role": "assistant", "content": [b.model_dump() for b in m.content]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": b.id, "content": weather(b.input["city"])}
            for b in m.content if b.type == "tool_use"]})
        m = client.messages.create(model=model, max_tokens=64, extra_body=GREEDY,
                                   tools=[ANTHROPIC_TOOL], messages=messages,
                                   tool_choice={"type": "none" if turns >= 2 else "auto"})
        if turns == 1:
            check("messages agent loop: the history's prefix is cached",
                  (m.usage.cache_read_input_tokens or 0) > 0, m.usage)
        if m.stop_reason != "tool_use":
            answer = "".join(b.text for b in m.content if b.type == "text")
    check("messages agent loop: tool_use -> tool_result -> answer",
          answer == TOOL_SCRIPT and turns == 2, (turns, answer))
    return messages


def messages_errors(client, model, messages):
    expect_anthropic_error("messages 400: missing max_tokens", lambda: client.post(
        "/v1/messages", body={"model": model, "messages": [{"role": "user", "content": "x"}]},
        cast_to=object), "max_tokens")
    expect_anthropic_error("messages 400: an image block", lambda: client.messages.create(
        model=model, max_tokens=5, messages=[{"role": "user", "content": [
            {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]}]),
        "\"image\" block")
    expect_anthropic_error("messages 400: tool_result for an unknown id",
                           lambda: client.messages.create(model=model, max_tokens=5, messages=[
                               {"role": "user", "content": [{"type": "tool_result",
                                                             "tool_use_id": "toolu_nope",
                                                             "content": "x"}]}]), "no tool_use")
    bad = json.loads(json.dumps(messages))
    for message in bad:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_use":
                block["input"] = '{"city": "Par'
    expect_anthropic_error("messages 400: invalid replayed tool input",
                           lambda: client.messages.create(model=model, max_tokens=5,
                                                          tools=[ANTHROPIC_TOOL], messages=bad),
                           "must be an object")
    expect_anthropic_error("messages 400: 10,000 messages", lambda: client.messages.create(
        model=model, max_tokens=5, messages=[{"role": "user", "content": "x"}] * 10_000),
        "10000 messages")
    expect_anthropic_error("messages 404: unknown model", lambda: client.messages.create(
        model="claude-opus-4-1", max_tokens=5, messages=[{"role": "user", "content": "x"}]),
        "claude-opus-4-1", status=404)


def metrics(server):
    text = urllib.request.urlopen(server.base + "/metrics").read().decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}

    def value(name, labels=None):
        family = families.get(name)
        for sample in family.samples if family else []:
            if labels is None or sample.labels == labels:
                return sample.value
        return None
    check("metrics: parsed by prometheus_client, llama-server's names",
          all(n in families for n in ["llamacpp:prompt_tokens", "llamacpp:tokens_predicted",
                                      "llamacpp:requests_processing", "llamacpp:requests_deferred",
                                      "llamacpp:kv_cache_usage_ratio",
                                      "phikit_prompt_cache_hits"]), sorted(families))
    check("metrics: tokens counted", value("llamacpp:tokens_predicted") > 0
          and value("llamacpp:prompt_tokens") > 0 and value("phikit_prompt_cache_hits") > 0,
          text[:300])
    check("metrics: idle after the run", value("llamacpp:requests_processing") == 0)
    ready = urllib.request.urlopen(server.base + "/ready")
    check("ready: 200 with a slot free", ready.status == 200)


def scripted():
    greeting_model = write_scripted_model(GREETING)
    tool_model = write_scripted_model(TOOL_SCRIPT)
    greeter = Server(greeting_model, "--api-key", "sekrit")
    tools = Server(tool_model)
    try:
        openai_client, anthropic_client = clients(greeter, "sekrit")
        model = openai_client.models.list().data[0].id
        responses_text(openai_client, model, GREETING)
        messages_text(anthropic_client, model, GREETING)
        wrong = anthropic.Anthropic(base_url=greeter.base, api_key="wrong", max_retries=0)
        expect_anthropic_error("messages 401: a wrong x-api-key", lambda: wrong.messages.create(
            model=model, max_tokens=5, messages=[{"role": "user", "content": "x"}]),
            "API key", status=401)

        openai_client, anthropic_client = clients(tools)
        model = openai_client.models.list().data[0].id
        history = responses_agent(openai_client, model)
        responses_errors(openai_client, model, history)
        messages = messages_agent(anthropic_client, model)
        messages_errors(anthropic_client, model, messages)
        r = openai_client.responses.create(model=model, input=QUESTION, max_output_tokens=2)
        check("after the bad input the server still answers", r.status == "incomplete", r.status)
        metrics(tools)
    finally:
        check("servers exit 0 on SIGTERM", greeter.stop() == 0 and tools.stop() == 0)
        shutil.rmtree(greeting_model, ignore_errors=True)
        shutil.rmtree(tool_model, ignore_errors=True)


def real(model_path):
    """A real instruct model: the three APIs give the same greedy answer to one prompt."""
    server = Server(model_path)
    try:
        openai_client, anthropic_client = clients(server)
        model = openai_client.models.list().data[0].id
        chat = openai_client.chat.completions.create(
            model=model, temperature=0, max_tokens=64,
            messages=[{"role": "system", "content": "Be brief."},
                      {"role": "user", "content": QUESTION}]).choices[0].message.content
        print(f"      {model}: {chat!r}")
        check(f"{model}: a non-empty chat answer", bool(chat.strip()), chat)
        r = responses_text(openai_client, model, chat)
        messages_text(anthropic_client, model, chat)
        # A replayed call and its result, for the bad-input checks to corrupt (this model's
        # template may take no tools; the checks are refused before any rendering).
        responses_errors(openai_client, model, [
            {"role": "user", "content": QUESTION},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather",
             "arguments": '{"city": "Paris"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": weather("Paris")}])
        messages_errors(anthropic_client, model, [
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1",
                                               "name": "get_weather", "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                          "content": weather("Paris")}]}])
        r = openai_client.responses.create(model=model, input=QUESTION, max_output_tokens=2)
        check(f"{model}: still answering after the bad input", r.status == "incomplete")
        metrics(server)
    finally:
        check(f"{model_path}: server exits 0 on SIGTERM", server.stop() == 0)


if __name__ == "__main__":
    scripted()
    if len(sys.argv) > 1:
        real(sys.argv[1])
    sys.exit(summary())
