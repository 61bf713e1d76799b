#!/usr/bin/env python3
"""Kernel Tuner's brute force over the same CUDA kernel and space as ktune.

    kernel_tuner_bench.py kernels/cuda/sgemm.cu [--kernel NAME] [--dim M=4096]...
                          [--lang auto|cupy|nvcuda] [--iterations 7] [--max-configs N]
                          [--out result.json]

The kernel source goes to Kernel Tuner as it is. The space is read from the
file's annotations (annot.py): tune_params are the @autotune names with their
choices, restrictions are the @where expressions (sizes bound to their values),
the grid is @grid exactly (problem_size returns it, grid divisors are 1) and
the block is @block. Kernel Tuner takes the block from tuned names only, so a
@block dimension that is an expression (sgemm's warps x 32) becomes a derived
parameter KT_BLOCK_X/Y/Z whose one valid value per configuration is pinned by
an equality restriction: the valid set is the same, point for point.

Kernel Tuner runs with its defaults (7 timed iterations per configuration, one
compilation at a time, no answer check), the way its users run it; the compiler
options are ktune's (--std=c++17; the GPU's own architecture). CuPy's kernel
cache goes to a fresh directory so that every configuration is compiled.

With --cache, Kernel Tuner appends each configuration's result to that file
as it goes (its own format), so that a run stopped by a time limit still
leaves what it measured (collect.py reads it).

Prints (and writes to --out) one JSON document: wall time of tune_kernel,
configurations tried, cost per configuration, compile and benchmark totals,
every configuration's time and the best one.
"""

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import annot  # noqa: E402

DTYPES = annot.NUMPY_DTYPES


def make_arguments(kern, np, seed=1):
    """Kernel arguments as Kernel Tuner wants them: numpy arrays and scalars."""
    rng = np.random.default_rng(seed)
    out = []
    for name, kind, dtype, dims, mode, init in kern.args:
        if kind == "scalar":
            value = annot.evaluate(dims, kern.dims) if dims else 0
            out.append(np.dtype(DTYPES[dtype]).type(value))
            continue
        n = annot.tensor_elems(kern, dims)
        if dtype == "bf16":
            # bf16 as its bit pattern: the top half of a float32 in [-1, 1).
            a = (rng.random(n, dtype=np.float32) * 2 - 1).view(np.uint32) >> 16
            a = a.astype(np.uint16)
        elif init == "zeros" or (mode == "out" and init == "random"):
            a = np.zeros(n, dtype=DTYPES[dtype])
        elif init == "ones":
            a = np.ones(n, dtype=DTYPES[dtype])
        elif init == "iota":
            a = np.arange(n).astype(DTYPES[dtype])
        elif dtype in ("f32", "f64"):
            a = rng.random(n, dtype=DTYPES[dtype])
        elif dtype == "f16":
            a = rng.random(n, dtype=np.float32).astype(np.float16)
        else:
            a = rng.integers(0, 100, n).astype(DTYPES[dtype])
        out.append(a)
    return out


def block_names(kern, space):
    """Kernel Tuner's block_size_names, plus derived parameters and their restrictions."""
    names, extra_params, extra_restrictions = [], {}, []
    for i, expr in enumerate((kern.block + ["1", "1"])[:3]):
        expr = expr.strip()
        if expr in kern.params:
            names.append(expr)
            continue
        derived = "KT_BLOCK_" + "XYZ"[i]
        values = sorted({annot.evaluate(expr, {**kern.dims, **c}) for c in space})
        extra_params[derived] = values
        if len(values) > 1:
            extra_restrictions.append(f"{derived} == {annot.to_python(expr, kern.dims)}")
        names.append(derived)
    return names, extra_params, extra_restrictions


