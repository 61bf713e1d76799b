"""The table of bench/gemm_wgmma_h200.sh: ktune's winner of gemm_wgmma.cu
against cuBLAS (torch.mm) per shape, from OUT's tune4096.json, sweep.json
and cublas*.txt, with Triton's autotuned tutorial matmul beside it where
triton.txt exists; the geometric means of the fractions over the LLM shapes.

  gemm_wgmma_table.py OUT
"""
import json
import math
import os
import sys


def results(path):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return []
    r = json.load(open(path))
    return r["keys"] if "keys" in r else [r]


def cublas(path):
    out = {}
    if os.path.exists(path):
        for line in open(path):
            m, n, k, s, _, cold = line.split()
            out[(int(m), int(n), int(k))] = (float(s), float(cold))
    return out


def triton(path):
    out = {}
    if os.path.exists(path):
        for line in open(path):
            m, n, k, s, _, tune_s, _, _ = line.split()
            out[(int(m), int(n), int(k))] = (float(s), float(tune_s))
    return out


def shape(sizes):
    kv = dict(x.split("=") for x in sizes.split())
    return int(kv["M"]), int(kv["N"]), int(kv["K"])


def main(out):
    ref = {**cublas(f"{out}/cublas4096.txt"), **cublas(f"{out}/cublas_llm.txt")}
    tri = triton(f"{out}/triton.txt")
    print("| M | N | K | ktune winner | ktune TFLOP/s | cuBLAS TFLOP/s | fraction | cuBLAS cold TFLOP/s | tuning wall s | configs ok/measured "
          "| Triton TFLOP/s | Triton fraction | Triton tuning wall s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    fractions, tri_fractions = [], []
    for name in ("tune4096.json", "sweep.json"):
        for r in results(f"{out}/{name}"):
            m, n, k = shape(r["sizes"])
            flop = 2.0 * m * n * k
            w = r.get("winner") or {}
            s = w.get("final_median_s") or w.get("median_s")
            cfg = " ".join(f"{a}={b}" for a, b in (w.get("config") or {}).items())
            ok = sum(1 for c in r.get("configurations", []) if c.get("status") == "ok")
            tot = len(r.get("configurations", []))
            wall = r.get("timeline", {}).get("wall_s", 0)
            cb, cold = ref.get((m, n, k), (None, None))
            frac = cb / s if s and cb else None
            ts, tune_s = tri.get((m, n, k), (None, None))
            tfrac = cb / ts if ts and cb else None
            if frac and name == "sweep.json":
                fractions.append(frac)
            if tfrac and name == "sweep.json":
                tri_fractions.append(tfrac)
            print(f"| {m} | {n} | {k} | {cfg or 'none'} | {flop / s / 1e12 if s else 0:.1f} | "
                  f"{flop / cb / 1e12 if cb else 0:.1f} | {frac or 0:.3f} | {flop / cold / 1e12 if cold else 0:.1f} | "
                  f"{wall:.1f} | {ok}/{tot} | {flop / ts / 1e12 if ts else 0:.1f} | {tfrac or 0:.3f} | "
                  f"{tune_s or 0:.1f} |")
    if fractions:
        g = math.exp(sum(map(math.log, fractions)) / len(fractions))
        print(f"\ngeometric mean of the fraction over {len(fractions)} LLM shapes: {g:.3f}")
    if tri_fractions:
        g = math.exp(sum(map(math.log, tri_fractions)) / len(tri_fractions))
        print(f"Triton's geometric mean of the fraction over {len(tri_fractions)} LLM shapes: {g:.3f}")


if __name__ == "__main__":
    main(sys.argv[1])
