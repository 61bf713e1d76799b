#!/usr/bin/env python3
"""Writes a generated results database export (ktune cache import's json).

    gen_results.py KEYS PER_KEY OUT.json

KEYS keys (kernel "gen", two devices, sizes N=1, N=2, ...) of PER_KEY
results each, from a fixed seed: four tuned names; about 85% ok, the rest
compile, runtime, timeout and correctness failures; the first result of a key
is its default (A=1 B=1 C=1 D=1, ok); the winner is the fastest ok result.
Prints one JSON line per key with what the report must show: its sizes and
device, the count per status, the winner's configuration and time.
"""
import json
import random
import sys


def config(i):
    a, b, c, d = i % 10, i // 10 % 10, i // 100 % 10, i // 1000
    return "A=%d B=%d C=%d D=%d" % (2 ** a, b + 1, 4 * (c + 1), d + 1)


def key(k, per_key, rng):
    results, counts = [], {}
    for i in range(per_key):
        r = rng.random()
        status = "ok" if i == 0 or r < 0.85 else ["compile", "runtime", "timeout", "correctness"][int(r * 100) % 4]
        t = 1e-4 * (1 + 50 * rng.random() ** 3) if status == "ok" else None
        counts[status] = counts.get(status, 0) + 1
        stamp = "2026-01-01T00:%02d:%02d.%03dZ" % (i // 60000 % 60, i // 1000 % 60, i % 1000)
        results.append({"config": config(i), "status": status, "median": t, "min": t, "max": t, "mean": t,
                        "stddev": 0 if t else None, "nsamples": 3 if t else 0, "reps": 1, "stopped_early": False,
                        "compile_s": 0.05, "message": None if t else "generated failure", "timestamp": stamp})
    ok = [r for r in results if r["status"] == "ok"]
    best = min(ok, key=lambda r: r["median"])
    device = "Generated GPU %d" % (k % 2)
    entry = {"kernel": "gen", "source_hash": "%064x" % 21, "backend": "cuda", "device": device, "arch": "sm_90",
             "memory": 1 << 34, "driver_version": "1", "toolchain_version": "1", "method_version": "1",
             "sizes": "N=%d" % (k // 2 + 1), "created": "2026-01-01T00:00:00.000Z",
             "winner": {"config": best["config"], "seconds": best["median"], "timestamp": "2026-01-01T01:00:00.000Z"},
             "results": results}
    summary = {"sizes": entry["sizes"], "device": device, "counts": counts, "winner": best["config"],
               "winner_s": best["median"]}
    return entry, summary


def main():
    keys, per_key, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = random.Random(21)
    entries = []
    for k in range(keys):
        entry, summary = key(k, per_key, rng)
        entries.append(entry)
        print(json.dumps(summary))
    with open(out, "w") as f:
        json.dump({"format": "ktune-results", "format_version": 1, "keys": entries}, f)


if __name__ == "__main__":
    main()
