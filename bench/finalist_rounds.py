#!/usr/bin/env python3
"""Finalist rounds replayed on recorded samples: do the 7 rounds decide better than stopping once
the leader is apart (src/tuner/tuner.c, rounds_settled)?

    python3 bench/finalist_rounds.py tests/data/t4/*.json.gz [more T4 files]

Each configuration of a T4 file (Kernel Tuner's results format) carries its recorded runtimes,
taken one after the other (32 in the FAIR hub's files, kernels of a few milliseconds). For each
offset o into those sequences the tuner's finalist stage is replayed: the first pass is the median
of samples o..o+2, its 5 best go to the rounds, sample o+3 is the warm-up round and round r takes
sample o+4+r of every finalist; the winner is the best median over the rounds run. A configuration's
truth is the median of all its samples; the regret of a decision is its winner's truth over the
best truth among the finalists, minus 1. Rules: all 7 rounds, 3 rounds, and 7 rounds stopped
after round 3 or later once the leader's slowest sample is faster than every other finalist's
fastest (what the tuner does). The tuner also runs the default in the rounds (for the speed-up it
reports); the replay leaves it out.
"""
import gzip
import json
import statistics as st
import sys

FINALISTS, ROUNDS, MIN_ROUNDS = 5, 7, 3


def runtimes(path):
    with (gzip.open(path) if path.endswith(".gz") else open(path)) as f:
        doc = json.load(f)
    out = []
    for r in doc["results"]:
        rt = r.get("times", {}).get("runtimes")
        if rt and len(rt) >= 4 + ROUNDS and all(isinstance(x, (int, float)) for x in rt):
            out.append(rt)
    return out


def apart(samples):
    """The leader's (best median) slowest sample below every other finalist's fastest."""
    lead = min(samples, key=lambda i: st.median(samples[i]))
    return all(max(samples[lead]) < min(v) for i, v in samples.items() if i != lead)


def decide(cfgs, offset, rounds, stop):
    first = [st.median(c[offset:offset + 3]) for c in cfgs]
    order = sorted(range(len(cfgs)), key=lambda i: first[i])[:FINALISTS]
    samples = {i: [] for i in order}
    done = 0
    for r in range(rounds):
        for i in order:
            samples[i].append(cfgs[i][offset + 4 + r])
        done = r + 1
        if stop and MIN_ROUNDS <= done < rounds and apart(samples):
            break
    winner = min(order, key=lambda i: st.median(samples[i]))
    truth = {i: st.median(cfgs[i]) for i in order}
    return truth[winner] / min(truth.values()) - 1, done, winner


def main(paths):
    rules = [("all 7 rounds", ROUNDS, False), ("3 rounds", 3, False), ("stop once apart", ROUNDS, True)]
    for path in paths:
        cfgs = runtimes(path)
        n = min(len(c) for c in cfgs)
        offsets = range(0, n - 4 - ROUNDS + 1)
        print(f"== {path.split('/')[-1]}: {len(cfgs)} configurations, {n} samples each, {len(offsets)} offsets")
        base = [decide(cfgs, o, ROUNDS, False) for o in offsets]
        for name, rounds, stop in rules:
            res = [decide(cfgs, o, rounds, stop) for o in offsets]
            reg = [r[0] for r in res]
            same = sum(a[2] == b[2] for a, b in zip(res, base))
            print(f"  {name:16s} regret mean {100 * st.mean(reg):.3f}% max {100 * max(reg):.3f}%"
                  f"  rounds {st.mean(r[1] for r in res):.2f}  winner as with 7: {same}/{len(res)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
