#!/usr/bin/env python3
r"""The structured-output suite on a real model through `phikit serve`: each of the 60 schemas
(response_format json_schema) and the 8 GBNF grammars (the `grammar` field), asked once with
the constraint and once without it (the unconstrained baseline: the same prompt, the schema or
grammar written into it), greedy unless --temperature. The 7 regexes go through `phikit run
--regex` (the server takes no regex field). Judges: json + jsonschema with format checking for
schemas, Python's re.fullmatch with re.ASCII for regexes (phikit's \w \d \s are ASCII, as in
ECMA-262), xgrammar's matcher for GBNF (skipped, said so, when it is missing). A constrained
answer that reaches --max-tokens (a model looping inside a list or a string) is closed by the
budget-aware mask, so it is judged like any other and counted as "closed at the budget"
(finish_reason "length"); one still unfinished there would be counted as cut.

    python3 scripts/structured/suite_on_model.py MODEL_DIR [--max-tokens N] [--no-baseline]
        [--temperature T] [--repetition-penalty P]

Prints one line per failure and a summary; exits 1 unless every constrained answer is valid. Needs .build/release/phikit (or PHIKIT=path).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "../..")
FIXTURES = os.path.join(ROOT, "Tests/PhiEngineTests/Fixtures/structured")
PHIKIT = os.environ.get("PHIKIT", os.path.join(ROOT, ".build/release/phikit"))


def start_server(model):
    server = subprocess.Popen(
        [PHIKIT, "serve", model, "--port", "0", "--threads", "2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen = ""
    deadline = time.time() + 120
    while time.time() < deadline:
        line = server.stderr.readline()
        if not line:
            break
        seen += line
        found = re.search(r"on http://127\.0\.0\.1:(\d+)", line)
        if found:
            return server, int(found.group(1))
    server.kill()
    sys.exit(f"error: phikit serve did not start:\n{seen}")


def chat(port, body):
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as reply:
        answer = json.load(reply)["choices"][0]
    return answer["message"]["content"] or "", answer["finish_reason"]


def unfenced(text):
    """The baseline's answer without a Markdown code fence around it (models add one)."""
    match = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    return (match.group(1) if match else text).strip()


def schema_valid(schema, text):
    V = jsonschema.Draft202012Validator
    try:
        return V(schema, format_checker=V.FORMAT_CHECKER).is_valid(json.loads(text))
    except ValueError:
        return False


def gbnf_judge():
    """xgrammar's matcher (no tokenizer: a string either fully parses from root or not)."""
    try:
        import xgrammar
    except ImportError:
        return None
    compiler = xgrammar.GrammarCompiler(xgrammar.TokenizerInfo([]))

    def judge(source, text):
        matcher = xgrammar.GrammarMatcher(compiler.compile_grammar(xgrammar.Grammar.from_ebnf(source)))
        return matcher.accept_string(text) and matcher.is_completed()
    return judge


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--max-tokens", type=int, default=400)
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--temperature", type=float, default=0.0,
                        help="0: greedy (a real model); 1 samples (seeded) a random-weight model")
    parser.add_argument("--repetition-penalty", type=float, default=1.0,
                        help="above 1 keeps a small greedy model from looping in a list or string")
    args = parser.parse_args()
    schemas = json.load(open(os.path.join(FIXTURES, "schemas.json")))
    grammars = json.load(open(os.path.join(FIXTURES, "grammars.json")))

    counts = {}  # kind -> [valid, closed at the budget, cut, asked]
    def record(kind, ok, finished, label, text):
        c = counts.setdefault(kind, [0, 0, 0, 0])
        c[3] += 1
        if ok:
            c[0] += 1
            if not finished:
                c[1] += 1
        elif not finished:
            c[2] += 1
            if "constrained" in kind:
                print(f"CUT {kind} {label}: {text[:120]!r}")
        elif "constrained" in kind:
            print(f"INVALID {kind} {label}: {text[:200]!r}")

    server, port = start_server(args.model)
    try:
        for entry in schemas:
            schema = entry["schema"]
            prompt = (f"Write a JSON value for '{entry['name']}' that follows this JSON schema. "
                      f"Reply with the JSON only.\n{json.dumps(schema)}")
            base = {"messages": [{"role": "user", "content": prompt}], "temperature": args.temperature,
                    "seed": 29, "max_tokens": args.max_tokens,
                    "repetition_penalty": args.repetition_penalty}
            text, finish = chat(port, {**base, "response_format": {
                "type": "json_schema", "json_schema": {"name": "x", "schema": schema, "strict": True}}})
            record("schema constrained", schema_valid(schema, text), finish == "stop", entry["name"], text)
            if not args.no_baseline:
                text, finish = chat(port, base)
                record("schema baseline", schema_valid(schema, unfenced(text)), True, entry["name"], text)
        judge = gbnf_judge()
        for entry in grammars:
            if entry["kind"] != "gbnf":
                continue
            prompt = (f"Write a text that this GBNF grammar accepts (from root). Reply with the "
                      f"text only.\n{entry['source']}")
            base = {"messages": [{"role": "user", "content": prompt}], "temperature": args.temperature,
                    "seed": 29, "max_tokens": args.max_tokens,
                    "repetition_penalty": args.repetition_penalty}
            if judge is None:
                print("xgrammar is not installed: GBNF answers are not judged")
                break
            text, finish = chat(port, {**base, "grammar": entry["source"]})
            record("gbnf constrained", judge(entry["source"], text), finish == "stop", entry["name"], text)
            if not args.no_baseline:
                text, _ = chat(port, base)
                record("gbnf baseline", judge(entry["source"], unfenced(text)), True, entry["name"], text)
    finally:
        server.terminate()
        server.wait()

    for entry in grammars:
        if entry["kind"] != "regex":
            continue
        prompt = f"Write a text that matches this regular expression as a whole: {entry['source']}"
        for kind, flags in [("regex constrained", ["--regex", entry["source"]]), ("regex baseline", [])]:
            if args.no_baseline and not flags:
                continue
            run = subprocess.run(
                [PHIKIT, "run", args.model, prompt, "--temperature", str(args.temperature), "--seed", "29",
                 "--repetition-penalty", str(args.repetition_penalty), "--max-tokens",
                 str(args.max_tokens), "--json"] + flags, capture_output=True, text=True)
            if run.returncode != 0:
                record(kind, False, True, entry["name"], run.stderr)
                continue
            result = json.loads(run.stdout)
            text = result.get("text", "")
            finished = result.get("stop_reason") != "max_tokens" if flags else True
            candidate = text if flags else unfenced(text)
            record(kind, re.fullmatch(entry["source"], candidate, re.ASCII) is not None, finished, entry["name"], text)

    failed = False
    for kind, (valid, closed, cut, asked) in counts.items():
        print(f"{kind:20} {valid}/{asked} answers valid ({100 * valid / max(1, asked):.1f}%), "
              f"{closed} of them closed at the budget of {args.max_tokens} tokens, {cut} cut")
        if "constrained" in kind and valid != asked:
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
