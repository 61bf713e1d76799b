"""Host time of a kernel call from Python on the CPU backend (no GPU): the
package's hot path on NumPy arrays, the checked path (a keyword makes every
call take it), and kt_launch called bare through ctypes (the binding's
floor), on a one-element kernel so that the kernel's own time is a few ns.

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

with tempfile.TemporaryDirectory() as tmp:
    k = ktune.load(os.path.join(ROOT, "python/tests/kernels/scale.c"), db=os.path.join(tmp, "r.db"), miss="default")
    x, y = np.ones(1, np.float32), np.zeros(1, np.float32)
    k(x, y)
    shape = next(iter(k._shapes.values()))
    lib, handle = ktune._lib, k._handle

    def per_call(fn):
        times = []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            for _ in range(CALLS):
                fn()
            times.append((time.perf_counter() - t0) / CALLS * 1e6)
        return statistics.median(times), min(times)

    for name, fn in [("ktune hot path (NumPy)", lambda: k(x, y)),
                     ("ktune checked path (a=2.0 given)", lambda: k(x, y, a=2.0)),
                     ("kt_launch bare through ctypes", lambda: lib.kt_launch(handle, shape.sizes, shape.argv, None))]:
        med, best = per_call(fn)
        print(f"{name:36s} median {med:6.2f} us  min {best:6.2f} us")
