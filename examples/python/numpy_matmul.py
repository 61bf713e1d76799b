"""ktune from Python on the CPU: tune a matrix multiply written in C for the
sizes of your arrays, then call it like a function. The README's Python
example; no GPU needed.

    pip install ./python
    python examples/python/numpy_matmul.py
"""

import os

import numpy as np

import ktune

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
matmul = ktune.load(os.path.join(ROOT, "kernels/c/matmul.c"), budget=20)  # tunes a new shape with 20 configurations

rng = np.random.default_rng(0)
a = rng.random((256, 192), dtype=np.float32)
b = rng.random((192, 128), dtype=np.float32)
c = np.empty((256, 128), np.float32)
matmul(a, b, c)  # M, K, N read from the shapes; the first call for this shape tunes
np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)

best = ktune.cache.list(kernel="matmul", sizes={"M": 256, "K": 192, "N": 128})[0]
winner = best["winner"]
print(f"matmul 256x192x128 matches numpy; winner {winner['config']} ({winner['seconds'] * 1e3:.3f} ms)")
