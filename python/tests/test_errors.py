"""Every error path: a Python exception naming what is wrong, never a crash."""

import numpy as np
import pytest
from conftest import kernel_path

import ktune

# Every test twice: through the C extension and through ctypes (conftest.launch_path).
pytestmark = pytest.mark.usefixtures("launch_path")


@pytest.fixture
def matmul(db):
    return ktune.load(kernel_path("kernels/c/matmul.c"), db=db, miss="default")


def arrays(m=8, k=4, n=6, dtype=np.float32):
    return np.ones((m, k), dtype), np.ones((k, n), dtype), np.zeros((m, n), dtype)


def test_wrong_dtype_names_the_parameter(matmul):
    a, b, c = arrays()
    with pytest.raises(ktune.ArgumentError, match=r"parameter b: expected dtype f32, got f64 \(typestr <f8\)"):
        matmul(a, b.astype(np.float64), c)
    with pytest.raises(TypeError):  # an ArgumentError is a TypeError too
        matmul(a.astype(np.int32), b, c)


def test_wrong_rank(matmul):
    a, b, c = arrays()
    with pytest.raises(ktune.ArgumentError, match="parameter a: expected 2 dimensions, got 1"):
        matmul(a.ravel(), b, c)


def test_shape_mismatch_says_what_was_expected(matmul):
    a, b, c = arrays()
    with pytest.raises(ktune.ArgumentError,
                       match=r"parameter b: dimension 0 is 5, expected 4 \(shape \[K, N\] with K = 4 from a's dimension 1\)"):
        matmul(a, np.ones((5, 6), np.float32), c)
    with pytest.raises(ValueError, match="parameter c: dimension 1 is 7, expected 6"):
        matmul(a, b, np.zeros((8, 7), np.float32))


def test_non_contiguous(matmul):
    a, b, c = arrays(m=4, k=4, n=4)
    with pytest.raises(ktune.ArgumentError, match="parameter a: expected a contiguous row-major array"):
        matmul(a.T, b, c)
    with pytest.raises(ktune.ArgumentError, match="parameter c: expected a contiguous"):
        matmul(a, b, np.zeros((4, 8), np.float32)[:, ::2])


def test_read_only_output(matmul):
    a, b, c = arrays()
    c.setflags(write=False)
    with pytest.raises(ktune.ArgumentError, match="parameter c: the kernel writes it .out., but the array is read-only"):
        matmul(a, b, c)


def test_device_memory_on_the_cpu_backend(matmul):
    a, b, c = arrays()

    class FakeCudaArray:
        __cuda_array_interface__ = {"shape": (8, 4), "typestr": "<f4", "data": (0x1000, False), "version": 3,
                                    "strides": None}

    with pytest.raises(ktune.ArgumentError, match="parameter a: kernel matmul runs on the cpu backend.*got cuda:0"):
        matmul(FakeCudaArray(), b, c)


def test_not_an_array_and_wrong_argument_counts(matmul):
    a, b, c = arrays()
    with pytest.raises(ktune.ArgumentError, match="parameter a: expected an array of f32 .*got list"):
        matmul([[1.0]], b, c)
    with pytest.raises(ktune.ArgumentError, match="missing the array for c"):
        matmul(a, b)
    with pytest.raises(ktune.ArgumentError, match="takes 3 arrays and at most 3 scalars"):
        matmul(a, b, c, 1, 2, 3, 4)
    with pytest.raises(ktune.ArgumentError, match="bogus=: not a parameter or size of matmul"):
        matmul(a, b, c, bogus=1)
    with pytest.raises(ktune.ArgumentError, match="c=: a tensor: pass it by position; it is one of matmul"):
        matmul(a, b, c=c)
    with pytest.raises(ktune.ArgumentError, match="parameter m: given by position and as a keyword"):
        matmul(a, b, c, 8, m=8)


def test_bad_scalars(matmul):
    a, b, c = arrays()
    with pytest.raises(ktune.ArgumentError, match="parameter m: expected a value of type i32, got 'x'"):
        matmul(a, b, c, m="x")
    with pytest.raises(ktune.ArgumentError, match="parameter m: expected a value of type i32, got 1099511627776"):
        matmul(a, b, c, m=1 << 40)
    with pytest.raises(ktune.ArgumentError, match="expected a value of type i32, got 2.5"):
        matmul(a, b, c, m=2.5)


def test_empty_array(matmul):
    a, b, c = arrays()
    with pytest.raises(ktune.ArgumentError, match="dimension 0 is 0; sizes must be positive"):
        matmul(np.ones((0, 4), np.float32), b, np.zeros((0, 6), np.float32))


