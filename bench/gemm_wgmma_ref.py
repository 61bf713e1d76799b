"""Data and cuBLAS figures for bench/gemm_wgmma_h200.sh.

  gemm_wgmma_ref.py data DIR M N K    random bf16 A (M x K), B (N x K) as raw
      files a.bin, b.bin, and c.bin = A B^T computed in fp32 by torch and
      rounded to bf16: what ktune verifies every configuration against.
  gemm_wgmma_ref.py cublas SIZES      torch.mm(a, b.t()) (cuBLAS) in bf16 for
      each "M=.. N=.. K=.." line of SIZES: median of CUDA-event timings after
      warm-up, rotating among input sets larger than the L2; prints
      "M N K seconds TFLOP/s" lines.
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


def median_seconds(fn, reps=50):
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e-3)
    times.sort()
    return times[len(times) // 2]


def cublas(sizes):
    for line in open(sizes):
        kv = dict(x.split("=") for x in line.split())
        m, n, k = int(kv["M"]), int(kv["N"]), int(kv["K"])
        sets = max(1, int(200e6 // (2 * (m * k + n * k + m * n))) + 1)
        ins = [(torch.randn(m, k, device="cuda").to(torch.bfloat16), torch.randn(n, k, device="cuda").to(torch.bfloat16))
               for _ in range(min(sets, 8))]
        i = [0]

        def run():
            a, b = ins[i[0] % len(ins)]
            i[0] += 1
            torch.mm(a, b.t())

        t = median_seconds(run)
        print(f"{m} {n} {k} {t:.6e} {2 * m * n * k / t / 1e12:.1f}", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "data":
        data(sys.argv[2], *map(int, sys.argv[3:6]))
    else:
        cublas(sys.argv[2])