def spread(space, n):
    """n configurations spread evenly over the space (deterministic)."""
    if n >= len(space):
        return space
    step = len(space) / n
    return [space[int(i * step)] for i in range(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--kernel")
    ap.add_argument("--dim", action="append", default=[])
    ap.add_argument("--lang", default="auto",
                    help="Kernel Tuner backend: cupy, nvcuda, or auto (cupy, else nvcuda; the default)")
    ap.add_argument("--iterations", type=int, default=7, help="timed runs per configuration (KT's default 7)")
    ap.add_argument("--max-configs", type=int, default=0,
                    help="tune only this many configurations, spread over the space (0: all)")
    ap.add_argument("--cache", help="Kernel Tuner's cache file, written as it goes (a killed run leaves "
                    "its configurations there); must not exist yet")
    ap.add_argument("--out")
    a = ap.parse_args()

    # A fresh kernel cache: every configuration is compiled, as on a first run.
    os.environ.setdefault("CUPY_CACHE_DIR", tempfile.mkdtemp(prefix="kt-cupy-cache-"))

    t0 = time.perf_counter()
    import numpy as np
    import kernel_tuner
    import_s = time.perf_counter() - t0

    kern = annot.load(a.file, a.kernel, annot.parse_dims(a.dim))
    space = list(kern.space())
    bnames, extra_params, extra_restrictions = block_names(kern, space)
    tune_params = {**kern.params, **extra_params}
    restrictions = kern.where_python() + extra_restrictions
    subset = None
    if a.max_configs and a.max_configs < len(space):
        subset = {annot.config_key(c) for c in spread(space, a.max_configs)}
        order, names = list(tune_params), list(kern.params)

        # A plain function (not a lambda, which KT would parse as source) is
        # called with every parameter's value, in tune_params order.
        def in_subset(*values):
            p = dict(zip(order, values))
            return annot.config_key({n: p[n] for n in names}) in subset

        restrictions.append(in_subset)

    t1 = time.perf_counter()
    arguments = make_arguments(kern, np)
    setup_s = time.perf_counter() - t1

    def problem_size(p):
        return kern.launch({n: p[n] for n in kern.params})[0]

    smem = None
    if kern.shared:
        smem = {"size": lambda p: kern.shared_bytes({n: p[n] for n in kern.params})}

    def tune(lang):
        if a.cache and os.path.exists(a.cache):
            os.remove(a.cache)  # a failed attempt's; Kernel Tuner would resume from it
        t = time.perf_counter()
        out = kernel_tuner.tune_kernel(
            kern.name, kern.source, problem_size, arguments, tune_params,
            grid_div_x=[], grid_div_y=[], grid_div_z=[], restrictions=restrictions,
            block_size_names=bnames, lang=lang, strategy="brute_force",
            compiler_options=["--std=c++17"], iterations=a.iterations, smem_args=smem,
            cache=a.cache, verbose=False, quiet=True)
        return out, time.perf_counter() - t

    langs = ["cupy", "nvcuda"] if a.lang == "auto" else [a.lang]
    failures = {}
    for lang in langs:
        try:
            (results, env), wall_s = tune(lang)
            break
        except Exception as e:  # the backend could not start here: try the next one
            failures[lang] = f"{type(e).__name__}: {e}"
            print(f"kernel_tuner_bench: lang {lang} failed: {failures[lang]}", file=sys.stderr)
    else:
        raise SystemExit(f"no Kernel Tuner backend worked: {failures}")

    configs, best = [], None
    compile_ms = bench_ms = framework_ms = 0.0
    for r in results:
        cfg = {n: int(r[n]) for n in kern.params}
        t = r.get("time")
        ok = isinstance(t, (int, float, np.floating)) and np.isfinite(t)
        compile_ms += float(r.get("compile_time", 0) or 0)
        bench_ms += float(r.get("benchmark_time", 0) or 0)
        framework_ms += float(r.get("framework_time", 0) or 0) + float(r.get("strategy_time", 0) or 0)
        c = {"config": cfg, "status": "ok" if ok else str(t),
             "time_s": float(t) / 1e3 if ok else None,
             "compile_s": float(r.get("compile_time", 0) or 0) / 1e3,
             "benchmark_s": float(r.get("benchmark_time", 0) or 0) / 1e3}
        if ok and r.get("times"):
            c["min_s"] = float(min(r["times"])) / 1e3
        configs.append(c)
        if ok and (best is None or c["time_s"] < best["time_s"]):
            best = c
    tried = len(results)
    doc = {
        "tool": "kernel_tuner",
        "version": getattr(kernel_tuner, "__version__", "?"),
        "lang": lang,
        "lang_failures": failures or None,
        "strategy": "brute_force",
        "iterations": a.iterations,
        "file": a.file,
        "kernel": kern.name,
        "sizes": kern.sizes(),
        "space_size": len(space),
        "subset": len(subset) if subset else None,
        "tried": tried,
        "ok": sum(1 for c in configs if c["status"] == "ok"),
        "import_s": import_s,
        "setup_s": setup_s,
        "wall_s": wall_s,
        "per_config_s": wall_s / tried if tried else None,
        "compile_s_total": compile_ms / 1e3,
        "benchmark_s_total": bench_ms / 1e3,
        "framework_s_total": framework_ms / 1e3,
        "device": env.get("device_name"),
        "best": best,
        "configurations": configs,
    }
    text = json.dumps(doc, indent=1, default=str)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text if not a.out else json.dumps({k: doc[k] for k in doc if k != "configurations"}, default=str))
    return 0 if best else 1


if __name__ == "__main__":
    sys.exit(main())
