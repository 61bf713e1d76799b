#!/usr/bin/env python3
"""One careful timing method for every tool's winner, so winners compare.

    remeasure.py JOBS.json [--out OUT.json] [--warmup 10] [--samples 50] [--rounds 5]

JOBS.json is a list of {"label", "file", "kernel", "dims", "config"}: CUDA
kernels annotated for ktune, each compiled here with CuPy (NVRTC, ktune's
--std=c++17, the same -D names) and launched with its @grid and @block.
Jobs with the same kernel, sizes and configuration are measured once.

The method (also used by triton_bench.py through careful_time with PyTorch's
events):
  - every kernel is first checked: outputs poisoned with NaN, one launch on
    random inputs, compared with the default configuration's outputs
    (relative L2 error; NaN means an unwritten or wrong element);
  - `warmup` launches each, untimed;
  - `rounds` rounds, each taking samples/rounds timed launches of every
    kernel in turn (interleaved, so that clock or thermal drift hits all of
    them alike); before each timed launch the L2 cache is flushed by writing
    a buffer of --flush-mb MiB (H200: 60 MB of L2), outside the events;
  - each launch is timed alone by a pair of CUDA events; the median over all
    samples is the kernel's time (min, mean and spread are reported too).
"""

import argparse
import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import annot  # noqa: E402


class CupyEvents:
    def __init__(self, cp):
        self.cp = cp

    def event(self):
        return self.cp.cuda.Event()

    def elapsed_s(self, a, b):
        return self.cp.cuda.get_elapsed_time(a, b) / 1e3

    def sync(self):
        self.cp.cuda.runtime.deviceSynchronize()


class TorchEvents:
    def __init__(self, torch):
        self.torch = torch

    def event(self):
        return self.torch.cuda.Event(enable_timing=True)

    def elapsed_s(self, a, b):
        return a.elapsed_time(b) / 1e3

    def sync(self):
        self.torch.cuda.synchronize()


