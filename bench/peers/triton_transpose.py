#!/usr/bin/env python3
"""Triton's @triton.autotune transpose beside kt_launch's tune-on-miss (bench/miss_sizes_h200.sh).

    triton_transpose.py R...

out = in transposed for an R x R f32 matrix, as one @triton.jit kernel under
@triton.autotune keyed on the shape: tiles of 32 or 64 rows by 32, 64 or 128
columns with 2 to 16 warps (CONFIGS), as a Triton user would write it. For
each R, with a fresh kernel cache: the first call's wall time (compiles and
benchmarks every configuration), then the winner's kernel time (median of 51
launches, each between CUDA events) and the output checked against torch's
transpose (poisoned first). Triton's one-time start-up (driver, launcher) is
paid before the first clock by an unrelated small kernel. Prints
"result NAME VALUE" lines.
"""
import os
import sys
import tempfile
import time

os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton-cache-")

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

CONFIGS = [triton.Config({"BM": m, "BN": n}, num_warps=w)
           for m in (32, 64) for n in (32, 64, 128) for w in (2, 4, 8, 16) if m * n // (32 * w) >= 4]


@triton.jit
def warm_up(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) + 1)


@triton.autotune(configs=CONFIGS, key=["rows", "cols"])
@triton.jit
def transpose(src, dst, rows, cols, BM: tl.constexpr, BN: tl.constexpr):
    r = tl.program_id(1) * BM + tl.arange(0, BM)[:, None]
    c = tl.program_id(0) * BN + tl.arange(0, BN)[None, :]
    mask = (r < rows) & (c < cols)
    tile = tl.load(src + r.to(tl.int64) * cols + c, mask=mask)
    tl.store(dst + c.to(tl.int64) * rows + r, tile, mask=mask)


def call(x, y, rows, cols):
    transpose[lambda m: (triton.cdiv(cols, m["BN"]), triton.cdiv(rows, m["BM"]))](x, y, rows, cols)


def main():
    warm_up[(1,)](torch.zeros(1, device="cuda"))
    torch.cuda.synchronize()
    print(f"result triton_configs {len(CONFIGS)}")
    for r in (int(a) for a in sys.argv[1:]):
        x = torch.rand(r, r, device="cuda")
        y = torch.full((r, r), float("nan"), device="cuda")
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        call(x, y, r, r)
        torch.cuda.synchronize()
        first = time.perf_counter() - t0
        if not torch.equal(y, x.t()):
            sys.exit(f"triton: wrong transpose for R={r}")
        times = []
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        y.fill_(float("nan"))
        for _ in range(51):
            e0.record()
            call(x, y, r, r)
            e1.record()
            e1.synchronize()
            times.append(e0.elapsed_time(e1) * 1e3)
        if not torch.equal(y, x.t()):
            sys.exit(f"triton: wrong transpose for R={r} after tuning")
        times.sort()
        print(f"result triton_R={r}_first_call_s {first:.4f}")
        print(f"result triton_R={r}_winner_kernel_us {times[25]:.2f}")
        print(f"result triton_R={r}_winner {transpose.best_config}")
        del x, y
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
