"""Replacing a Triton @triton.autotune kernel with a CUDA C kernel tuned by
ktune: z = x * y + x on PyTorch tensors.

Before (Triton): the configurations are listed in Python and tried on the
first call of every new key, in the process:

    @triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w)
                              for b in (256, 512, 1024, 2048, 4096) for w in (2, 4, 8)], key=["n"])
    @triton.jit
    def mul_add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(z_ptr + offs, x * y + x, mask=mask)

    def mul_add(x, y):
        z = torch.empty_like(x)
        grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)
        mul_add_kernel[grid](x, y, z, x.numel())
        return z

After (ktune): the kernel is CUDA C (kernels/cuda/elementwise.cu), its
space is the comment above it (@autotune(BLOCK in [128, 1024], VEC in
[1, 2, 4, 8])), every configuration's output is checked against the
default's, and the winner per size is kept in the results database for
every later process:

    mul_add_kernel = ktune.load("kernels/cuda/elementwise.cu")

    def mul_add(x, y):
        z = torch.empty_like(x)
        mul_add_kernel(x, y, z)     # N from x's shape; PyTorch's current stream
        return z

Tune before the process first uses CUDA (here: before the first CUDA
tensor), or with `ktune tune` beforehand: the tuner's worker processes
cannot use the GPU once this process has initialised the driver, and a miss
then launches the nearest stored size's winner (docs/DESIGN.md, "Known
limitations").

    python examples/python/triton_to_ktune.py [N]     (needs PyTorch with CUDA; Triton optional)
"""

import os
import sys
import time

import ktune

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNEL = os.path.join(ROOT, "kernels/cuda/elementwise.cu")


def main(n: int) -> None:
    result = ktune.tune(KERNEL, dims={"N": n}, budget=40)  # before torch touches the GPU
    print(f"ktune: tuned mul_add for N={n}: {result.winner.pin()}, {result.winner.median_s * 1e6:.1f} us "
          f"({result.speedup_over_default:.2f}x the default)")

    import torch

    mul_add_kernel = ktune.load(KERNEL)

    def mul_add(x, y):
        z = torch.empty_like(x)
        mul_add_kernel(x, y, z)
        return z

    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    z = mul_add(x, y)
    torch.testing.assert_close(z, x * y + x)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(1000):
        mul_add(x, y)
    torch.cuda.synchronize()
    print(f"ktune: matches torch; {(time.perf_counter() - t0) * 1e3:.1f} us per call (1000 calls, with the kernel)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24)
