#!/usr/bin/env python3
"""The extraction benchmark (issue 29): a schema with several fixed keys, answered with the
schema enforced (forced keys and punctuation fed as blocks) and then without it, generating
the same number of tokens (--ignore-eos), greedy, with `phikit run --json`'s own timings. The
best of --repeats runs each; the figure is the time from the call to the last token (prompt
included, the same for both) and the decode time after the first token.

    python3 scripts/structured/bench_extract.py MODEL_DIR [--repeats N] [--threads N]
        [--phikit PATH]
"""
import argparse
import json
import os
import resource
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "../..")

SCHEMA = {
    "type": "object",
    "properties": {
        "first_name": {"type": "string", "maxLength": 30},
        "last_name": {"type": "string", "maxLength": 30},
        "birth_year": {"type": "integer", "minimum": 1000, "maximum": 2100},
        "birth_city": {"type": "string", "maxLength": 30},
        "occupation": {"enum": ["mathematician", "physicist", "chemist", "writer", "engineer"]},
        "is_alive": {"type": "boolean"},
    },
    "required": ["first_name", "last_name", "birth_year", "birth_city", "occupation", "is_alive"],
    "additionalProperties": False,
}

PROMPTS = [
    "Extract the person as JSON: Ada Lovelace, born 1815 in London, was a mathematician.",
    "Extract the person as JSON: Marie Curie (born 1867, Warsaw) was a physicist and chemist.",
    "Extract the person as JSON: Alan Turing was born in 1912 in London; mathematician.",
]


def run(phikit, model, prompt, flags, threads):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [phikit, "run", model, prompt, "--temperature", "0", "--json", "--threads", str(threads)]
        + flags, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = json.loads(out)
    # The process's CPU time (load and prompt included, the same for both): on a machine
    # other jobs share, wall time counts their turns too.
    result["cpu_seconds"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def best(phikit, model, prompt, flags, repeats, threads):
    runs = [run(phikit, model, prompt, flags, threads) for _ in range(repeats)]
    return min(runs, key=lambda r: r["time_to_first_token"] + r["generation_seconds"]), \
        min(r["cpu_seconds"] for r in runs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--phikit", default=os.path.join(ROOT, ".build/release/phikit"))
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    schema = json.dumps(SCHEMA)
    totals = {"constrained": [0.0, 0.0, 0.0], "unconstrained": [0.0, 0.0, 0.0]}
    for prompt in PROMPTS:
        c, c_cpu = best(args.phikit, args.model, prompt, ["--json-schema", schema], args.repeats,
                        args.threads)
        n = len(c["tokens"])
        u, u_cpu = best(args.phikit, args.model, prompt, ["--max-tokens", str(n), "--ignore-eos"],
                        args.repeats, args.threads)
        for name, r, cpu in [("constrained", c, c_cpu), ("unconstrained", u, u_cpu)]:
            totals[name][0] += r["time_to_first_token"] + r["generation_seconds"]
            totals[name][1] += r["generation_seconds"]
            totals[name][2] += cpu
        print(f"{n:3} tokens  constrained {c['time_to_first_token'] + c['generation_seconds']:.3f} s "
              f"(decode {c['generation_seconds']:.3f}, cpu {c_cpu:.2f})  unconstrained "
              f"{u['time_to_first_token'] + u['generation_seconds']:.3f} s "
              f"(decode {u['generation_seconds']:.3f}, cpu {u_cpu:.2f})  {c['text']}")
    (cw, cd, cc), (uw, ud, uc) = totals["constrained"], totals["unconstrained"]
    print(f"total wall to the last token: constrained {cw:.3f} s, unconstrained {uw:.3f} s: "
          f"{uw / cw:.2f}x; decode alone {cd:.3f} s vs {ud:.3f} s: {ud / max(cd, 1e-9):.2f}x; "
          f"process CPU {cc:.2f} s vs {uc:.2f} s: {uc / max(cc, 1e-9):.2f}x")


if __name__ == "__main__":
    main()
