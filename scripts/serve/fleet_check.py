#!/usr/bin/env python3
"""Two `phikit serve` replicas behind Debian's nginx with prefix affinity (the configuration
of docs/fleet.md, scripts/serve/fleet_nginx.conf): conversations sent through the proxy
through each API (chat completions, Responses, Anthropic Messages) stay on one replica, so
the second request of a conversation shows cached_tokens; conversations with the same system
prompt share a replica; different system prompts spread over both; X-Request-ID is echoed by
the proxy and found in the replica's log; each replica's /metrics counts its cache hits.
127.0.0.1 only; needs nginx (apt-get install nginx) and no Python packages.

    PHIKIT_BIN=.build/release/phikit python3 scripts/serve/fleet_check.py

Prints what each request did and one line per check; ends with "N passed, M failed"."""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

from serve_support import Server, check, summary, write_scripted_model

HERE = os.path.dirname(os.path.abspath(__file__))
ANSWER = "Hello from phikit! Every word arrives the moment it is generated."
SYSTEM = ("You are a careful coding agent. Read the files you are given, explain what you "
          "change and why, keep every answer short, and never invent an API.")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Proxy:
    """nginx in the foreground with fleet_nginx.conf, everything under a scratch folder."""

    def __init__(self, replicas):
        self.prefix = tempfile.mkdtemp(prefix="phikit-fleet-nginx-")
        self.port = free_port()
        template = open(os.path.join(HERE, "fleet_nginx.conf")).read()
        config = (template.replace("@PREFIX@", self.prefix).replace("@PORT@", str(self.port))
                  .replace("@REPLICA1@", str(replicas[0].port))
                  .replace("@REPLICA2@", str(replicas[1].port)))
        path = os.path.join(self.prefix, "nginx.conf")
        with open(path, "w") as f:
            f.write(config)
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.process = subprocess.Popen(
            [nginx, "-p", self.prefix, "-c", path, "-e", os.path.join(self.prefix, "error.log"),
             "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError("nginx did not start: " + self.process.stderr.read())
                time.sleep(0.05)
        raise RuntimeError("nginx did not listen")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)
        shutil.rmtree(self.prefix, ignore_errors=True)


def post(port, path, body):
    """POSTs through the proxy with a fresh X-Request-ID; the answer, its headers, the id."""
    rid = "fleet-" + uuid.uuid4().hex[:12]
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json", "X-Request-ID": rid})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response), response.headers, rid


def served_by(replicas, rid):
    """The replica whose access log has the request id (the log line is written just after
    the answer, so wait a moment for it)."""
    deadline = time.time() + 5
    while time.time() < deadline:
        for index, replica in enumerate(replicas):
            if any(f"id={rid}" in line for line in replica.lines):
                return index
        time.sleep(0.02)
    return None


# One conversation's two requests in each API: (path, first body, second body, cached(usage)).
def chat_turns(system, question):
    first = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    second = first + [{"role": "assistant", "content": ANSWER},
                      {"role": "user", "content": "And the second file?"}]
    return ("/v1/chat/completions", {"messages": first, "max_tokens": 24, "temperature": 0},
            {"messages": second, "max_tokens": 24, "temperature": 0},
            lambda u: u["prompt_tokens_details"]["cached_tokens"])


def responses_turns(system, question):
    first = [{"role": "user", "content": question}]
    second = first + [{"role": "assistant", "content": ANSWER},
                      {"role": "user", "content": "And the second file?"}]
    return ("/v1/responses",
            {"instructions": system, "input": first, "max_output_tokens": 24, "temperature": 0},
            {"instructions": system, "input": second, "max_output_tokens": 24, "temperature": 0},
            lambda u: u["input_tokens_details"]["cached_tokens"])


def messages_turns(system, question):
    first = [{"role": "user", "content": question}]
    second = first + [{"role": "assistant", "content": ANSWER},
                      {"role": "user", "content": "And the second file?"}]
    body = {"model": "scripted", "system": system, "max_tokens": 24, "temperature": 0}
    return ("/v1/messages", {**body, "messages": first}, {**body, "messages": second},
            lambda u: u["cache_read_input_tokens"])


def main():
    model = write_scripted_model(ANSWER)
    replicas = [Server(model, "--parallel", "2"), Server(model, "--parallel", "2")]
    proxy = Proxy(replicas)
    try:
        print(f"replicas on :{replicas[0].port} and :{replicas[1].port}, nginx on :{proxy.port}")
        print(f"{'api':22} {'turn':>4} {'replica':>7} {'prompt':>6} {'cached':>6}")
        homes = {}
        for turns in [chat_turns, responses_turns, messages_turns]:
            path, first, second, cached = turns(SYSTEM, "Please review main.swift.")
            if path == "/v1/messages":
                first["model"] = second["model"] = os.path.basename(model)
            seen = []
            for turn, body in [(1, first), (2, second)]:
                answer, headers, rid = post(proxy.port, path, body)
                usage = answer["usage"]
                prompt = usage.get("prompt_tokens", usage.get("input_tokens", 0))
                if path == "/v1/messages":
                    prompt += usage["cache_read_input_tokens"]
                replica = served_by(replicas, rid)
                seen.append((replica, cached(usage), headers.get("X-Request-ID") == rid))
                print(f"{path:22} {turn:>4} {replica!s:>7} {prompt:>6} {cached(usage):>6}")
            homes[path] = seen[0][0]
            check(f"{path}: both turns on one replica", seen[0][0] == seen[1][0] is not None, seen)
            check(f"{path}: the second turn reuses the first's cached prefix", seen[1][1] > 0, seen)
            check(f"{path}: X-Request-ID echoed through the proxy and logged by the replica",
                  all(s[2] for s in seen) and None not in [s[0] for s in seen], seen)
        check("the same system prompt goes to the same replica through every API",
              len(set(homes.values())) == 1, homes)

        # Other system prompts: each lands on some replica; over a few, both are used.
        used = set(homes.values())
        for n in range(12):
            path, first, _, _ = chat_turns(f"You are assistant number {n}. " + SYSTEM, "Hi")
            _, _, rid = post(proxy.port, path, first)
            used.add(served_by(replicas, rid))
        check("different system prompts spread over both replicas", used == {0, 1}, used)

        for index, replica in enumerate(replicas):
            text = urllib.request.urlopen(replica.base + "/metrics").read().decode()
            hits = next((float(line.split()[1]) for line in text.splitlines()
                         if line.startswith("phikit_prompt_cache_hits_total ")), 0)
            print(f"replica {index}: phikit_prompt_cache_hits_total {hits:g}")
            if index == next(iter(homes.values())):
                check("the conversations' replica counts their cache hits", hits >= 3, hits)
    finally:
        proxy.stop()
        stops = [replica.stop() for replica in replicas]
        check("replicas exit 0 on SIGTERM", stops == [0, 0], stops)
        shutil.rmtree(model, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