def test_bad_size_keyword(db):
    k = ktune.load(kernel_path("tests/kernels/shapes.c"), db=db, miss="default")
    with pytest.raises(ktune.ArgumentError, match="size K=-1: expected a positive integer"):
        k(np.ones(4, np.int32), np.ones(2, np.int32), K=-1)


def test_load_errors(tmp_path, db):
    with pytest.raises(ktune.InvalidInput, match="no_such.c"):
        ktune.load(str(tmp_path / "no_such.c"), db=db)
    bad = tmp_path / "bad.c"
    bad.write_text("// @autotune(X in [1, 4])\n// @kernel f(x: out tensor<f32>[N]\nvoid f(float *x) {}\n")
    with pytest.raises(ktune.InvalidInput, match=r"bad.c:2:\d+: error"):
        ktune.load(str(bad), db=db)
    with pytest.raises(ktune.NotFound, match="no kernel named 'nope'.*its kernels: matmul"):
        ktune.load(kernel_path("kernels/c/matmul.c"), kernel="nope", db=db)
    with pytest.raises(ktune.InvalidInput, match="backend='metal': expected one of 'cpu', 'opencl', 'cuda'"):
        ktune.load(kernel_path("kernels/c/matmul.c"), backend="metal")
    with pytest.raises(ktune.InvalidInput, match="miss='sometimes'"):
        ktune.load(kernel_path("kernels/c/matmul.c"), miss="sometimes")
    with pytest.raises(ktune.InvalidInput, match="budget=-3"):
        ktune.load(kernel_path("kernels/c/matmul.c"), budget=-3)


def test_cuda_kernel_without_a_gpu(db):
    """Here (no driver) the CUDA kernel loads; launching raises, never crashes."""
    k = ktune.load(kernel_path("kernels/cuda/elementwise.cu"), db=db, miss="default")
    assert k.backend == "cuda"
    x = np.ones(16, np.float32)
    with pytest.raises(ktune.ArgumentError, match="parameter x: kernel mul_add runs on the cuda backend .*needs a CUDA"):
        k(x, x, np.zeros(16, np.float32))


def test_tune_errors(db, tmp_path):
    path = kernel_path("kernels/c/matmul.c")
    with pytest.raises(ktune.InvalidInput, match="dims Q"):
        ktune.tune(path, dims={"Q": 4}, db=db)
    with pytest.raises(ktune.InvalidInput, match="dims M=0: sizes must be positive"):
        ktune.tune(path, dims={"M": 0}, db=db)
    with pytest.raises(ktune.InvalidInput, match="pin"):
        ktune.tune(path, pin={"NOPE": 4}, db=db)
    with pytest.raises(ktune.InvalidInput, match="strategy"):
        ktune.tune(path, strategy="guessing", db=db, budget=2)
    with pytest.raises(ktune.InvalidInput, match="budget='ten'"):
        ktune.tune(path, budget="ten", db=db)
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database" * 100)
    with pytest.raises(ktune.StoreError, match="garbage.db"):
        ktune.tune(path, dims={"M": 8, "N": 8, "K": 8}, db=str(garbage), budget=1)


def test_no_valid_configuration_carries_the_result(db, tmp_path):
    bad = tmp_path / "broken.c"
    bad.write_text("// @autotune(X in [1, 2])\n// @kernel f(x: out tensor<f32>[N])\n// @dims(N = 4)\n"
                   "void f(float *x) { this does not compile; }\n")
    with pytest.raises(ktune.NoValidConfiguration) as e:
        ktune.tune(str(bad), db=db)
    assert e.value.result is not None
    assert {c.status for c in e.value.result.configurations} == {"compile"}
    assert e.value.result.winner is None


def test_cache_and_replay_errors(db, tmp_path):
    with pytest.raises(ktune.NotFound):
        ktune.cache.show(kernel="matmul", db=db, format="defines")
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    with pytest.raises(ktune.InvalidInput):
        ktune.cache.import_(str(garbage), db=db)
    with pytest.raises(ktune.KtuneError):
        ktune.replay(str(garbage), budget=5)
    with pytest.raises(ktune.KtuneError):
        ktune.replay(str(tmp_path / "missing.json"), budget=5)


def test_library_not_found(tmp_path):
    import subprocess
    import sys

    env = dict(__import__("os").environ, KTUNE_LIBRARY=str(tmp_path / "libnothing.so"))
    r = subprocess.run([sys.executable, "-c", "import ktune"], env=env, capture_output=True, text=True)
    assert r.returncode != 0
    assert "cannot load libktune" in r.stderr and "KTUNE_LIBRARY" in r.stderr
