"""Data and cuBLAS figures for bench/gemm_wgmma_h200.sh.

  gemm_wgmma_ref.py data DIR M N K    random bf16 A (M x K), B (N x K) as raw
      files a.bin, b.bin, and c.bin = A B^T computed in fp32 by torch and
      rounded to bf16: what ktune verifies every configuration against.
  gemm_wgmma_ref.py cublas SIZES      torch.mm(a, b.t()) (cuBLAS) in bf16 for
      each "M=.. N=.. K=.." line of SIZES: median of CUDA-event timings after
      warm-up, timed as ktune times (see cublas below) and cold; prints
      "M N K seconds TFLOP/s cold_seconds" lines.
"""
import sys

import torch


def data(out, m, n, k):
    g = torch.Generator(device="cuda").manual_seed(1234)
    a = (torch.rand(m, k, device="cuda", generator=g) * 2 - 1).to(torch.bfloat16)
    b = (torch.rand(n, k, device="cuda", generator=g) * 2 - 1).to(torch.bfloat16)
    c = (a.float() @ b.float().t()).to(torch.bfloat16)
    for name, t in (("a", a), ("b", b), ("c", c)):
        t.contiguous().cpu().view(torch.int16).numpy().tofile(f"{out}/{name}.bin")


def median_seconds(fn, reps):
    """Median over 30 samples of REPS back-to-back calls between two CUDA
    events, per call: how ktune's timing loop measures a configuration."""
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(30):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(reps):
            fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e-3 / reps)
    times.sort()
    return times[len(times) // 2]


def cublas(sizes):
    """Two figures a shape: the same inputs back to back (as ktune times its
    configurations: launch gaps hidden, small operands warm in L2), and
    one call at a time rotating among input sets larger than the L2 (cold
    operands, each launch's overhead counted)."""
    for line in open(sizes):
        kv = dict(x.split("=") for x in line.split())
        m, n, k = int(kv["M"]), int(kv["N"]), int(kv["K"])
        sets = min(8, int(200e6 // (2 * (m * k + n * k + m * n))) + 1)
        ins = [(torch.randn(m, k, device="cuda").to(torch.bfloat16), torch.randn(n, k, device="cuda").to(torch.bfloat16))
               for _ in range(sets)]
        i = [0]

        def rotating():
            a, b = ins[i[0] % len(ins)]
            i[0] += 1
            torch.mm(a, b.t())

        a0, b0 = ins[0]
        reps = max(1, int(2e-3 / (2 * m * n * k / 700e12)))
        same = median_seconds(lambda: torch.mm(a0, b0.t()), reps)
        cold = median_seconds(rotating, 1)
        print(f"{m} {n} {k} {same:.6e} {2 * m * n * k / same / 1e12:.1f} {cold:.6e}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "data":
        data(sys.argv[2], *map(int, sys.argv[3:6]))
    else:
        cublas(sys.argv[2])
