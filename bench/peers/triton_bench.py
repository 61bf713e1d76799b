#!/usr/bin/env python3
"""Tuning cost of Triton's autotuner and torch.compile's max-autotune on a matmul.

    triton_bench.py [--size 4096] [--configs small|issue] [--precision ieee|tf32]
                    [--no-inductor] [--out result.json]

The problem is ktune's sgemm (kernels/cuda/sgemm.cu): C = A x B, fp32, all
row-major, M = N = K = --size. Triton computes the fp32 product with
input_precision="ieee" (true fp32, like sgemm.cu) unless --precision tf32;
torch.compile gets float32 inputs with TF32 off (on with tf32).

1. Triton: one @triton.jit matmul under @triton.autotune over a configuration
   list (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages): "small" is 24
   configurations (2 x 2 x 1 x 2 x 3), "issue" the 72 (3 x 3 x 2 x 2 x 2) of the
   issue's measurement. Timed: the first call, which compiles (one
   configuration at a time) and benchmarks every configuration with Triton's
   defaults. Triton's one-time start-up (driver, launcher) is paid before the
   clock starts by an unrelated small kernel; the kernel cache is a fresh
   directory so that every configuration compiles.
2. torch.compile(mode="max-autotune") of the same product, in a child process
   (its stderr holds Inductor's AUTOTUNE report), fresh caches: the first call
   (tracing, precompiling every choice in parallel, benchmarking), the choices
   and their times, Inductor's own precompile and benchmark seconds.
3. Each winner re-measured by remeasure.py's careful method with PyTorch's
   CUDA events, and its result checked against torch.mm (fp32, TF32 off).

Prints one JSON document (also written to --out).
"""

import argparse
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import time

STARTED = time.perf_counter()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def config_list(name):
    """(BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages) tuples."""
    if name == "small":
        return [(bm, bn, 32, w, s) for bm in (64, 128) for bn in (64, 128) for w in (4, 8) for s in (2, 3, 4)]
    if name == "issue":
        return [(bm, bn, bk, w, s) for bm in (64, 128, 256) for bn in (64, 128, 256)
                for bk in (32, 64) for w in (4, 8) for s in (3, 4)]
    raise SystemExit(f"unknown configuration list {name!r}: small or issue")