def stats(samples):
    s = sorted(samples)
    return {
        "median_s": statistics.median(s),
        "min_s": s[0],
        "mean_s": statistics.fmean(s),
        "stdev_s": statistics.stdev(s) if len(s) > 1 else 0.0,
        "p10_s": s[len(s) // 10],
        "p90_s": s[(len(s) * 9) // 10],
        "samples": len(s),
    }


def careful_time(launchers, flush, events, warmup=10, samples=50, rounds=5):
    """{name: stats} for callables that each enqueue one kernel launch."""
    for launch in launchers.values():
        for _ in range(warmup):
            flush()
            launch()
    events.sync()
    per_round = max(1, samples // rounds)
    times = {name: [] for name in launchers}
    for _ in range(rounds):
        for name, launch in launchers.items():
            pairs = []
            for _ in range(per_round):
                flush()
                a, b = events.event(), events.event()
                a.record()
                launch()
                b.record()
                pairs.append((a, b))
            events.sync()
            times[name] += [events.elapsed_s(a, b) for a, b in pairs]
    return {name: stats(t) for name, t in times.items()}


# -- CUDA kernels through CuPy ------------------------------------------------

def _job_key(job):
    return json.dumps([os.path.abspath(job["file"]), job.get("kernel"), job.get("dims") or {},
                       sorted(job["config"].items())])


class CudaKernel:
    """One configuration of an annotated kernel, compiled and ready to launch."""

    def __init__(self, cp, np, kern, config):
        self.cp, self.np, self.kern, self.config = cp, np, kern, config
        opts = ("--std=c++17",) + tuple(f"-D{k}={v}" for k, v in config.items())
        self.func = cp.RawModule(code=kern.source, options=opts).get_function(kern.name)
        self.grid, self.block = kern.launch(config)
        self.smem = kern.shared_bytes(config)

    def launch(self, args):
        self.func(self.grid, self.block, args, shared_mem=self.smem)


def make_args(cp, np, kern, seed):
    """Device arguments: random inputs, NaN-poisoned outputs (see poison)."""
    rs = cp.random.RandomState(seed)
    args, outs = [], []
    for name, kind, dtype, dims, mode, init in kern.args:
        if kind == "scalar":
            args.append(np.dtype(annot.NUMPY_DTYPES[dtype]).type(annot.evaluate(dims, kern.dims) if dims else 0))
            continue
        n = annot.tensor_elems(kern, dims)
        if dtype == "bf16":
            a = (rs.random_sample(n, dtype=cp.float32) * 2 - 1).view(cp.uint32) >> 16
            a = a.astype(cp.uint16)
        elif dtype in ("f32", "f64", "f16"):
            a = rs.random_sample(n, dtype=cp.float32 if dtype != "f64" else cp.float64)
            a = a.astype({"f32": cp.float32, "f64": cp.float64, "f16": cp.float16}[dtype])
        else:
            a = rs.randint(0, 100, n).astype(annot.NUMPY_DTYPES[dtype])
        if init == "zeros":
            a[...] = 0
        args.append(a)
        if mode in ("out", "inout"):
            outs.append((len(args) - 1, init, a.copy()))
    return args, outs


def run_checked(cp, kernel, args, outs):
    """One launch with outputs reset (inout, initialised out) or poisoned (other out)."""
    for i, init, initial in outs:
        if init in ("random",) and args[i].dtype.kind == "f":
            args[i].fill(float("nan"))
        else:
            args[i][...] = initial
    kernel.launch(args)
    cp.cuda.runtime.deviceSynchronize()
    return [args[i].astype(cp.float64) for i, _, _ in outs]


def rel_err(cp, got, ref):
    num = sum(float(cp.linalg.norm(g - r)) ** 2 for g, r in zip(got, ref))
    den = sum(float(cp.linalg.norm(r)) ** 2 for r in ref)
    return math.sqrt(num) / math.sqrt(den) if den else math.sqrt(num)


def remeasure_cuda(jobs, warmup, samples, rounds, flush_mb):
    import cupy as cp
    import numpy as np

    distinct, labels = {}, {}
    for job in jobs:
        key = _job_key(job)
        distinct.setdefault(key, job)
        labels.setdefault(key, []).append(job["label"])

    kernels, errors = {}, {}
    data = {}  # (file, kernel, dims) -> (args, outs, reference outputs)
    for key, job in distinct.items():
        kern = annot.load(job["file"], job.get("kernel"), job.get("dims"))
        dkey = (os.path.abspath(job["file"]), kern.name, json.dumps(kern.dims, sort_keys=True))
        try:
            if dkey not in data:
                args, outs = make_args(cp, np, kern, seed=7)
                ref = run_checked(cp, CudaKernel(cp, np, kern, kern.default()), args, outs)
                data[dkey] = (args, outs, ref)
            args, outs, ref = data[dkey]
            k = CudaKernel(cp, np, kern, {n: int(job["config"][n]) for n in kern.params})
            errors[key] = rel_err(cp, run_checked(cp, k, args, outs), ref)
            kernels[key] = (k, args)
        except Exception as e:  # a configuration that fails is reported, the others go on
            errors[key] = f"{type(e).__name__}: {e}"

    flush_buf = cp.empty(flush_mb * (1 << 20) // 4, dtype=cp.float32)
    launchers = {key: (lambda k=k, a=a: k.launch(a)) for key, (k, a) in kernels.items()}
    timed = careful_time(launchers, lambda: flush_buf.fill(0), CupyEvents(cp), warmup, samples, rounds)

    out = []
    for key, job in distinct.items():
        entry = {"labels": labels[key], "file": job["file"], "kernel": job.get("kernel"),
                 "dims": job.get("dims") or {}, "config": job["config"]}
        err = errors.get(key)
        entry["rel_err_vs_default"] = err if isinstance(err, float) else None
        if not isinstance(err, float):
            entry["error"] = err
        entry.update(timed.get(key, {}))
        out.append(entry)
    return out


def device_name():
    try:
        import cupy as cp
        return cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    except Exception as e:
        return f"? ({e})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jobs")
    ap.add_argument("--out")
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--samples", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--flush-mb", type=int, default=256)
    a = ap.parse_args()
    jobs = json.load(open(a.jobs))
    doc = {
        "method": f"CUDA events around each launch; {a.warmup} warm-up launches; median of {a.samples} "
                  f"timed launches in {a.rounds} interleaved rounds; L2 flushed ({a.flush_mb} MiB written) "
                  "before every launch; outputs checked against the default configuration",
        "device": device_name(),
        "results": remeasure_cuda(jobs, a.warmup, a.samples, a.rounds, a.flush_mb),
    }
    text = json.dumps(doc, indent=1)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)
    return 0 if all("median_s" in r for r in doc["results"]) else 1


if __name__ == "__main__":
    sys.exit(main())
