#!/usr/bin/env python3
"""Where a recorded space's best configurations lie (docs/SEARCH.md, "Why the
needle is hard, counted"): splits a T4 results file by its short names (at most
MAX_CHOICES values each, default 4) into parts, and prints the parts by median
fraction of the optimum (t_opt / t) with how many of their configurations run
and reach GOAL (default 0.80); then the chance that R random points (default 10)
miss the part that holds most of those, and how many random points inside it
give a 90% and a 98% chance of one at GOAL. With --names, for each short
name and value: the median and best fraction over the space, and the best with
the other short names at that part's values (what one wrong value costs there).
With --climb, where greedy ascent over the parts (one short name changed a
step, to the neighbour with the highest median, or best) ends, from every part.

With --trace TRACE (written by `bench/strategies -t TRACE ... FILE`), it then
tells, for each strategy and budget traced on FILE, how the repeats that ended
under GOAL and those that did not reached that part: how many of their
evaluations fell in it, and when the first did; how many parts a repeat
sampled; and the configuration most of the repeats under GOAL ended on.

    python3 bench/space_parts.py FILE.json.gz [--max-choices 4] [--goal 0.80] [--random 10] [--top 10] [--names] [--climb] [--trace TRACE]
"""
import argparse
import collections
import gzip
import json
import os
import statistics
from math import comb


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        results = json.load(f)["results"]
    names = list(results[0]["configuration"])
    runs = [(r["measurements"][0]["value"], tuple(r["configuration"][n] for n in names))
            for r in results if r["invalidity"] == "correct"]
    return names, runs, len(results)


def chance_of_one(good, total, draws):
    """At least one of GOOD among TOTAL in DRAWS draws without replacement."""
    return 1 - comb(total - good, draws) / comb(total, draws) if draws <= total - good else 1.0


def read_trace(path, file_name):
    """{(strategy, budget): {repeat: [(fraction, {name: value})]}} for FILE_NAME's lines of a trace."""
    names, runs = None, collections.defaultdict(lambda: collections.defaultdict(list))
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "#":
                if w[1] == file_name:
                    names = w[3:]
            elif w[0] == file_name:
                if names is None:
                    raise SystemExit("%s: no '# %s names' line before its evaluations" % (path, file_name))
                runs[(w[1], int(w[2]))][int(w[3])].append((float(w[5]), dict(zip(names, w[6:]))))
    return runs


def traced(runs, part_names, part, goal):
    """Prints how the traced repeats reached PART (values of PART_NAMES)."""
    part = tuple(map(str, part))
    for (strat, budget), repeats in sorted(runs.items()):
        rows = {True: [], False: []}
        ends = collections.Counter()  # where the repeats under GOAL ended
        parts_seen = []  # how many parts each repeat sampled
        for evals in repeats.values():
            parts_seen.append(len({tuple(cfg[n] for n in part_names) for _, cfg in evals}))
            hits = [i for i, (_, cfg) in enumerate(evals, 1) if tuple(cfg[n] for n in part_names) == part]
            best, cfg = max(evals, key=lambda e: e[0])
            rows[best >= goal].append(hits)
            if best < goal:
                ends[(best, tuple(sorted(cfg.items())))] += 1
        for reached in (False, True):
            hs = rows[reached]
            if not hs:
                continue
            counts = collections.Counter(min(len(h), 2) for h in hs)
            firsts = sorted(h[0] for h in hs if h)
            print("%s, %d evaluations: %d repeats %s %.2f: the part never sampled in %d, once in %d, more often in %d; "
                  "first sampled at evaluation %s (median)"
                  % (strat, budget, len(hs), "at or above" if reached else "under", goal, counts[0], counts[1],
                     counts[2], statistics.median(firsts) if firsts else "-"))
        print("%s, %d evaluations: %.1f parts sampled per repeat (mean)"
              % (strat, budget, statistics.mean(parts_seen)))
        if ends:
            (frac, cfg), n = ends.most_common(1)[0]
            print("%s, %d evaluations: %d of the %d repeats under %.2f ended on %s (%.4f)"
                  % (strat, budget, n, len(rows[False]), goal, " ".join("%s=%s" % kv for kv in cfg), frac))


