#!/usr/bin/env python3
"""Aggregate decode speed of `phikit serve` against upstream llama.cpp's `llama-server`
(continuous batching, --parallel as phikit's; scripts/bench/build_llamacpp.sh builds it,
LLAMA_CPP_BIN names its folder) or llama-cpp-python's own OpenAI server (`python -m
llama_cpp.server`) on the same random weights, with 1, 2, 4 and 8 concurrent streaming
clients, and the time to first token. Run by bench_serve.sh, which finds or builds the models;
see scripts/bench/README.md.

Both servers are started once and stay loaded (warmed by one request each); rounds alternate
the engines (phikit first in odd rounds, llama-cpp-python first in even ones) and the table
shows medians. Every request is a streamed /v1/completions of exactly --tokens tokens
(greedy) on a prompt of its own (a nonce first, so no server reuses a cached prefix).
Aggregate tok/s = all clients' generated tokens / wall time from the first request sent to
the last token received; time to first token = request sent -> first text chunk.

llama-cpp-python's server has one llama.cpp context and answers one request at a time (a
lock around the model); it runs with --interrupt_requests False, or each new request would
cut the one streaming (its default), so concurrent clients queue. phikit serve runs with
--parallel at least the largest client count, so they all decode together, and so does
llama-server (-np the largest count, -c that many times --context).

Configurations beyond the plain engines are named with --variant (e.g. 'phikit-act8=phikit
--act-bits 8', 'phikit-nospec=phikit --no-speculative'; 'phikit-before=phikit@/tmp/phikit.old'
runs another binary, for a before/after in one run) and listed in --engines like the engines.
--turn-logs adds, per phikit server and concurrency, where the time went: prefill turns, full
and short decode turns, time outside the forward passes (its scheduler's turn log). --task quote or edit sends each client a chat request that repeats its input (the
edit and quote tasks of bench_speculative.py, a nonce first), where speculative decoding
pays; story (the default) is a short completion prompt of free prose."""

import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "serve"))
from serve_support import Server  # noqa: E402  (phikit serve on a free port)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_upstream as upstream  # noqa: E402
import serve_turns  # noqa: E402
from bench_speculative import quote_task, short_edit_task  # noqa: E402

TOPICS = ["a lighthouse", "the river", "a small robot", "winter", "the market", "a letter",
          "the old bridge", "a garden"]


class LlamaServer:
    """python -m llama_cpp.server on 127.0.0.1, stopped with SIGTERM."""

    def __init__(self, python, gguf, threads, context, log, flash_attn):
        self.port = upstream.free_port()
        self.log = open(log, "w")
        command = [python, "-m", "llama_cpp.server", "--model", gguf, "--host", "127.0.0.1",
                   "--port", str(self.port), "--n_threads", str(threads),
                   "--n_threads_batch", str(threads), "--n_ctx", str(context),
                   "--interrupt_requests", "False", "--verbose", "False"]
        if flash_attn:
            command += ["--flash_attn", "True"]
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        upstream.wait_until_ready(self, "/v1/models", "llama_cpp.server", log)

    def stop(self):
        return upstream.stop_server(self.process, self.log)


def peak_rss_gib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / (1 << 20)
    return 0.0


def stream(port, prompt, tokens, out, index):
    """One streamed completion: time to first text, tokens, end time, finish reason. A
    `prompt` that is a list of messages goes to /v1/chat/completions."""
    chat = isinstance(prompt, list)
    body = {"max_tokens": tokens, "temperature": 0,
            "stream": True, "stream_options": {"include_usage": True}}
    body["messages" if chat else "prompt"] = prompt
    path = "/v1/chat/completions" if chat else "/v1/completions"
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    start = time.time()
    try:
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = connection.getresponse()
        if response.status != 200:
            out[index] = {"error": f"HTTP {response.status}: {response.read()[:200]!r}"}
            return
        first, chunks, usage, finish = None, 0, None, None
        for line in response:
            if not line.startswith(b"data: {"):
                continue
            chunk = json.loads(line[6:])
            for choice in chunk.get("choices") or []:
                text = (choice.get("delta") or {}).get("content") if chat else choice.get("text")
                if text:
                    chunks += 1
                    if first is None:
                        first = time.time() - start
                finish = choice.get("finish_reason") or finish
            usage = chunk.get("usage") or usage
        end = time.time()
    except OSError as error:
        out[index] = {"error": repr(error)}
        return
    # The usage when the server sends it; else a "length" finish means exactly max_tokens.
    count = usage["completion_tokens"] if usage else tokens if finish == "length" else chunks
    details = (usage or {}).get("completion_tokens_details") or {}
    kept = details.get("accepted_prediction_tokens") or 0
    out[index] = {"ttft": first, "tokens": count, "end": end, "start": start, "finish": finish,
                  "kept": kept, "drafted": kept + (details.get("rejected_prediction_tokens") or 0)}


