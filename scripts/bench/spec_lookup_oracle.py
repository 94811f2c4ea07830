#!/usr/bin/env python3
"""Why prompt lookup drafts what it drafts (issue 31): for each task of bench_speculative.py,
the greedy answer's token ids and what an oracle prompt lookup could have drafted from them,
offline, against what phikit's drafter proposed in the same run.

    spec_lookup_oracle.py [--tasks edit,extract] [--tokens 200] [--draft-max 8] [--verbose]

At each step (the context = prompt + answer so far) the lookup takes the longest suffix of the
context that occurs earlier; "first" continues from its first occurrence (what the suffix
automaton gave until 2026-11-28), "recent" from its latest (what it gives now), "best" from
whichever earlier occurrence of any suffix of at least 2 tokens continues right the longest
(an upper bound for lookup). A step is "draftable" when the continuation's first token is
the answer's next token. The pass counts simulate verification of up to --draft-max tokens
with a perfect gate (draft only when the first token is right; the agreeing prefix kept), and
"bound" the speedup that gives at the verify cost of --costs: about what drafting everything
lookup gets right could reach.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
import bench_speculative as bench  # noqa: E402


def phikit_json(binary, args):
    out = subprocess.run([binary] + args, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"error: phikit {' '.join(args[:2])} failed: {out.stderr.strip()[-300:]}")
    return json.loads(out.stdout)


def suffix_ends(ctx):
    """For n = 1, 2, …: the end indices e (< len(ctx) - 1) where the last n tokens of ctx
    also end, oldest first; stops at the first n with none."""
    ends = [e for e in range(len(ctx) - 1) if ctx[e] == ctx[-1]]
    n = 1
    while ends:
        yield n, ends
        n += 1
        ends = [e for e in ends if e - n + 1 >= 0 and ctx[e - n + 1] == ctx[-n]]


def agree(ctx, end, future, limit):
    """How many of `future` the text after ctx[end] predicts (at most `limit`)."""
    k = 0
    while k < min(limit, len(future)) and end + 1 + k < len(ctx) and ctx[end + 1 + k] == future[k]:
        k += 1
    return k


def analyse(prompt, answer, limit):
    """Per step i (answer[i] is next): the match length and what first/recent/best predict."""
    rows = []
    for i in range(1, len(answer)):
        ctx = prompt + answer[:i]
        future = answer[i:]
        length, ends, best = 0, [], 0
        for n, found in suffix_ends(ctx):
            length, ends = n, found
            if n >= 2:
                best = max([best] + [agree(ctx, e, future, limit) for e in found])
        first = agree(ctx, ends[0], future, limit) if ends else 0
        recent = agree(ctx, ends[-1], future, limit) if ends else 0
        rows.append({"i": i, "match": length, "first": first, "recent": recent, "best": best})
    return rows


def passes(rows, key, n, costs):
    """Forward passes for n answer tokens after the first with a perfect gate on `key`, and
    their cost in decode steps (`costs[m - 1]`: a block of m tokens; a block is used only
    where it beats plain steps)."""
    by_i = {r["i"]: r for r in rows}
    i, count, steps = 1, 0, 0.0
    while i < n:
        count += 1
        kept = by_i[i][key] if i in by_i else 0
        if kept and (kept + 1) / costs[kept] > 1:
            steps += costs[kept]
            i += 1 + kept
        else:
            steps += 1
            i += 1
    return count, steps


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tasks", default="edit,extract,quote,prose")
    p.add_argument("--tokens", type=int, default=200)
    p.add_argument("--draft-max", type=int, default=8)
    p.add_argument("--verbose", action="store_true", help="print every step")
    p.add_argument("--costs", default="1,1.23,1.82,2.40,2.74,2.81,2.79,3.28,3.93",
                   help="a block of 1, 2, … draft-max + 1 tokens in decode steps (engine-bench "
                        "--verify; default: SmolLM2 at 512 tokens, measured 2026-11-28)")
    p.add_argument("--phikit", default=str(REPO / ".build/release/phikit"))
    p.add_argument("--save", help="also write each task's ids to DIR/TASK.json "
                                  "({prompt, answer}: what spec_draft_sim.py reads)")
    a = p.parse_args()
    costs = [float(c) for c in a.costs.split(",")]
    if len(costs) < a.draft_max + 1:
        raise SystemExit(f"error: --costs has {len(costs)} blocks, --draft-max needs "
                         f"{a.draft_max + 1}")
    model = subprocess.run([str(REPO / "scripts/smollm2/path.sh")], capture_output=True,
                           text=True).stdout.strip()
    tmp = Path(tempfile.mkdtemp(prefix="phikit-oracle-"))
    tasks = bench.tasks_for("smollm2")
    print(f"{'task':8} {'tokens':>6} {'match>=2':>8} {'first':>6} {'recent':>6} {'best':>6}   "
          f"{'passes: plain':>13} {'first':>6} {'recent':>6} {'best':>6}   "
          f"{'bound: first':>12} {'recent':>6} {'best':>6}   {'phikit kept':>11}")
    for task in a.tasks.split(","):
        prompt_text = tasks[task]
        conv = tmp / f"{task}.json"
        conv.write_text(json.dumps([{"role": "user", "content": prompt_text}]))
        prompt = phikit_json(a.phikit, ["tokenize", model, "--chat", str(conv), "--json"])["ids"]
        (tmp / f"{task}.txt").write_text(prompt_text)
        run = phikit_json(a.phikit, ["run", model, "-f", str(tmp / f"{task}.txt"), "-m",
                                     str(a.tokens), "--temp", "0", "--threads", "2", "--json",
                                     "--draft-max", str(a.draft_max)])
        answer = run["tokens"]
        if a.save:
            Path(a.save).mkdir(parents=True, exist_ok=True)
            Path(a.save, f"{task}.json").write_text(json.dumps({"prompt": prompt,
                                                                "answer": answer}))
        rows = analyse(prompt, answer, a.draft_max)
        n = len(answer)
        matched = sum(r["match"] >= 2 for r in rows)
        counts = {k: sum(r[k] > 0 for r in rows) for k in ("first", "recent", "best")}
        sims = {k: passes(rows, k, n, costs) for k in ("first", "recent", "best")}
        print(f"{task:8} {n:6} {matched:8} {counts['first']:6} {counts['recent']:6} "
              f"{counts['best']:6}   {n - 1:13} {sims['first'][0]:6} {sims['recent'][0]:6} "
              f"{sims['best'][0]:6}   {(n - 1) / sims['first'][1]:12.2f} "
              f"{(n - 1) / sims['recent'][1]:6.2f} {(n - 1) / sims['best'][1]:6.2f}   "
              f"{run['accepted_draft_tokens']:>5}/{run['drafted_tokens']:<5}", flush=True)
        if a.verbose:
            for r in rows:
                print(f"  {r['i']:4} {answer[r['i']]:6} match {r['match']:3} first {r['first']} "
                      f"recent {r['recent']} best {r['best']}")


if __name__ == "__main__":
    main()
