"""bench/timing_rank_h200.sh's table: ktune's ranking of every configuration
against an independent graph timing (bench/graph_timer.cu) of the same ones.

    python3 bench/timing_rank.py DIR N...

DIR/N/<timing>.json (N: a count, or RxC for softmax) are `ktune tune --json` results (timing: auto, events),
DIR/N/graph.txt lines "BLOCK VEC us_per_launch". Prints one Markdown row per
N and timing: Spearman's rho of ktune's medians against the graph times,
ktune's winner's regret (its graph time over the best graph time, minus 1),
the methods ktune's measurements used, and the two ranges of times."""
import json
import sys


def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(order):  # ties share the mean of their ranks
        j = i
        while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def key(cfg):
    return (int(cfg["BLOCK"]), int(cfg["VEC"]))


def label(n):
    """2^k for elementwise's element counts; softmax's "RxC" as it is."""
    return f"2^{len(bin(int(n))) - 3}" if n.isdigit() else n


def main():
    out, sizes = sys.argv[1], sys.argv[2:]
    print("| N | ktune --timing | Spearman | winner regret | methods used | ktune us/launch | graph us/launch |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        graph = {}
        for line in open(f"{out}/{n}/graph.txt"):
            b, v, us = line.split()
            graph[(int(b), int(v))] = float(us)
        best = min(graph.values())
        for timing in ("auto", "events"):
            try:
                r = json.load(open(f"{out}/{n}/{timing}.json"))
            except (OSError, ValueError) as e:
                print(f"| {n} | {timing} | (no result: {e}) | | | | |")
                continue
            ok = [c for c in r["configurations"] if c["status"] == "ok" and key(c["config"]) in graph]
            kt = [c["median_s"] * 1e6 for c in ok]
            ref = [graph[key(c["config"])] for c in ok]
            methods = sorted({c.get("measurement", {}).get("method", "?") for c in ok})
            counts = {m: sum(1 for c in ok if c.get("measurement", {}).get("method", "?") == m) for m in methods}
            win = graph[key(r["winner"]["config"])]
            print(f"| {label(n)} | {timing} | {spearman(kt, ref):.3f} | {100 * (win / best - 1):.1f}% "
                  f"| {', '.join(f'{m} {k}' for m, k in counts.items())} | {min(kt):.2f}-{max(kt):.2f} "
                  f"| {min(ref):.2f}-{max(ref):.2f} |")


main()
