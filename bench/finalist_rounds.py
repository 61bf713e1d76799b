#!/usr/bin/env python3
"""Finalist rounds replayed on recorded samples: do the 7 rounds decide better than stopping once
the leader is apart (src/tuner/rounds.c, rounds_settled)?

    python3 bench/finalist_rounds.py tests/data/t4/*.json.gz [more T4 files]

Each configuration of a T4 file (Kernel Tuner's results format) carries its recorded runtimes,
taken one after the other (32 in the FAIR hub's files, kernels of a few milliseconds). For each
offset o into those sequences the tuner's finalist stage is replayed: the first pass is the median
of samples o..o+2, its 5 best go to the rounds, sample o+3 is the warm-up round and round r takes
sample o+4+r of every finalist; the winner is the best median over the rounds run. A configuration's
truth is the median of all its samples; the regret of a decision is its winner's truth over the
best truth among the finalists, minus 1. Rules: all 7 rounds, 3 rounds, and 7 rounds stopped
after round 3 or later once the leader's slowest sample is faster than every other finalist's
fastest (the rule before ties), and the tuner's rule: stop once every other finalist is either apart
(its fastest sample slower than the leader's slowest) or tied with the leader (its median within the
leader's interquartile spread of the leader's median, the spread counting only when at most TIE_CAP
of the leader's median; a few variants of the bound are printed beside it). The tuner also runs the
default in the rounds (for the speed-up it reports); the replay leaves it out.

    python3 bench/finalist_rounds.py --screen tests/data/t4/*.json.gz

replays the search stage's screening measurement instead: a configuration's first pass takes k of
its samples (today, "stable": 3 and more until the median's error is 1%, at most 20; "stable<=8":
the same loop stopped at 8), its 5 best go to the
rounds above (the tuner's rule), and the regret is the winner's truth over the best truth of the
whole space. Samples are taken cyclically from offset o (32 offsets), the rounds' 8 first, then the
first pass's.
"""
import gzip
import json
import statistics as st
import sys

FINALISTS, ROUNDS, MIN_ROUNDS = 5, 7, 3
TIE_CAP = 0.02  # src/measure/measure.h: KT__TIE_MAX_SPREAD


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


def quartiles(v):
    """The interpolated quartiles of V (as quantile_sorted in src/measure/measure.c)."""
    v = sorted(v)

    def q(p):
        pos = p * (len(v) - 1)
        i = int(pos)
        return v[i] + (pos - i) * (v[i + 1] - v[i]) if i + 1 < len(v) else v[-1]

    return q(0.25), q(0.75)


def tie_bound(lead, how):
    """Seconds within which another finalist's median counts as tied with the leader's, or 0."""
    med = st.median(lead)
    lo, hi = quartiles(lead)
    iqr = hi - lo
    if how == "iqr":
        return iqr
    if how == "iqr capped":  # the tuner's rule
        return iqr if iqr <= TIE_CAP * med else 0
    if how.startswith("iqr floor "):  # at least a relative floor, for a leader of tiny spread
        return max(iqr, float(how.split()[-1]) * med) if iqr <= TIE_CAP * med else 0
    return float(how) * med  # a fixed relative bound


def settled_or_tied(samples, how):
    """Every other finalist apart from the leader or tied with it: (stop, tied)."""
    lead = min(samples, key=lambda i: st.median(samples[i]))
    lead_max, lead_med = max(samples[lead]), st.median(samples[lead])
    bound = tie_bound(samples[lead], how)
    tied = False
    for i, v in samples.items():
        if i == lead or min(v) > lead_max:
            continue
        if st.median(v) - lead_med > bound:
            return False, False
        tied = True
    return True, tied


def run_rounds(cfgs, order, sample, rounds, stop):
    """The rounds over ORDER; SAMPLE(i, r) is round r's sample of configuration i."""
    samples = {i: [] for i in order}
    done = 0
    for r in range(rounds):
        for i in order:
            samples[i].append(sample(i, r))
        done = r + 1
        if MIN_ROUNDS <= done < rounds:
            if stop is True and apart(samples):
                break
            if isinstance(stop, str) and settled_or_tied(samples, stop)[0]:
                break
    return min(order, key=lambda i: st.median(samples[i])), done


def decide(cfgs, offset, rounds, stop):
    first = [st.median(c[offset:offset + 3]) for c in cfgs]
    order = sorted(range(len(cfgs)), key=lambda i: first[i])[:FINALISTS]
    winner, done = run_rounds(cfgs, order, lambda i, r: cfgs[i][offset + 4 + r], rounds, stop)
    truth = {i: st.median(cfgs[i]) for i in order}
    return truth[winner] / min(truth.values()) - 1, done, winner


def median_rel_error(v):
    """As src/measure/measure.c: the median's standard error from the interquartile range."""
    lo, hi = quartiles(v)
    return 1.2533 * (hi - lo) / 1.349 / len(v) ** 0.5 / st.median(v)


def screen(c, offset, k):
    """The first pass's median over K cyclic samples after the rounds' 8; k "stable": today's loop."""
    n = len(c)
    take = lambda j: c[(offset + 8 + j) % n]
    if not str(k).startswith("stable"):
        return st.median([take(j) for j in range(k)]), k
    cap = int(k[len("stable<="):]) if k != "stable" else 20
    v = [take(j) for j in range(3)]
    while len(v) < cap and median_rel_error(v) > 0.01:
        v.append(take(len(v)))
    return st.median(v), len(v)


def screened(cfgs, truth, offset, k):
    n = len(cfgs[0])
    first = [screen(c, offset, k) for c in cfgs]
    order = sorted(range(len(cfgs)), key=lambda i: first[i][0])[:FINALISTS]
    winner, done = run_rounds(cfgs, order, lambda i, r: cfgs[i][(offset + 1 + r) % n], ROUNDS, "iqr capped")
    return truth[winner] / min(truth) - 1, st.mean(f[1] for f in first), winner


def main_screen(paths):
    for path in paths:
        cfgs = runtimes(path)
        n = min(len(c) for c in cfgs)
        cfgs = [c[:n] for c in cfgs]
        truth = [st.median(c) for c in cfgs]
        print(f"== {path.split('/')[-1]}: {len(cfgs)} configurations, {n} samples each, {n} offsets")
        base = [screened(cfgs, truth, o, "stable") for o in range(n)]
        for k in ("stable", "stable<=8", "stable<=5", 3, 2, 1):
            res = [screened(cfgs, truth, o, k) for o in range(n)]
            reg = [r[0] for r in res]
            same = sum(a[2] == b[2] for a, b in zip(res, base))
            print(f"  first pass {str(k):9s} samples {st.mean(r[1] for r in res):5.2f}  regret mean {100 * st.mean(reg):.3f}%"
                  f" max {100 * max(reg):.3f}%  winner as today: {same}/{len(res)}")


def main(paths):
    rules = [("all 7 rounds", ROUNDS, False), ("3 rounds", 3, False), ("stop once apart", ROUNDS, True),
             ("apart or tied", ROUNDS, "iqr capped"), ("  tie: IQR", ROUNDS, "iqr"),
             ("  tie: 1%", ROUNDS, "0.01"), ("  tie: 0.5%", ROUNDS, "0.005"),
             ("  tie: IQR>=0.5%", ROUNDS, "iqr floor 0.005"), ("  tie: IQR>=1%", ROUNDS, "iqr floor 0.01")]
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
    if sys.argv[1] == "--screen":
        main_screen(sys.argv[2:])
    else:
        main(sys.argv[1:])