TASKS = {"quote": quote_task, "edit": short_edit_task}


def prompt_for(task, tag, i):
    """Client i's prompt: a nonce first, so no server reuses another request's prefix."""
    nonce = random.randrange(10**9)
    if task == "story":
        return f"{nonce} Story {tag}-{i}: once upon a time, {TOPICS[i % len(TOPICS)]} was"
    return [{"role": "user", "content": f"Request {nonce}.\n\n" + TASKS[task]()}]


def measure(port, clients, tokens, tag, task="story"):
    """`clients` concurrent streams; aggregate tok/s, median and worst time to first token."""
    results = [None] * clients
    threads = []
    for i in range(clients):
        threads.append(threading.Thread(target=stream,
                                        args=(port, prompt_for(task, tag, i), tokens, results, i)))
    start = time.time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        return {"error": errors[0]}
    total = sum(r["tokens"] for r in results)
    ttfts = sorted(r["ttft"] for r in results if r["ttft"] is not None)
    return {"tok_s": total / (max(r["end"] for r in results) - start), "tokens": total,
            "ttft_median": statistics.median(ttfts) if ttfts else float("nan"),
            "ttft_max": ttfts[-1] if ttfts else float("nan"),
            "short": sum(1 for r in results if r["tokens"] != tokens),
            "load": os.getloadavg()[0],
            "kept": sum(r["kept"] for r in results), "drafted": sum(r["drafted"] for r in results)}


