"""Data and cuBLAS figures for bench/sgemm_h200.sh (fp32, C = A B, row-major).

  sgemm_ref.py data DIR M N K   A (M x K) and B (K x N) of small random
      integers (-4..4) as raw f32 files a.bin, b.bin, and c.bin = A B: every
      partial sum is an integer below 2^24, so fp32 holds it exactly in any
      summation order and every configuration must match c.bin bit for bit.
  sgemm_ref.py cublas M N K     torch.mm (cuBLAS SGEMM, TF32 off) timed as
      ktune times a configuration (30 samples of back-to-back calls between
      two CUDA events, median), on the same kind of integer data and on
      uniform random data; prints "integers S TFLOP/s" and "random S TFLOP/s".
"""
import sys

import torch

from gemm_wgmma_ref import median_seconds  # the same events timing as the bf16 bench


def integers(m, n, k, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randint(-4, 5, (m, k), device="cuda", generator=g).float()
    b = torch.randint(-4, 5, (k, n), device="cuda", generator=g).float()
    return a, b


def data(out, m, n, k):
    a, b = integers(m, n, k, 1234)
    c = (a.double() @ b.double()).float()
    for name, t in (("a", a), ("b", b), ("c", c)):
        t.contiguous().cpu().numpy().tofile(f"{out}/{name}.bin")


def cublas(m, n, k):
    torch.backends.cuda.matmul.allow_tf32 = False
    flop = 2.0 * m * n * k
    a, b = integers(m, n, k, 99)
    ra, rb = torch.rand(m, k, device="cuda") * 2 - 1, torch.rand(k, n, device="cuda") * 2 - 1
    assert torch.equal(a @ b, (a.double() @ b.double()).float()), "cuBLAS differs from the exact product"
    for name, (p, q) in (("integers", (a, b)), ("random", (ra, rb))):
        s = median_seconds(lambda: torch.mm(p, q), 3)
        print(f"{name} {s:.6e} {flop / s / 1e12:.1f}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "data":
        data(sys.argv[2], *map(int, sys.argv[3:6]))
    else:
        cublas(*map(int, sys.argv[2:5]))
