#!/usr/bin/env python3
"""Where a concurrent `phikit serve` run's time went, from the scheduler's turn log
(PHIKIT_SCHEDULER_TRACE=FILE; one line per turn, see Sources/PhiServer/Scheduler/TurnLog.swift):
the turns of a time window split into prefill turns (a prompt chunk in the pass, with the
decoding rows that rode along), full decode turns (as many slots decoding as the busiest turn
of the window: the steady state), short decode turns (fewer slots: staggered starts and the
tail), and the time outside the forward passes (drafting, sampling and posting text, gaps
between turns, and the window's time before the first and after the last turn: HTTP and
tokenizing). bench_serve.py --turn-logs prints this for each phikit run; by hand:

    serve_turns.py TURNS.tsv [--from T0 --to T1]   (CLOCK_MONOTONIC seconds, as in the log)
"""

import argparse
import csv
import statistics


def load(path):
    with open(path) as f:
        return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f, delimiter="\t")]


def began(turn):
    """When a turn's work began (its line is written when it ends)."""
    return turn["t"] - (turn["plan_ms"] + turn["pass_ms"] + turn["accept_ms"]) / 1000


def account(turns, start=None, end=None):
    """The accounting of the turns within [start, end] (all when None): a dict of
    {share: (turns, wall seconds, CPU seconds of the passes, rows)} and the window's totals."""
    picked = [t for t in turns if (start is None or began(t) >= start) and (end is None or t["t"] <= end)]
    if not picked:
        return None
    start = began(picked[0]) if start is None else start
    end = picked[-1]["t"] if end is None else end
    busiest = max(int(t["slots"]) for t in picked)
    shares = {"prefill": [0, 0.0, 0.0, 0, 0], "full decode": [0, 0.0, 0.0, 0, 0],
              "short decode": [0, 0.0, 0.0, 0, 0]}
    outside = 0.0
    for i, t in enumerate(picked):
        kind = ("prefill" if t["prompt_tokens"] > 0 else
                "full decode" if int(t["slots"]) == busiest else "short decode")
        s = shares[kind]
        s[0] += 1
        s[1] += t["pass_ms"] / 1000
        s[2] += t["pass_cpu_ms"] / 1000
        s[3] += int(t["decode_rows"])
        s[4] += int(t["prompt_tokens"])
        outside += (t["plan_ms"] + t["accept_ms"] + (t["gap_ms"] if i > 0 else 0)) / 1000
    full = [t for t in picked if int(t["slots"]) == busiest and t["prompt_tokens"] == 0]
    return {"window": end - start, "shares": shares, "outside": outside, "busiest": busiest,
            "edges": (end - start) - sum(s[1] for s in shares.values()) - outside,
            "full_pass_ms": statistics.median(t["pass_ms"] for t in full) if full else None,
            "full_cpu_ms": statistics.median(t["pass_cpu_ms"] for t in full) if full else None,
            "full_rows": statistics.median(t["decode_rows"] for t in full) if full else None}


def describe(a):
    """Lines of text for one accounting."""
    w = a["window"]
    lines = [f"{w:.2f} s in all; busiest turn {a['busiest']} decoding slots"]
    for name, (n, wall, cpu, rows, prompt) in a["shares"].items():
        if n:
            lines.append(f"  {name:12s} {n:4d} turns {wall:6.2f} s ({100 * wall / w:4.1f}%), "
                         f"pass CPU {cpu:6.2f} s, {rows} decode rows, {prompt} prompt tokens")
    lines.append(f"  outside passes (drafting, sampling, posting, gaps): {a['outside']:.2f} s "
                 f"({100 * a['outside'] / w:.1f}%); before the first turn and after the last: "
                 f"{a['edges']:.2f} s ({100 * a['edges'] / w:.1f}%)")
    if a["full_pass_ms"] is not None:
        lines.append(f"  full decode turn: median {a['full_rows']:.0f} rows, {a['full_pass_ms']:.0f} ms "
                     f"wall, {a['full_cpu_ms']:.0f} ms CPU")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("log")
    p.add_argument("--from", dest="start", type=float)
    p.add_argument("--to", dest="end", type=float)
    a = p.parse_args()
    result = account(load(a.log), a.start, a.end)
    print("\n".join(describe(result)) if result else "no turns in that window")


if __name__ == "__main__":
    main()
