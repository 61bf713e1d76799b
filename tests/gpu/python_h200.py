"""The Python package on a real GPU (tests/gpu/python_h200.sh runs it):
PyTorch tensors through kernels/cuda/elementwise.cu and sgemm.cu, compared
with PyTorch's own results, on the current stream and on a side stream;
CuPy arrays when CuPy is here; the GPU's error paths; each through both
launch paths (the C extension ktune._launch, which must be the default here,
and the ctypes fallback). One line per check, PASS or FAIL; exit status 1
when any failed.

    python3 tests/gpu/python_h200.py OUTDIR
"""

import json
import os
import sys
import time
import traceback

import ktune

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ELEMENTWISE = os.path.join(ROOT, "kernels/cuda/elementwise.cu")
SGEMM = os.path.join(ROOT, "kernels/cuda/sgemm.cu")
OUTDIR = sys.argv[1] if len(sys.argv) > 1 else "."
N_ODD = (1 << 20) + 3  # a tail past the last whole vector
SGEMM_SIZES = [(1024, 1024, 1024), (512, 2048, 256)]
failed = 0
facts = {}


def check(name, ok, detail=""):
    global failed
    failed += not ok
    print(f"{'PASS' if ok else 'FAIL'}  {name}{f'  ({detail})' if detail else ''}", flush=True)


def run(name, fn):
    try:
        fn()
    except Exception as e:  # a check that raised is a failure with its traceback
        check(name, False, f"{type(e).__name__}: {e}")
        traceback.print_exc()


# 1. Tune before this process initialises CUDA: the tuner's workers fork from it.
def tune_first():
    t0 = time.perf_counter()
    r = ktune.tune(ELEMENTWISE, dims={"N": N_ODD}, budget=40)
    facts["tune_elementwise_s"] = time.perf_counter() - t0
    check("tune elementwise.cu N=2^20+3 before CUDA is initialised", r.winner is not None, r.winner and r.winner.pin())
    for m, n, k in SGEMM_SIZES:
        t0 = time.perf_counter()
        r = ktune.tune(SGEMM, dims={"M": m, "N": n, "K": k}, budget=40)
        facts[f"tune_sgemm_{m}x{n}x{k}_s"] = time.perf_counter() - t0
        check(f"tune sgemm.cu {m}x{n}x{k}", r.winner is not None, r.winner and r.winner.pin())


run("tuning", tune_first)

import torch  # noqa: E402  (after the tunings, on purpose)

torch.backends.cuda.matmul.allow_tf32 = False
check("the C extension is the default launch path", ktune.launch_path == "extension", ktune.launch_path_reason)
mul_add = sgemm = None  # the kernels of the launch path being checked (the loop at the end)


def elementwise_current_stream():
    x = torch.rand(N_ODD, device="cuda")
    y = torch.rand(N_ODD, device="cuda")
    z = torch.full_like(x, float("nan"))
    mul_add(x, y, z)
    torch.cuda.synchronize()
    check("elementwise: torch tensors, current (default) stream, matches x * y + x",
          torch.allclose(z, x * y + x, rtol=1e-6, atol=1e-6))