def by_name(names, short, runs, best, part):
    """Prints, per short name and value, the median and best fraction over the
    space, and the best with the other short names at PART's values."""
    print("| name | value | median | best | best with the part's other names |")
    print("|---|---|---:|---:|---:|")
    for j, i in enumerate(short):
        for v in sorted({c[i] for _, c in runs}):
            fs = [best / t for t, c in runs if c[i] == v]
            near = [best / t for t, c in runs if c[i] == v and
                    all(c[o] == part[m] for m, o in enumerate(short) if m != j)]
            print("| %s | %s | %.3f | %.3f | %s |" % (names[i], v, statistics.median(fs), max(fs),
                                                      "%.3f" % max(near) if near else "-"))


def climbs(parts, values):
    """Prints where greedy ascent over the parts ends, from every part: a step
    changes one short name's value, to the neighbouring part with the highest
    median (then: the highest best) while that is higher than the current
    part's; the ends with how many starts reach each."""
    def neighbours(p):
        for i, vs in enumerate(values):
            for v in vs:
                q = p[:i] + (v,) + p[i + 1:]
                if v != p[i] and q in parts:
                    yield q
    for label, stat in (("median", statistics.median), ("best", max)):
        key = {p: stat(fs) for p, fs in parts.items()}
        ends = collections.Counter()
        for p in parts:
            while True:
                q = max(neighbours(p), key=key.get, default=p)
                if key[q] <= key[p]:
                    break
                p = q
            ends[p] += 1
        print("climbing by %s, from the %d parts: %s" % (label, len(parts), "; ".join(
            "%s (median %.3f, best %.3f) from %d" % (",".join(map(str, p)), statistics.median(parts[p]),
                                                    max(parts[p]), n) for p, n in ends.most_common())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--max-choices", type=int, default=4)
    ap.add_argument("--goal", type=float, default=0.80)
    ap.add_argument("--random", type=int, default=10)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--names", action="store_true")
    ap.add_argument("--climb", action="store_true")
    ap.add_argument("--trace")
    a = ap.parse_args()
    names, runs, recorded = load(a.file)
    values = [sorted({c[i] for _, c in runs}) for i in range(len(names))]
    short = [i for i in range(len(names)) if 1 < len(values[i]) <= a.max_choices]
    best = min(t for t, _ in runs)
    parts = collections.defaultdict(list)
    for t, c in runs:
        parts[tuple(c[i] for i in short)].append(best / t)
    at_goal = sum(f >= a.goal for fs in parts.values() for f in fs)
    print("%s: %d recorded, %d run, %d at or above %.2f of the optimum; %d parts by %s"
          % (a.file, recorded, len(runs), at_goal, a.goal, len(parts), ", ".join(names[i] for i in short)))
    print("| part | run | median | best | at or above %.2f |" % a.goal)
    print("|---|---:|---:|---:|---:|")
    ranked = sorted(parts.items(), key=lambda kv: -statistics.median(kv[1]))
    for key, fs in ranked[:a.top]:
        print("| %s | %d | %.3f | %.3f | %d |" % (",".join(map(str, key)), len(fs), statistics.median(fs), max(fs),
                                                  sum(f >= a.goal for f in fs)))
    holding = sorted(((sum(f >= a.goal for f in fs), k) for k, fs in parts.items() if max(fs) >= a.goal), reverse=True)
    print("parts holding those: " + ", ".join("%s (%d)" % (",".join(map(str, k)), n) for n, k in holding))
    key, fs = max(parts.items(), key=lambda kv: sum(f >= a.goal for f in kv[1]))
    good = sum(f >= a.goal for f in fs)
    miss = (1 - len(fs) / recorded) ** a.random
    inside = {p: next(k for k in range(1, len(fs) + 1) if chance_of_one(good, len(fs), k) >= p) for p in (0.90, 0.98)}
    print("part %s holds %d of the %d: %d random points miss it with probability %.2f; inside it, %d random "
          "points find one with probability 0.90, %d with 0.98"
          % (",".join(map(str, key)), good, at_goal, a.random, miss, inside[0.90], inside[0.98]))
    if a.names:
        by_name(names, short, runs, best, key)
    if a.climb:
        climbs(parts, [values[i] for i in short])
    if a.trace:
        traced(read_trace(a.trace, os.path.basename(a.file)), [names[i] for i in short], key, a.goal)


if __name__ == "__main__":
    main()
