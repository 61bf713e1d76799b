#!/usr/bin/env python3
"""Kernel Tuner's own search strategies replayed on a recorded space, for the
autotuning_methodology score beside ktune's (docs/SEARCH.md, issue 32):

    kernel_tuner_replay.py T4_FILE T1_FILE STRATEGY REPEATS SECONDS OUT.tsv [SEED]

runs Kernel Tuner (1.5.0, `pip install kernel_tuner==1.5.0`) in its simulation
mode on T4_FILE (the benchmark hub's recorded space, gzip or plain), with the
tunable parameters and restrictions of T1_FILE (the hub's kernel description),
REPEATS times with STRATEGY and its default options, each repeat until its
cumulative recorded cost (below) passes SECONDS (give the window's end plus
10%, the package's time limit; `bench/methodology.sh` prints the window).
Kernel Tuner's simulated clock leaves framework time out, so it is given a
time limit of twice SECONDS and the repeat is cut where ktune's clock passes
SECONDS. It writes, in the format of
`bench/methodology -t` (one line per evaluation: repeat, cumulative seconds,
best valid objective so far or nan), the evaluations in the order Kernel Tuner
made them, each costing its recorded time as ktune counts it
(kt__recorded_cost: compilation, the runtimes, framework, search_algorithm and
validation), so that both tools' repeats are scored on one time axis by
`bench/methodology -x` (ours) and `bench/methodology_check.py` (the package).

Kernel Tuner reads its own cache format, so the T4 records are written as one
first (a temporary file): key "v1,v2,..." in the T1's parameter order, the
objective as "time", failures as its error strings. A repeat's configurations
are read from Kernel Tuner's returned results (revisits of a configuration
cost nothing and are dropped, as its simulation runner does).
"""

import gzip
import json
import math
import os
import random
import sys
import tempfile
import warnings

TIME_KEYS = ["compilation", "framework", "search_algorithm", "validation"]


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def recorded_cost(rec, unit):
    """kt__recorded_cost: the record's times summed, in seconds."""
    t = rec.get("times", {})
    total = sum(float(t.get(k, 0) or 0) for k in TIME_KEYS) + sum(float(v) for v in t.get("runtimes", []) or [])
    return total * unit


def space_of(t1):
    params = {}
    for p in t1["ConfigurationSpace"]["TuningParameters"]:
        params[p["Name"]] = json.loads(p["Values"])
    restrictions = [c["Expression"] for c in t1["ConfigurationSpace"]["Conditions"]]
    return params, restrictions


def objective_of(rec):
    for m in rec.get("measurements", []):
        if m["name"] == rec["objectives"][0]:
            return float(m["value"])
    return None


def kernel_tuner_cache(t4, params, path):
    """The T4 records as a Kernel Tuner cache file; returns {key: (cost s, value or None)}."""
    unit = 1e-3 if t4.get("metadata", {}).get("timeunit", "").startswith("mil") else 1.0
    names = list(params)
    cache, table = {}, {}
    for rec in t4["results"]:
        conf = rec["configuration"]
        key = ",".join(str(conf[n]) for n in names)
        ok = rec.get("invalidity") == "correct"
        value = objective_of(rec) if ok else None
        t = rec.get("times", {})
        entry = {n: conf[n] for n in names}
        entry.update(
            time=value if ok else ("CompilationFailedConfig" if rec.get("invalidity") == "compile" else "RuntimeFailedConfig"),
            times=t.get("runtimes", []) or [],
            compile_time=float(t.get("compilation", 0) or 0),
            verification_time=float(t.get("validation", 0) or 0),
            benchmark_time=sum(float(v) for v in t.get("runtimes", []) or []),
            framework_time=float(t.get("framework", 0) or 0),
            strategy_time=float(t.get("search_algorithm", 0) or 0),
            timestamp=rec.get("timestamp", ""),
        )
        cache[key] = entry
        table[key] = (recorded_cost(rec, unit), value)
    doc = {
        "device_name": "recorded",
        "kernel_name": "recorded",
        "problem_size": [1],
        "tune_params_keys": names,
        "tune_params": params,
        "objective": "time",
        "cache": cache,
    }
    with open(path, "w") as f:
        json.dump(doc, f)
    return table


def one_repeat(params, restrictions, cache_path, strategy, seconds, seed):
    import kernel_tuner
    import numpy

    random.seed(seed)
    numpy.random.seed(seed)
    options = {"time_limit": seconds}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = kernel_tuner.tune_kernel(
            "recorded",
            "__global__ void recorded() {}",
            1,
            [],
            params,
            restrictions=restrictions,
            cache=cache_path,
            simulation_mode=True,
            strategy=strategy,
            strategy_options=options,
            quiet=True,
        )
    return results


def main(argv):
    if len(argv) not in (7, 8):
        print(__doc__, file=sys.stderr)
        return 2
    t4_path, t1_path, strategy, repeats, seconds, out = argv[1:7]
    seed0 = int(argv[7]) if len(argv) == 8 else 1
    params, restrictions = space_of(load(t1_path))
    t4 = load(t4_path)
    names = list(params)
    with tempfile.TemporaryDirectory() as tmp:
        cache_path = os.path.join(tmp, "cache.json")
        table = kernel_tuner_cache(t4, params, cache_path)
        with open(out, "w") as f:
            for rep in range(int(repeats)):
                results = one_repeat(params, restrictions, cache_path, strategy, 2 * float(seconds), seed0 * 1000 + rep)
                seen, now, best = set(), 0.0, math.inf
                for r in results:
                    if now > float(seconds):
                        break
                    key = ",".join(str(r[n]) for n in names)
                    if key in seen or key not in table:
                        continue
                    seen.add(key)
                    cost, value = table[key]
                    now += cost
                    if value is not None:
                        best = min(best, value)
                    f.write("%d %.9g %s\n" % (rep, now, "%.9g" % best if math.isfinite(best) else "nan"))
                print("%s repeat %d: %d evaluations, %.1f s" % (strategy, rep, len(seen), now), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
