"""Where the host time of a ktune call from Python goes (against a goal of
5 us a call): each accessor the C extension reads per torch tensor, timed alone in
a Python loop (the loop's own cost subtracted), beside the whole call.
Run by bench/python_profile_h200.sh; prints a table, writes
OUTDIR/python_profile.json."""

import json
import os
import sys
import time

import torch

import ktune

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTDIR = sys.argv[1] if len(sys.argv) > 1 else "."
N, CALLS, REPEATS = 4096, 20000, 7


def best_ns(fn):
    """Best of REPEATS, ns per call, of fn() run CALLS times (fn loops itself)."""
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter_ns()
        fn()
        times.append((time.perf_counter_ns() - t0) / CALLS)
    return min(times)


x, y, z = (torch.rand(N, device="cuda") for _ in range(3))
k = ktune.load(os.path.join(ROOT, "kernels/cuda/elementwise.cu"))
k(x, y, z)
torch.cuda.synchronize()
raw_stream = torch._C._cuda_getCurrentRawStream
cases = {
    "loop": lambda: [None for _ in range(CALLS)],
    "t.dtype": lambda: [x.dtype for _ in range(CALLS)],
    "t.get_device()": lambda: [x.get_device() for _ in range(CALLS)],
    "t.is_contiguous()": lambda: [x.is_contiguous() for _ in range(CALLS)],
    "t.data_ptr()": lambda: [x.data_ptr() for _ in range(CALLS)],
    "t.shape": lambda: [x.shape for _ in range(CALLS)],
    "t.is_cuda": lambda: [x.is_cuda for _ in range(CALLS)],
    "t.stride()": lambda: [x.stride() for _ in range(CALLS)],
    "current raw stream": lambda: [raw_stream(0) for _ in range(CALLS)],
    "ktune k(x, y, z)": lambda: [k(x, y, z) for _ in range(CALLS)],
}
doc = {"n": N, "calls": CALLS, "launch_path": ktune.launch_path}
for name, fn in cases.items():
    doc[name] = best_ns(fn)
    torch.cuda.synchronize()
loop = doc["loop"]
print(f"launch path: {ktune.launch_path}")
print(f"{'case':24s} {'ns/call':>9s} {'minus loop':>11s}")
for name in cases:
    print(f"{name:24s} {doc[name]:9.0f} {doc[name] - loop:11.0f}")
with open(os.path.join(OUTDIR, "python_profile.json"), "w") as f:
    json.dump(doc, f, indent=1)
