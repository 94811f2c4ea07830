#!/usr/bin/env python3
"""The prompt-lookup drafter's choices replayed over saved greedy answers (issue 31): what
PromptLookupDrafter + DraftCostModel would draft at each step, at a fixed verify cost per
block, and the speedup that gives — so a change to the drafting rules can be judged in a
second instead of a release build and a noisy benchmark. Greedy answers do not depend on
drafting, so one saved answer serves every rule.

    spec_lookup_oracle.py --save DIR           # saves DIR/TASK.json: {prompt, answer} ids
    spec_draft_sim.py DIR [--tasks edit,extract] [--latest-from 4] [--costs 1,1.23,…]

The rules mirror Sources/PhiEngine/Speculative (match classes, priors, decay, margin, the
latest occurrence for matches of at least --latest-from tokens); keep them in step when
those change. The cost model here knows the verify cost from the start (the real one
measures it as it goes).
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from spec_lookup_oracle import agree, suffix_ends  # noqa: E402


class CostModel:
    """DraftCostModel's acceptance bookkeeping and length choice."""
    starts = [2, 3, 4, 6, 10, 18]
    priors = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    prior_weight, decay, margin = 2.0, 0.85, 1.05

    def __init__(self, costs):
        self.costs = costs
        self.kept = [0.0] * len(self.starts)
        self.tried = [0.0] * len(self.starts)
        self.kept_all, self.tried_all = self.prior_weight * 0.5, self.prior_weight

    def match_class(self, length):
        found = [i for i, s in enumerate(self.starts) if length >= s]
        return found[-1] if found else None

    def acceptance(self, c):
        belief = 0.5 * self.priors[c] + 0.5 * self.kept_all / self.tried_all
        return (self.kept[c] + self.prior_weight * belief) / (self.tried[c] + self.prior_weight)

    def record(self, c, drafted, accepted):
        rejected = 1.0 if accepted < drafted else 0.0
        self.kept[c] = self.kept[c] * self.decay + accepted
        self.tried[c] = self.tried[c] * self.decay + accepted + rejected
        self.kept_all = self.kept_all * self.decay + accepted
        self.tried_all = self.tried_all * self.decay + accepted + rejected

    def best_length(self, c, limit):
        a = self.acceptance(c)
        best, best_rate, expected, power = 0, self.margin, 1.0, 1.0
        for k in range(1, min(limit, len(self.costs) - 1) + 1):
            power *= a
            expected += power
            if expected / self.costs[k] > best_rate:
                best, best_rate = k, expected / self.costs[k]
        return best


def simulate(prompt, answer, costs, latest_from):
    """Speedup over plain steps, tokens drafted and kept, and why steps were not drafted."""
    model = CostModel(costs)
    i, steps, drafted, kept = 1, 0.0, 0, 0
    why = {"no match": 0, "declined": 0, "drafted": 0}
    while i < len(answer):
        ctx = prompt + answer[:i]
        length, ends = 0, []
        for length, ends in suffix_ends(ctx):
            pass
        c = model.match_class(length) if length else None
        k = 0
        if c is not None:
            end = ends[-1] if length >= latest_from else ends[0]
            k = model.best_length(c, min(len(costs) - 1, len(ctx) - end - 1, len(answer) - i))
        if k == 0:
            why["no match" if c is None else "declined"] += 1
            steps += 1
            i += 1
            continue
        a = agree(ctx, end, answer[i:], k)
        model.record(c, k, a)
        why["drafted"] += 1
        drafted += k
        kept += a
        steps += costs[k]
        i += a + 1
    return (len(answer) - 1) / steps, drafted, kept, why


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dir")
    p.add_argument("--tasks", help="only these (default: every DIR/*.json)")
    p.add_argument("--latest-from", type=int, default=4)
    p.add_argument("--costs", default="1,1.23,1.82,2.40,2.74,2.81,2.79,3.28,3.93",
                   help="a block of 1, 2, … tokens in decode steps (engine-bench --verify; "
                        "default: SmolLM2 at 512 tokens, measured 2026-11-28)")
    a = p.parse_args()
    costs = [float(c) for c in a.costs.split(",")]
    files = ([Path(a.dir, f"{t}.json") for t in a.tasks.split(",")] if a.tasks
             else sorted(Path(a.dir).glob("*.json")))
    for f in files:
        d = json.loads(f.read_text())
        speedup, drafted, kept, why = simulate(d["prompt"], d["answer"], costs, a.latest_from)
        print(f"{f.stem:10} {speedup:5.2f}x  kept {kept}/{drafted}  steps: " +
              ", ".join(f"{k} {v}" for k, v in why.items()))


if __name__ == "__main__":
    main()
