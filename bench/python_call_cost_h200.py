"""Host time of a kernel call from Python: ktune beside Triton's
@triton.autotune doing the same operation (z = x * y + x, f32), in one
process (bench/python_call_cost_h200.sh runs it; docs/BENCHMARKS.md has the figures).

1. The first call for a new key: ktune.tune for two sizes before CUDA is
   initialised (what a miss that tunes costs: ktune's exhaustive 16
   configurations of kernels/cuda/elementwise.cu), and Triton's first call
   of each key (compiling and autotuning its 15 configurations).
2. Later calls: CALLS calls in a loop on a small tensor (the GPU is not the
   bottleneck), timed on the host without synchronising (host time per call)
   and with a synchronize after the loop: ktune through the C extension
   ktune._launch (the default) and through the ctypes fallback, Triton,
   torch's own x * y + x and ktune's kt_launch called bare through ctypes
   (no checks at all).

Writes one JSON document to OUTDIR/python_bench.json and a table on stdout.
"""

import json
import os
import statistics
import sys
import time

import ktune

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL = os.path.join(ROOT, "kernels/cuda/elementwise.cu")
OUTDIR = sys.argv[1] if len(sys.argv) > 1 else "."
KEYS = [1 << 24, (1 << 22) + 7]  # two keys for "first call"
SMALL = 1 << 12  # for the per-call host time
CALLS, REPEATS = 2000, 7
doc = {"calls": CALLS, "repeats": REPEATS, "small_n": SMALL}

# 1a. ktune: a new key is a tuning (before CUDA is initialised in this process).
for i, n in enumerate(KEYS + [SMALL]):
    t0 = time.perf_counter()
    r = ktune.tune(KERNEL, dims={"N": n}, no_cache=True)
    doc[f"ktune_tune_key{i + 1}_s"] = time.perf_counter() - t0
    doc[f"ktune_tune_key{i + 1}"] = {"n": n, "winner": r.winner.pin(), "configs": len(r.configurations)}

import torch  # noqa: E402

HAVE_TRITON = True
try:
    import triton
    import triton.language as tl
except ImportError:
    HAVE_TRITON = False

if HAVE_TRITON:

    @triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w) for b in (256, 512, 1024, 2048, 4096)
                              for w in (2, 4, 8)], key=["n"])
    @triton.jit
    def mul_add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(z_ptr + offs, x * y + x, mask=mask)

    def triton_call(x, y, z):
        mul_add_kernel[lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)](x, y, z, x.numel())

    doc["triton"] = triton.__version__

doc["launch_path"], doc["launch_path_reason"] = ktune.launch_path, ktune.launch_path_reason
if ktune.launch_path != "extension":
    for stream in (sys.stdout, sys.stderr):
        print(f"WARNING: THE C EXTENSION IS NOT USED: {ktune.launch_path_reason}; "
              "the 'ktune_extension' row is missing", file=stream, flush=True)
mul_add = ktune.load(KERNEL)
mul_add_ctypes = ktune.load(KERNEL, launch_path="ctypes")


def tensors(n):
    return torch.rand(n, device="cuda"), torch.rand(n, device="cuda"), torch.empty(n, device="cuda")


# 1b. Triton's first call per key; ktune's first call of a stored key (a lookup, a load).
for i, n in enumerate(KEYS):
    x, y, z = tensors(n)
    torch.cuda.synchronize()
    if HAVE_TRITON:
        t0 = time.perf_counter()
        triton_call(x, y, z)
        torch.cuda.synchronize()
        doc[f"triton_first_call_key{i + 1}_s"] = time.perf_counter() - t0
        assert torch.allclose(z, x * y + x)
    z.zero_()
    t0 = time.perf_counter()
    mul_add(x, y, z)
    torch.cuda.synchronize()
    doc[f"ktune_first_call_key{i + 1}_stored_s"] = time.perf_counter() - t0
    assert torch.allclose(z, x * y + x)


# 2. Later calls. Each case is a function and its arguments, called in the
# loop itself (no lambda around it: a lambda's frame and global lookups cost
# about 0.1-0.5 us, which is not the call's), with local names only.
def per_call(fn, args, sync):
    times = []
    calls = range(CALLS)
    for _ in range(REPEATS):
        torch.cuda.synchronize()
        if len(args) == 3:
            a, b, c = args
            t0 = time.perf_counter()
            for _ in calls:
                fn(a, b, c)
        else:
            a, b, c, d = args
            t0 = time.perf_counter()
            for _ in calls:
                fn(a, b, c, d)
        if sync:
            torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / CALLS)
        torch.cuda.synchronize()
    return {"median_us": statistics.median(times) * 1e6, "min_us": min(times) * 1e6}


def torch_mul_add(x, y, z):
    return torch.add(torch.mul(x, y), x, out=z)


def nothing(a, b, c):
    return None


x, y, z = tensors(SMALL)
mul_add(x, y, z)
mul_add_ctypes(x, y, z)
bare_shape = [s for s in mul_add_ctypes._shapes.values() if s.sizes[0] == SMALL][0]  # the ctypes state for SMALL
bare_argv = bare_shape.argv
bare_argv[0], bare_argv[1], bare_argv[2] = x.data_ptr(), y.data_ptr(), z.data_ptr()
stream = torch.cuda.current_stream().cuda_stream or 1
lib = ktune._lib
handle = mul_add_ctypes._handle
cases = {"python_call_of_nothing": (nothing, (x, y, z))}  # the loop and a call: the harness's own cost
if mul_add.launch_path == "extension":
    cases["ktune_extension"] = (mul_add, (x, y, z))
cases.update({
    "ktune_ctypes": (mul_add_ctypes, (x, y, z)),
    "ktune_bare_kt_launch": (lib.kt_launch, (handle, bare_shape.sizes, bare_argv, stream)),
    "torch_mul_add": (torch_mul_add, (x, y, z)),
})
if HAVE_TRITON:
    triton_call(x, y, z)
    cases["triton"] = (triton_call, (x, y, z))
for name, (fn, args) in cases.items():
    fn(*args)
    doc[f"{name}_host"] = per_call(fn, args, sync=False)
    doc[f"{name}_synced"] = per_call(fn, args, sync=True)
mul_add(x, y, z)
torch.cuda.synchronize()
doc["ktune_small_correct"] = bool(torch.allclose(z, x * y + x))
if mul_add.launch_path == "extension":
    doc["ktune_extension_counts"] = mul_add._launch_counts  # handed_over 0: every timed call launched in C
doc["device"] = torch.cuda.get_device_name()
doc["torch"] = torch.__version__

with open(os.path.join(OUTDIR, "python_bench.json"), "w") as f:
    json.dump(doc, f, indent=1)
print(f"launch path: {ktune.launch_path} ({ktune.launch_path_reason})")
print(f"{'case':28s} {'host us/call':>14s} {'synced us/call':>15s}")
for name in cases:
    print(f"{name:28s} {doc[name + '_host']['median_us']:14.2f} {doc[name + '_synced']['median_us']:15.2f}")
for k, v in doc.items():
    if k.endswith("_s"):
        print(f"{k:40s} {v:8.3f} s")
