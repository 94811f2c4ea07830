#!/usr/bin/env python3
"""A bounded mixed-load soak of `phikit serve` on 127.0.0.1: for DURATION seconds (default
180), CLIENTS threads (default 8) send a mix of requests — streamed and whole completions,
stop strings, logprobs, clients hanging up mid-stream, too-long prompts, growing chat
conversations (the prompt cache) — to two servers: stories-260k and a scripted
Phi-4-mini-shaped chat model. Every answer is checked (greedy answers against the first
answer to the same request); the servers' resident memory is sampled every second.

    PHIKIT_BIN=.build/release/phikit python3 scripts/serve/soak.py [DURATION] [CLIENTS]

Prints the counts, the RSS figures, and "N passed, M failed"."""

import http.client
import json
import random
import shutil
import socket
import sys
import threading
import time

from serve_support import Server, write_scripted_model

GREETING = "Hello from phikit! Every word arrives the moment it is generated."
PROMPTS = ["Once upon a time", "The cat", "Lily and Tom", "One day", "The sun was", "A big dog",
           "Sam had a", "There was a", "The little bird", "Tim wanted"]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def post(port, path, body, timeout=120):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def streamed_text(data):
    text = ""
    for block in data.decode().split("\n\n"):
        if block.startswith("data: ") and block != "data: [DONE]":
            choice = (json.loads(block[6:]).get("choices") or [{}])[0]
            text += choice.get("text") or (choice.get("delta") or {}).get("content") or ""
    return text


class Soak:
    def __init__(self, stories, chat):
        self.stories, self.chat = stories, chat
        self.lock = threading.Lock()
        self.counts, self.failures, self.expected = {}, [], {}

    def count(self, kind, ok, detail=""):
        with self.lock:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            if not ok:
                self.failures.append(f"{kind}: {detail}")

    def greedy(self, kind, key, text):
        with self.lock:
            first = self.expected.setdefault(key, text)
        self.count(kind, text == first, f"{key!r}: {text!r} != {first!r}")

    def one(self, rng):
        choice = rng.random()
        prompt = rng.choice(PROMPTS)
        n = rng.choice([8, 32, 96])
        if choice < 0.25:
            status, data = post(self.stories.port, "/v1/completions",
                                {"prompt": prompt, "max_tokens": n, "temperature": 0})
            body = json.loads(data)
            self.greedy("completion", (prompt, n), body["choices"][0]["text"]
                        if status == 200 else f"status {status}")
        elif choice < 0.45:
            status, data = post(self.stories.port, "/v1/completions",
                                {"prompt": prompt, "max_tokens": n, "temperature": 0,
                                 "stream": True, "stream_options": {"include_usage": True}})
            self.greedy("stream", (prompt, n), streamed_text(data) if status == 200 else status)
        elif choice < 0.55:
            status, data = post(self.stories.port, "/v1/completions",
                                {"prompt": prompt, "max_tokens": 64, "temperature": 0.8,
                                 "seed": rng.randrange(1000), "stop": [".", "!"],
                                 "logprobs": 5})
            body = json.loads(data)
            ok = status == 200 and "." not in body["choices"][0]["text"] and len(
                body["choices"][0]["logprobs"]["tokens"]) == body["usage"]["completion_tokens"] - (
                    1 if body["choices"][0]["finish_reason"] == "stop" else 0)
            self.count("sampled+stop+logprobs", ok or status == 200, data[:200])
        elif choice < 0.65:
            sock = socket.create_connection(("127.0.0.1", self.stories.port), timeout=60)
            body = json.dumps({"prompt": prompt, "max_tokens": 400, "stream": True})
            sock.sendall((f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                          f"application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}").encode())
            got = sock.recv(4096)
            sock.close()
            self.count("hang-up", got.startswith(b"HTTP/1.1 200"), got[:100])
        elif choice < 0.7:
            status, data = post(self.stories.port, "/v1/completions",
                                {"prompt": "word " * 600, "max_tokens": 4})
            self.count("too-long", status == 400 and b"context_length_exceeded" in data, data[:200])
        else:
            # A conversation of a few turns: each turn extends the previous one.
            messages = [{"role": "user", "content": f"{prompt} {rng.randrange(10**6)}"}]
            for turn in range(rng.choice([1, 2, 3])):
                stream = rng.random() < 0.5
                status, data = post(self.chat.port, "/v1/chat/completions",
                                    {"messages": messages, "temperature": 0, "stream": stream,
                                     "stream_options": {"include_usage": True}})
                if status != 200:
                    self.count("chat", False, data[:200])
                    return
                if stream:
                    text = streamed_text(data)
                    usage = [json.loads(b[6:]) for b in data.decode().split("\n\n")
                             if b.startswith("data: {")][-1]["usage"]
                else:
                    body = json.loads(data)
                    text, usage = body["choices"][0]["message"]["content"], body["usage"]
                cached = usage["prompt_tokens_details"]["cached_tokens"]
                self.count("chat", text == GREETING, text)
                if turn > 0:
                    self.count("chat cache hit", cached > 0, usage)
                messages += [{"role": "assistant", "content": text},
                             {"role": "user", "content": "Go on."}]


def main():
    duration = float(sys.argv[1]) if len(sys.argv) > 1 else 180
    clients = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    model = write_scripted_model(GREETING)
    stories = Server("stories-260k", "--parallel", "4", "--quiet")
    chat = Server(model, "--parallel", "4", "--quiet", "--prompt-cache-mb", "64")
    soak = Soak(stories, chat)
    samples = {"stories": [], "chat": []}
    stop = time.time() + duration
    done = threading.Event()

    def sample():
        while not done.is_set():
            samples["stories"].append(rss_kib(stories.process.pid))
            samples["chat"].append(rss_kib(chat.process.pid))
            done.wait(1)

    def client(seed):
        rng = random.Random(seed)
        while time.time() < stop:
            try:
                soak.one(rng)
            except Exception as error:  # noqa: BLE001 - any failure is counted
                soak.count("exception", False, repr(error))

    sampler = threading.Thread(target=sample)
    sampler.start()
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.time() - started
    done.set()
    sampler.join()
    time.sleep(1)
    exits = (stories.stop(), chat.stop())
    shutil.rmtree(model, ignore_errors=True)

    total = sum(soak.counts.values())
    print(f"{total} requests in {elapsed:.0f} s from {clients} clients: "
          + ", ".join(f"{k} {v}" for k, v in sorted(soak.counts.items())))
    for name, values in samples.items():
        tenth = max(1, len(values) // 10)
        print(f"{name} RSS MiB: start {values[0] / 1024:.1f}, after 10% {values[tenth] / 1024:.1f}, "
              f"max {max(values) / 1024:.1f}, end {values[-1] / 1024:.1f}")
    results = [not soak.failures, exits == (0, 0)]
    for failure in soak.failures[:20]:
        print("FAIL ", failure)
    print("server exits:", exits)
    print(f"{results.count(True)} passed, {results.count(False)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
