"""Host time of a kernel call from Python on the CPU backend (no GPU), per
launch path: the C extension ktune._launch and the ctypes fallback, each on
a shape launched before (the hot path) and with a keyword (a=2.0: scalars
packed per call; on ctypes every check and view built again), beside
kt_launch called bare through ctypes (the binding's floor, no checks). A
one-element kernel, NumPy arrays: the kernel's own time is a few ns.

    python3 bench/python_cpu.py        (with the package installed: pip install ./python)
"""

import os
import statistics
import tempfile
import time

import numpy as np

import ktune

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALLS, REPEATS = 20000, 7


def per_call(fn):
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        times.append((time.perf_counter() - t0) / CALLS * 1e6)
    return statistics.median(times), min(times)


with tempfile.TemporaryDirectory() as tmp:
    path, db = os.path.join(ROOT, "python/tests/kernels/scale.c"), os.path.join(tmp, "r.db")
    x, y = np.ones(1, np.float32), np.zeros(1, np.float32)
    kernels = {p: ktune.load(path, db=db, miss="default", launch_path=p) for p in ("extension", "ctypes")}
    for k in kernels.values():
        k(x, y)
        assert k.launch_path in kernels
    ext, cty = kernels["extension"], kernels["ctypes"]
    shape = next(iter(cty._shapes.values()))
    lib, handle = ktune._lib, cty._handle
    print(f"ktune {ktune.__version__}, default launch path: {ktune.launch_path} ({ktune.launch_path_reason})")
    print(f"{CALLS} calls x {REPEATS}, host us per call")
    for name, fn in [("extension: k(x, y)", lambda: ext(x, y)),
                     ("ctypes:    k(x, y)", lambda: cty(x, y)),
                     ("extension: k(x, y, a=2.0)", lambda: ext(x, y, a=2.0)),
                     ("ctypes:    k(x, y, a=2.0)", lambda: cty(x, y, a=2.0)),
                     ("kt_launch bare through ctypes", lambda: lib.kt_launch(handle, shape.sizes, shape.argv, None))]:
        med, best = per_call(fn)
        print(f"{name:32s} median {med:6.2f} us  min {best:6.2f} us")
    counts = ext._launch_counts
    assert counts["handed_over"] == 0, counts  # every call above was launched by the extension itself