def fresh_caches():
    """Empty kernel caches for Triton and Inductor (set before they are imported)."""
    root = tempfile.mkdtemp(prefix="peer-caches-")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(root, "triton")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(root, "inductor")
    os.environ["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
    return root


def careful(torch, fn, out_check=None):
    """remeasure.py's method through PyTorch's events (one launcher)."""
    from remeasure import TorchEvents, careful_time
    flush = torch.empty(256 * (1 << 20) // 4, dtype=torch.float32, device="cuda")
    return careful_time({"w": fn}, lambda: flush.zero_(), TorchEvents(torch))["w"]


def rel_err(torch, got, ref):
    return float(torch.linalg.norm((got.double() - ref.double())) / torch.linalg.norm(ref.double()))


# -- Triton -------------------------------------------------------------------

def make_kernels():
    """The Triton matmul (and a small kernel for Triton's start-up)."""
    import triton
    import triton.language as tl

    @triton.jit
    def tiled_mm(a_ptr, b_ptr, c_ptr, M, N, K,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, PRECISION: tl.constexpr):
        # One BLOCK_M x BLOCK_N tile of C per program; the sizes are multiples
        # of the tiles (as sgemm.cu's @where demands), so no masks.
        rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        ks = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            x = tl.load(a_ptr + rows[:, None] * K + (k0 + ks)[None, :])
            y = tl.load(b_ptr + (k0 + ks)[:, None] * N + cols[None, :])
            acc = tl.dot(x, y, acc, input_precision=PRECISION)
        tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc)

    @triton.jit
    def scale(x_ptr, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + i, tl.load(x_ptr + i, mask=i < n) * 2, mask=i < n)

    return tiled_mm, scale


def triton_part(a):
    import torch
    import triton

    tiled_mm, scale = make_kernels()
    n = a.size
    cfgs = config_list(a.configs)
    if any(n % bm or n % bn or n % bk for bm, bn, bk, _, _ in cfgs):
        raise SystemExit(f"--size {n} must be a multiple of every block size")
    triton_cfgs = [triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk}, num_warps=w, num_stages=s)
                   for bm, bn, bk, w, s in cfgs]
    tuned = triton.autotune(configs=triton_cfgs, key=["M", "N", "K"])(tiled_mm)

    torch.manual_seed(0)
    x = torch.rand(n, n, device="cuda")
    y = torch.rand(n, n, device="cuda")
    z = torch.empty(n, n, device="cuda")
    ref = torch.mm(x, y)

    # Triton's one-time start-up, off the clock.
    t = torch.ones(1024, device="cuda")
    scale[(1,)](t, 1024, BLOCK=1024)
    torch.cuda.synchronize()

    def grid(meta):
        return (n // meta["BLOCK_M"], n // meta["BLOCK_N"])

    t0 = time.perf_counter()
    tuned[grid](x, y, z, n, n, n, PRECISION=a.precision)
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0

    timings = getattr(tuned, "configs_timings", None) or {}
    per_config = []
    for c, tms in timings.items():
        v = tms[0] if isinstance(tms, (list, tuple)) else tms
        per_config.append({"config": dict(c.kwargs, num_warps=c.num_warps, num_stages=c.num_stages),
                           "time_s": float(v) / 1e3 if v == v and v != float("inf") else None})
    best = tuned.best_config
    best_cfg = dict(best.kwargs, num_warps=best.num_warps, num_stages=best.num_stages)
    z.fill_(float("nan"))
    tuned[grid](x, y, z, n, n, n, PRECISION=a.precision)
    err = rel_err(torch, z, ref)
    re_t = careful(torch, lambda: tuned[grid](x, y, z, n, n, n, PRECISION=a.precision))
    ok = [c for c in per_config if c["time_s"] is not None]
    return {
        "tool": "triton.autotune",
        "version": triton.__version__,
        "configs": len(cfgs),
        "configs_list": a.configs,
        "precision": a.precision,
        "wall_s": wall,
        "per_config_s": wall / len(cfgs),
        "autotuner_bench_time_s": getattr(tuned, "bench_time", None),
        "ok": len(ok),
        "best": {"config": best_cfg,
                 "time_s": min((c["time_s"] for c in ok), default=None)},
        "rel_err_vs_torch_mm": err,
        "remeasured": re_t,
        "configurations": per_config,
    }


# -- torch.compile(mode="max-autotune"), in a child process -------------------

AUTOTUNE_LINE = re.compile(r"AUTOTUNE benchmarking takes ([\d.]+) seconds and ([\d.]+) seconds precompiling"
                           r"(?: for (\d+) choices)?")
CHOICE_LINE = re.compile(r"^\s+(\S+)\s+([\d.]+) ms\s+([\d.]+)%\s*(.*)$")


def parse_autotune_report(text):
    """Inductor's AUTOTUNE report on stderr -> [{op, choices: [...], bench_s, precompile_s, n}]."""
    reports, cur = [], None
    for line in text.splitlines():
        if line.startswith("AUTOTUNE "):
            cur = {"op": line[len("AUTOTUNE "):].strip(), "top_choices": []}
            reports.append(cur)
            continue
        m = AUTOTUNE_LINE.search(line)
        if m and reports:
            reports[-1].update(bench_s=float(m.group(1)), precompile_s=float(m.group(2)),
                               n_choices=int(m.group(3)) if m.group(3) else None)
            cur = None
            continue
        m = CHOICE_LINE.match(line)
        if m and cur is not None:
            cur["top_choices"].append({"choice": m.group(1), "time_s": float(m.group(2)) / 1e3,
                                       "relative": float(m.group(3)) / 100, "detail": m.group(4).strip()})
    return reports


def describe(choice):
    """A choice's name and its template parameters, where Inductor gives them."""
    name = str(getattr(choice, "name", "") or choice)
    detail = getattr(choice, "description", "") or ""
    return f"{name} {detail}".strip()


def hook_choices(captured):
    """Records Inductor's autotuning choices and seconds, through whichever of
    its hooks this version has (the stderr report is parsed as well)."""
    try:
        from torch._inductor import select_algorithm as sa
    except Exception as e:
        captured["hook_errors"].append(repr(e))
        return
    try:
        def saver(*fargs, **kw):
            timings = fargs[0] if fargs else kw.get("timings", {})
            name = fargs[1] if len(fargs) > 1 else kw.get("name")
            captured["feedback"].append({"op": str(name), "choices": sorted(
                ({"choice": describe(c), "time_s": float(t) / 1e3} for c, t in timings.items()),
                key=lambda c: c["time_s"])})
        sa.add_feedback_saver(saver)
    except Exception as e:
        captured["hook_errors"].append(f"add_feedback_saver: {e!r}")
    try:
        orig = sa.AlgorithmSelectorCache.log_results
        sig = inspect.signature(orig)

        def log_results(*args, **kw):
            try:
                b = sig.bind_partial(*args, **kw).arguments
                captured["log_results"].append({"op": str(b.get("name")), "bench_s": b.get("elapse"),
                                                "precompile_s": b.get("precompile_elapse"),
                                                "n_choices": len(b.get("timings") or {})})
            except Exception as e:
                captured["hook_errors"].append(f"log_results: {e!r}")
            return orig(*args, **kw)
        sa.AlgorithmSelectorCache.log_results = staticmethod(log_results)
    except Exception as e:
        captured["hook_errors"].append(f"log_results: {e!r}")


def inductor_child(a):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = a.precision == "tf32"
    import torch._inductor.config as icfg
    if hasattr(icfg, "force_disable_caches"):
        icfg.force_disable_caches = True
    captured = {"feedback": [], "log_results": [], "hook_errors": []}
    hook_choices(captured)
    n = a.size
    torch.manual_seed(0)
    x = torch.rand(n, n, device="cuda")
    y = torch.rand(n, n, device="cuda")
    ref = torch.mm(x, y)  # cuBLAS and the context start, off the clock
    torch.cuda.synchronize()

    def mm(p, q):
        return p @ q

    f = torch.compile(mm, mode="max-autotune", dynamic=False)
    t0 = time.perf_counter()
    out = f(x, y)
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = f(x, y)
    torch.cuda.synchronize()
    second = time.perf_counter() - t0
    err = rel_err(torch, out, ref)
    re_t = careful(torch, lambda: f(x, y))
    fb = captured["feedback"][-1]["choices"] if captured["feedback"] else []
    return {
        "tool": "torch.compile(mode='max-autotune')",
        "version": torch.__version__,
        "precision": a.precision,
        "first_call_s": first,
        "second_call_s": second,
        "rel_err_vs_torch_mm": err,
        "remeasured": re_t,
        "choices": fb,
        "n_choices": len(fb) or None,
        "best": fb[0] if fb else None,
        **captured,
    }


def inductor_part(a):
    """Runs inductor_child in a fresh process, its stderr parsed for the AUTOTUNE report."""
    with tempfile.TemporaryFile("w+") as err:
        cmd = [sys.executable, os.path.abspath(__file__), "--inductor-child", "--size", str(a.size),
               "--precision", a.precision]
        t0 = time.perf_counter()
        limit = a.inductor_timeout
        if os.environ.get("STEP_LIMIT"):  # the whole script's limit (throughput_h200.sh)
            limit = min(limit, float(os.environ["STEP_LIMIT"]) - (t0 - STARTED) - 10)
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True, timeout=max(limit, 1))
            rc, stdout = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            rc, stdout = "timeout", e.stdout or ""
        wall = time.perf_counter() - t0
        err.seek(0)
        stderr = err.read()
    doc = {"tool": "torch.compile(mode='max-autotune')", "exit": rc, "process_wall_s": wall}
    lines = [ln for ln in (stdout or "").splitlines() if ln.startswith("{")]
    if lines:
        doc.update(json.loads(lines[-1]))
    doc["autotune_report"] = parse_autotune_report(stderr)
    # Inductor's own figures: the hook's, else the report's.
    src = (doc.get("log_results") or [None])[-1] or (doc["autotune_report"] or [None])[-1] or {}
    for k in ("bench_s", "precompile_s", "n_choices"):
        if src.get(k) is not None and not doc.get(k):
            doc[k] = src[k]
    if doc.get("n_choices"):
        spent = (doc.get("bench_s") or 0) + (doc.get("precompile_s") or 0)
        doc["autotune_s"] = spent
        doc["per_choice_s"] = spent / doc["n_choices"]
        doc["first_call_per_choice_s"] = doc.get("first_call_s", 0) / doc["n_choices"]
    if rc != 0:
        doc["stderr_tail"] = stderr[-4000:]
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--configs", default="small", help="small (24) or issue (72)")
    ap.add_argument("--precision", default="ieee", choices=["ieee", "tf32"])
    ap.add_argument("--no-triton", action="store_true")
    ap.add_argument("--no-inductor", action="store_true")
    ap.add_argument("--inductor-timeout", type=float, default=240)
    ap.add_argument("--inductor-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out")
    a = ap.parse_args()
    fresh_caches()
    if a.inductor_child:
        print(json.dumps(inductor_child(a), default=str))
        return 0
    doc = {"shape": {"M": a.size, "N": a.size, "K": a.size}, "dtype": "float32"}
    if not a.no_triton:
        try:
            doc["triton"] = triton_part(a)
        except Exception as e:
            doc["triton"] = {"error": f"{type(e).__name__}: {e}"}
    if not a.no_inductor:
        doc["inductor"] = inductor_part(a)
    text = json.dumps(doc, indent=1, default=str)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
