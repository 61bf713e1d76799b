"""ktune for Python: tune and launch CUDA C, OpenCL C and C kernels annotated
for ktune on PyTorch, CuPy and NumPy arrays.

    import ktune
    k = ktune.load("kernels/cuda/elementwise.cu")   # a Kernel
    k(x, y, z)                                      # the stored winner for x's size; tunes on a miss
    r = ktune.tune("kernels/c/matmul.c", dims={"M": 256, "N": 256, "K": 256}, budget=20)
    r.winner.values, r.winner.median_s
    r = ktune.tune(source=code, lang="c", inputs={"x": a}, expect={"y": b}, report="tuning.html")
    ktune.report("report.html")                     # every stored tuning

A thin binding over libktune: the C library does the work; errors are
exceptions carrying its messages (ktune.errors). A kernel call goes through
the C extension ktune._launch where it was built, else through ctypes:
``ktune.launch_path`` ("extension" or "ctypes") says which, and
``ktune.launch_path_reason`` why. See help(ktune.load), help(ktune.tune),
help(ktune.cache).
"""

from . import cache, errors
from ._context import backend_names
from ._kernel import Kernel, Param, launch_path, launch_path_reason, load
from ._lib import lib as _lib
from ._lib import library_path
from ._misc import devices, replay, space, strategies
from ._report import report
from ._tune import Configuration, TuneResult, tune
from .errors import (ArgumentError, BackendUnavailable, InternalError, Interrupted, InvalidInput, KtuneError,
                     KtuneIOError, NoValidConfiguration, NotFound, OutOfMemory, StoreError)

__version__ = _lib.kt_version().decode()

__all__ = ["load", "Kernel", "Param", "tune", "TuneResult", "Configuration", "cache", "report", "replay", "devices",
           "strategies", "space", "backend_names", "library_path", "launch_path", "launch_path_reason", "errors", "KtuneError", "InvalidInput",
           "ArgumentError", "NoValidConfiguration", "BackendUnavailable", "OutOfMemory", "KtuneIOError",
           "Interrupted", "NotFound", "StoreError", "InternalError"]