def variants(specs):
    """{name: (engine, [flags], binary or None)} from --variant 'NAME=ENGINE[@BINARY] FLAGS…'
    (phikit@PATH: another phikit binary, e.g. the build before a change, in the same run)."""
    found = {}
    for spec in specs:
        name, _, rest = spec.partition("=")
        words = rest.split()
        engine, _, binary = (words[0] if words else "").partition("@")
        if not name or engine not in ("phikit", "llama-server") or (binary and engine != "phikit"):
            raise SystemExit(f"error: --variant {spec!r}: expected NAME=phikit[@BINARY]|llama-server "
                             "FLAGS")
        found[name] = (engine, words[1:], binary or None)
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--phikit", required=True, help="phikit binary")
    p.add_argument("--phikit-model", required=True, help="phikit's model directory")
    p.add_argument("--gguf", required=True, help="the same weights as a GGUF (Q4_0)")
    p.add_argument("--python", default=sys.executable, help="python with llama_cpp.server")
    p.add_argument("--engines", default="phikit llama-server",
                   help="phikit, llama-server (upstream), llama-cpp-python")
    p.add_argument("--clients", default="1 2 4 8")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tokens", type=int, default=64, help="generated per request")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--context", type=int, default=1024, help="KV positions per sequence")
    p.add_argument("--flash-attn", action="store_true", help="llama.cpp flash attention")
    p.add_argument("--logs", required=True, help="directory for the servers' logs")
    p.add_argument("--results", required=True, help="TSV of every measurement (appended)")
    p.add_argument("--label", default="", help="a line for the report's header")
    p.add_argument("--variant", action="append", default=[], metavar="NAME=ENGINE FLAGS",
                   help="a configuration of phikit or llama-server with extra flags, named "
                        "in --engines (e.g. 'phikit-act8=phikit --act-bits 8')")
    p.add_argument("--turn-logs", action="store_true",
                   help="phikit servers write their scheduler's turn log (PHIKIT_SCHEDULER_TRACE) "
                        "into --logs; the report adds where each one's time went "
                        "(serve_turns.py)")
    p.add_argument("--task", default="story", choices=["story", *TASKS],
                   help="story: a completion of free prose; quote, edit: chat requests that "
                        "repeat their input")
    a = p.parse_args()
    clients = [int(c) for c in a.clients.split()]
    engines = a.engines.split()
    configured = variants(a.variant)
    os.makedirs(a.logs, exist_ok=True)

    servers, ports = {}, {}
    try:
        for engine in engines:
            base, flags, binary = configured.get(engine, (engine, [], None))
            log = os.path.join(a.logs, f"{engine}.log")
            if base == "phikit":
                os.environ["PHIKIT_BIN"] = binary or a.phikit
                os.environ.pop("PHIKIT_SCHEDULER_TRACE", None)
                if a.turn_logs:
                    os.environ["PHIKIT_SCHEDULER_TRACE"] = turn_log(a.logs, engine)
                servers[engine] = Server(a.phikit_model, "--parallel", str(max(clients)),
                                         "--threads", str(a.threads), "--max-kv-size",
                                         str(a.context), "--quiet", *flags)
                os.environ.pop("PHIKIT_SCHEDULER_TRACE", None)
            elif base == "llama-cpp-python":
                servers[engine] = LlamaServer(a.python, a.gguf, a.threads, a.context, log,
                                              a.flash_attn)
            elif base == "llama-server":
                n = max(clients)
                servers[engine] = upstream.Server(
                    a.gguf, a.threads, log,
                    ["-np", str(n), "-c", str(a.context * n),
                     "-fa", "on" if a.flash_attn else "off", *flags])
            else:
                raise SystemExit(f"error: unknown engine {engine!r}")
            ports[engine] = servers[engine].port
        for engine in engines:  # page the weights in, compile nothing later
            warm = measure(ports[engine], 1, 8, "warm", a.task)
            if "error" in warm:
                raise RuntimeError(f"{engine}: warm-up request failed: {warm['error']}")

        rows = []
        with open(a.results, "a") as tsv:
            for r in range(1, a.rounds + 1):
                order = engines if r % 2 else engines[::-1]
                for engine in order:
                    for n in clients:
                        began = time.monotonic()  # the turn logs' clock
                        m = measure(ports[engine], n, a.tokens, f"r{r}n{n}", a.task)
                        m.update(engine=engine, clients=n, round=r, window=(began, time.monotonic()))
                        rows.append(m)
                        line = (f"round {r} {engine:17s} {n} clients: " + (
                            f"error {m['error']}" if "error" in m else
                            f"{m['tok_s']:7.2f} tok/s, first token {m['ttft_median']:.2f} s "
                            f"(worst {m['ttft_max']:.2f} s), load {m['load']:.1f}"
                            + (f", drafts kept {m['kept']}/{m['drafted']}" if m["drafted"] else "")
                            + (f", {m['short']} streams ended early" if m["short"] else "")))
                        print(line, file=sys.stderr, flush=True)
                        tsv.write("\t".join(str(m.get(k, "")) for k in [
                            "round", "engine", "clients", "tok_s", "ttft_median", "ttft_max",
                            "tokens", "short", "load", "kept", "drafted", "error"]) + "\n")
        rss = {e: peak_rss_gib(s.process.pid) for e, s in servers.items()}
    finally:
        exits = {e: s.stop() for e, s in servers.items()}

    report(rows, engines, clients, a, rss, exits, configured)
    # uvicorn may end by the SIGTERM itself (-15): that is llama-cpp-python's way of stopping.
    phikits = [e for e in engines if configured.get(e, (e,))[0] == "phikit"]
    clean = all(code == 0 or (engine not in phikits and code == -15)
                for engine, code in exits.items())
    return 0 if all("error" not in r for r in rows) and clean else 1