def ordered_on(stream, label):
    """The launch is ordered after work already queued on STREAM: a long
    sleep, then x is overwritten, then ktune's launch. Launched on another
    stream, the kernel would read the old x."""
    x = torch.zeros(N_ODD, device="cuda")
    y = torch.rand(N_ODD, device="cuda")
    z = torch.empty_like(x)
    fresh = torch.rand(N_ODD, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.stream(stream):
        torch.cuda._sleep(200_000_000)  # ~0.1 s of GPU cycles
        x.copy_(fresh)
        t0 = time.perf_counter()
        mul_add(x, y, z)
        host = time.perf_counter() - t0
    stream.synchronize()
    check(f"elementwise: on {label}, ordered after the stream's earlier work", torch.allclose(z, fresh * y + fresh))
    check(f"elementwise: on {label}, the launch did not wait for the GPU", host < 0.05, f"{host * 1e6:.0f} us")


def sgemm_checks():
    for m, n, k in SGEMM_SIZES:
        a = torch.randn(m, k, device="cuda")
        b = torch.randn(k, n, device="cuda")
        c = torch.empty(m, n, device="cuda")
        sgemm(a, b, c)
        torch.cuda.synchronize()
        ref = a @ b
        err = (c - ref).abs().max().item()
        check(f"sgemm {m}x{n}x{k}: matches torch.matmul (fp32, no TF32)", torch.allclose(c, ref, rtol=1e-4, atol=1e-3),
              f"max abs error {err:.2e}")
    s = torch.cuda.Stream()
    m, n, k = SGEMM_SIZES[0]
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda")
    c = torch.empty(m, n, device="cuda")
    with torch.cuda.stream(s):
        sgemm(a, b, c)
    s.synchronize()
    check("sgemm on a side stream matches", torch.allclose(c, a @ b, rtol=1e-4, atol=1e-3))


def new_key_after_cuda_init():
    """A size no tuning stored, after CUDA is up in this process: the nearest
    stored size's winner (or, once a miss can tune through a helper, a
    tuning); correct either way."""
    n = (1 << 18) + 1
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    z = torch.empty_like(x)
    t0 = time.perf_counter()
    mul_add(x, y, z)
    torch.cuda.synchronize()
    facts["new_key_after_cuda_init_s"] = time.perf_counter() - t0
    check("elementwise: a new size after CUDA init launches correctly", torch.allclose(z, x * y + x),
          f"{facts['new_key_after_cuda_init_s']:.3f} s")


def cupy_checks():
    try:
        import cupy
    except ImportError:
        print("SKIP  cupy: not installed")
        return
    x = cupy.random.rand(N_ODD, dtype=cupy.float32)
    y = cupy.random.rand(N_ODD, dtype=cupy.float32)
    z = cupy.empty_like(x)
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        mul_add(x, y, z)
    s.synchronize()
    check("elementwise: CuPy arrays on CuPy's current (side) stream", bool(cupy.allclose(z, x * y + x)))


def error_checks():
    x = torch.rand(1024, device="cuda")
    cases = [
        ("a CPU tensor", (x.cpu(), x, x), "needs a CUDA"),
        ("float64", (x.double(), x, x), "expected dtype f32"),
        ("non-contiguous", (torch.rand(2048, device="cuda")[::2], x, x), "contiguous"),
        ("shape mismatch", (x, torch.rand(1000, device="cuda"), x), "dimension 0 is 1000, expected 1024"),
        ("rank", (x.view(32, 32), x, x), "expected 1 dimension"),
    ]
    for label, args, words in cases:
        try:
            mul_add(*args)
            check(f"error: {label}", False, "no exception")
        except ktune.ArgumentError as e:
            check(f"error: {label} -> ArgumentError", words in str(e), str(e)[:160])


def valid_calls_launched_in_c(counts_before):
    """Every valid call above launched in C: none handed to the Python path
    (the error checks come after this)."""
    for k in (mul_add, sgemm):
        counts = k._launch_counts
        check(f"extension: {k.name}'s valid calls launched in C", counts["handed_over"] == counts_before[k.name],
              str(counts))


for path in ("extension", "ctypes"):
    print(f"-- launch path: {path}")
    try:
        mul_add = ktune.load(ELEMENTWISE, launch_path=path)
        sgemm = ktune.load(SGEMM, launch_path=path)
    except ktune.KtuneError as e:
        check(f"load with launch_path={path}", False, str(e))
        continue
    before = {k.name: k._launch_counts["handed_over"] for k in (mul_add, sgemm)} if path == "extension" else {}
    checks = [("elementwise", elementwise_current_stream),
              ("default stream", lambda: ordered_on(torch.cuda.current_stream(), "the default stream")),
              ("side stream", lambda: ordered_on(torch.cuda.Stream(), "a side stream")),
              ("sgemm", sgemm_checks), ("new key", new_key_after_cuda_init), ("cupy", cupy_checks)]
    if path == "extension":
        checks.append(("launched in C", lambda: valid_calls_launched_in_c(before)))
    for name, fn in checks + [("errors", error_checks)]:
        run(f"{path}: {name}", fn)

with open(os.path.join(OUTDIR, "python_facts.json"), "w") as f:
    json.dump(dict(facts, torch=torch.__version__, device=torch.cuda.get_device_name(), ktune=ktune.library_path,
                   launch_path=ktune.launch_path, launch_path_reason=ktune.launch_path_reason), f, indent=1)
print(f"{failed} failed")
sys.exit(1 if failed else 0)
