#!/usr/bin/env python3
"""Generates answers for every suite schema with structured-bench --sample (tokens drawn
uniformly from the allowed ones on a real tokenizer: a model with random weights, the
hardest case for enforcement) and judges each with json + jsonschema (format checking on).
Every finished answer must validate; the script exits 1 otherwise.

    python3 scripts/structured/check_outputs.py TOKENIZER_JSON [SAMPLES_PER_SCHEMA]
"""
import json
import os
import subprocess
import sys

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "../..")
SUITE = os.path.join(ROOT, "Tests/PhiEngineTests/Fixtures/structured/schemas.json")
BENCH = os.path.join(ROOT, ".build/release/structured-bench")


def main():
    tokenizer = sys.argv[1]
    samples = sys.argv[2] if len(sys.argv) > 2 else "5"
    with open(SUITE) as f:
        schemas = {entry["name"]: entry["schema"] for entry in json.load(f)}
    out = subprocess.run([BENCH, tokenizer, SUITE, "--sample", samples], check=True,
                         capture_output=True, text=True).stdout
    V = jsonschema.Draft202012Validator
    total = valid = unfinished = 0
    for line in filter(None, out.split("\n")):  # not splitlines: answers may hold U+2028
        answer = json.loads(line)
        if not answer["finished"]:  # hit the 400-token cap mid-answer: nothing to judge
            unfinished += 1
            continue
        total += 1
        schema = schemas[answer["name"]]
        try:
            ok = V(schema, format_checker=V.FORMAT_CHECKER).is_valid(json.loads(answer["text"]))
        except ValueError:
            ok = False
        if ok:
            valid += 1
        else:
            print(f"INVALID {answer['name']}: {answer['text']!r}")
    print(f"{valid}/{total} finished answers valid ({100 * valid / max(1, total):.1f}%), "
          f"{unfinished} cut at the token cap, over {len(schemas)} schemas")
    sys.exit(0 if valid == total and total > 0 else 1)


if __name__ == "__main__":
    main()