def report(rows, engines, clients, a, rss, exits, configured):
    def cell(engine, n, key):
        values = [r[key] for r in rows if r["engine"] == engine and r["clients"] == n
                  and "error" not in r]
        return statistics.median(values) if values else None

    def base(engine):
        return configured.get(engine, (engine, [], None))[0]

    phikits = [e for e in engines if base(e) == "phikit"]
    other = next((e for e in engines if base(e) != "phikit"), None)
    how = {"llama-cpp-python": "llama_cpp.server serialises requests (one context, "
                               "--interrupt_requests False)",
           "llama-server": f"upstream llama-server -np {max(clients)}, continuous batching, "
                           f"flash attention {'on' if a.flash_attn else 'off'}"}
    loads = [r["load"] for r in rows if "load" in r]
    flags = "; ".join(f"{e} = {base(e)}{'@' + configured[e][2] if configured[e][2] else ''} "
                      f"{' '.join(configured[e][1])}" for e in engines if e in configured)
    print(f"# phikit serve vs {other or 'nothing'}\n\n{a.label}\n"
          f"{a.rounds} round(s), engines alternated, medians; {a.threads} threads each; "
          f"{a.tokens} tokens per request at most (greedy), streamed, task {a.task} (a fresh "
          f"prompt per request); contexts of {a.context} positions. phikit serve --parallel "
          f"{max(clients)}" + (f"; {how[base(other)]}" if other and base(other) in how else "")
          + "."
          + (f" {flags}." if flags else "")
          + (f" 1-minute load during the runs {min(loads):.1f}-{max(loads):.1f}." if loads else "")
          + "\n")
    head = "| clients |" + "".join(f" {e} tok/s | {e} first token |" for e in engines)
    if other:
        head += "".join(f" {e} / {other} |" for e in phikits)
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for n in clients:
        line = f"| {n} |"
        for e in engines:
            tok, ttft = cell(e, n, "tok_s"), cell(e, n, "ttft_median")
            line += (f" {tok:.2f} | {ttft:.2f} s |" if tok is not None else " failed | - |")
        if other:
            for e in phikits:
                mine, theirs = cell(e, n, "tok_s"), cell(other, n, "tok_s")
                line += f" {mine / theirs:.2f}x |" if mine and theirs else " - |"
        print(line)
    print()
    for e in phikits:
        if 1 in clients and 4 in clients:
            one, four = cell(e, 1, "tok_s"), cell(e, 4, "tok_s")
            if one and four:
                print(f"- {e} with 4 clients / its single stream: {four / one:.2f}x "
                      f"(goal with --act-bits 8: >= 2.5x)")
        if other:
            ahead = [n for n in clients if (cell(e, n, "tok_s") or 0)
                     > (cell(other, n, "tok_s") or float("inf"))]
            print(f"- {e} ahead of {other} at every concurrency: "
                  f"{'yes' if len(ahead) == len(clients) else 'no'} (ahead at {ahead})")
    print("- peak RSS: " + ", ".join(f"{e} {v:.2f} GiB" for e, v in rss.items())
          + "; server exits: " + ", ".join(f"{e} {c}" for e, c in exits.items()))
    if a.turn_logs:
        turn_report(rows, phikits, clients, a.logs)


def turn_log(logs, engine):
    return os.path.join(logs, f"{engine}.turns.tsv")


def turn_report(rows, phikits, clients, logs):
    """Where each phikit server's time went at each concurrency (the round whose tok/s is the
    median), from its scheduler's turn log."""
    print("\nWhere the time went (scheduler turn logs, serve_turns.py; the median round):")
    for e in phikits:
        path = turn_log(logs, e)
        if not os.path.exists(path):
            print(f"- {e}: no turn log (a binary without PHIKIT_SCHEDULER_TRACE)")
            continue
        turns = serve_turns.load(path)
        for n in clients:
            runs = sorted((r for r in rows if r["engine"] == e and r["clients"] == n
                           and "error" not in r), key=lambda r: r["tok_s"])
            if not runs:
                continue
            run = runs[(len(runs) - 1) // 2]
            accounting = serve_turns.account(turns, *run["window"])
            if accounting:
                print(f"- {e}, {n} client(s), round {run['round']}: "
                      + "\n    ".join(serve_turns.describe(accounting)))


if __name__ == "__main__":
    sys.exit(main())
