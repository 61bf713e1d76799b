"""The table of bench/sgemm_h200.sh: sgemm.cu's default and tuned winner
against cuBLAS SGEMM, from OUT's default.json, tune.json, winner_random.json
and cublas.txt.

  sgemm_table.py OUT SIZE
"""
import json
import os
import sys


def load(path):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return {}
    return json.load(open(path))


def seconds(r):
    w = r.get("winner") or {}
    return w.get("final_median_s") or w.get("median_s"), " ".join(f"{a}={b}" for a, b in (w.get("config") or {}).items())


def main(out, size):
    flop = 2.0 * size**3
    cb = {}
    if os.path.exists(f"{out}/cublas.txt"):
        for line in open(f"{out}/cublas.txt"):
            name, s, _ = line.split()
            cb[name] = float(s)
    tune = load(f"{out}/tune.json")
    confs = tune.get("configurations", [])
    ok = sum(1 for c in confs if c.get("status") == "ok")
    print(f"tuning: {ok}/{len(confs)} configurations ok, wall {tune.get('timeline', {}).get('wall_s', 0):.1f} s")
    print("| what | data | configuration | ms | TFLOP/s | cuBLAS TFLOP/s (same data) | fraction of cuBLAS |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for what, name, data in (("default", "default.json", "integers"), ("tuned winner", "tune.json", "integers"),
                             ("tuned winner", "winner_random.json", "random")):
        s, cfg = seconds(load(f"{out}/{name}"))
        ref = cb.get(data)
        frac = f"{ref / s:.3f}" if s and ref else "-"
        print(f"| {what} | {data} | {cfg or 'none'} | {s * 1e3 if s else 0:.3f} | {flop / s / 1e12 if s else 0:.1f} | "
              f"{flop / ref / 1e12 if ref else 0:.1f} | {frac} |")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
