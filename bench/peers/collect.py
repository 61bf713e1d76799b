#!/usr/bin/env python3
"""Glue for bench/throughput_h200.sh: what to re-measure, and one results.json.

    collect.py jobs PARTS          remeasure.py's job list (every tool's winners)
    collect.py combine PARTS       results.json on stdout

PARTS is the directory the benchmark writes its pieces to:
  meta.json                      date, commit, device, cores, versions
  steps.jsonl                    one line per step: name, exit status, wall seconds
  ktune_<kernel>.json            `ktune tune --json` of each kernel
  ktune_repeat_<i>.json          the repeated tunings of one kernel
  kt_<kernel>.json               kernel_tuner_bench.py's document
  triton.json                    triton_bench.py's document
  remeasure.json                 remeasure.py's document
Missing or broken pieces are recorded as errors, never fatal: a partial run
still gives a results.json that says what is missing.
"""

import glob
import json
import os
import re
import sys

KERNEL_FILES = {"sgemm": "kernels/cuda/sgemm.cu", "elementwise": "kernels/cuda/elementwise.cu"}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except Exception as e:
        return {"error": f"{os.path.basename(path)}: {type(e).__name__}: {e}"}


def steps(parts):
    out = {}
    try:
        for line in open(os.path.join(parts, "steps.jsonl")):
            if line.strip():
                s = json.loads(line)
                out[s["name"]] = s
    except FileNotFoundError:
        pass
    return out


def sizes_to_dims(sizes):
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", sizes or "")}


def ktune_runs(parts):
    """{'sgemm': run, 'elementwise': run, 'repeats': [run...]}, run = {process_wall_s, rc, doc}.

    The repeats are the repeat kernel's main tuning followed by ktune_repeat_<i>."""
    st = steps(parts)
    out, repeats = {}, []
    for path in sorted(glob.glob(os.path.join(parts, "ktune_*.json"))):
        name = os.path.basename(path)[len("ktune_"):-len(".json")]
        s = st.get("ktune_" + name, {})
        run = {"process_wall_s": s.get("wall_s"), "rc": s.get("rc"), "doc": load(path)}
        m = re.match(r"repeat_(\d+)$", name)
        if m:
            repeats.append((int(m.group(1)), run))
        else:
            out[name] = run
    first = out.get(load(os.path.join(parts, "meta.json")).get("repeat_kernel", "elementwise"))
    out["repeats"] = ([first] if first else []) + [r for _, r in sorted(repeats, key=lambda x: x[0])]
    return out


def kt_cache_doc(path, kernel, step):
    """A Kernel Tuner document rebuilt from its cache file (a run cut short)."""
    text = open(path).read().rstrip()
    if text.endswith(","):
        text = text[:-1] + "}\n}"
    cache = json.loads(text)
    configs, best = [], None
    keys = cache.get("tune_params_keys", [])
    for entry in cache.get("cache", {}).values():
        cfg = {k: entry[k] for k in keys if not k.startswith("KT_BLOCK_")}
        t = entry.get("time")
        ok = isinstance(t, (int, float))
        c = {"config": cfg, "status": "ok" if ok else str(t), "time_s": t / 1e3 if ok else None,
             "compile_s": (entry.get("compile_time") or 0) / 1e3,
             "benchmark_s": (entry.get("benchmark_time") or 0) / 1e3}
        configs.append(c)
        if ok and (best is None or c["time_s"] < best["time_s"]):
            best = c
    wall = step.get("wall_s")
    return {"tool": "kernel_tuner", "partial": True, "kernel": kernel,
            "note": f"rebuilt from Kernel Tuner's cache after the step ended with {step.get('rc')}; "
                    "wall_s is the whole step's (Python start and set-up included)",
            "tried": len(configs), "ok": sum(1 for c in configs if c["status"] == "ok"),
            "wall_s": wall, "per_config_s": wall / len(configs) if wall and configs else None,
            "compile_s_total": sum(c["compile_s"] for c in configs),
            "best": best, "configurations": configs}


def kt_doc(parts, kernel):
    doc = load(os.path.join(parts, f"kt_{kernel}.json"))
    cache = os.path.join(parts, f"kt_{kernel}.cache.json")
    if "error" in doc and os.path.exists(cache):
        try:
            doc = kt_cache_doc(cache, kernel, steps(parts).get(f"kt_{kernel}", {}))
        except Exception as e:
            doc["cache_error"] = f"{type(e).__name__}: {e}"
    return doc


def winner_jobs(parts):
    jobs = []
    kt = ktune_runs(parts)
    for kernel, path in KERNEL_FILES.items():
        doc = kt.get(kernel, {}).get("doc", {})
        if (doc.get("winner") or {}).get("config"):
            jobs.append({"label": f"ktune {kernel}", "file": path, "dims": sizes_to_dims(doc.get("sizes")),
                         "config": doc["winner"]["config"]})
        peer = kt_doc(parts, kernel)
        if (peer.get("best") or {}).get("config"):
            jobs.append({"label": f"kernel_tuner {kernel}", "file": path, "dims": sizes_to_dims(peer.get("sizes")),
                         "config": peer["best"]["config"]})
    for i, run in enumerate(kt.get("repeats", []), 1):  # the first is the main tuning
        doc = run["doc"]
        if (doc.get("winner") or {}).get("config"):
            jobs.append({"label": f"ktune repeat {i}", "file": doc.get("file"), "dims": sizes_to_dims(doc.get("sizes")),
                         "config": doc["winner"]["config"]})
    return jobs


def combine(parts):
    return {
        "meta": load(os.path.join(parts, "meta.json")),
        "steps": list(steps(parts).values()),
        "ktune": ktune_runs(parts),
        "kernel_tuner": {k: kt_doc(parts, k) for k in KERNEL_FILES},
        "triton": load(os.path.join(parts, "triton.json")),
        "remeasure": load(os.path.join(parts, "remeasure.json")),
    }


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("jobs", "combine"):
        sys.exit(__doc__)
    doc = winner_jobs(sys.argv[2]) if sys.argv[1] == "jobs" else combine(sys.argv[2])
    json.dump(doc, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
