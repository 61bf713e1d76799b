"""ktune.load and launching on NumPy arrays: the CPU backend and PoCL."""

import array

import numpy as np
import pytest
from conftest import kernel_path

import ktune

# Every test twice: through the C extension and through ctypes (conftest.launch_path).
pytestmark = pytest.mark.usefixtures("launch_path")


def test_load_describes_the_kernel(db):
    k = ktune.load(kernel_path("kernels/c/matmul.c"), db=db)
    assert k.name == "matmul" and k.backend == "cpu"
    assert [p.name for p in k.params] == ["a", "b", "c", "m", "n", "k"]
    assert [p.mode for p in k.params] == ["in", "in", "out", "scalar", "scalar", "scalar"]
    assert k.params[0].dtype == "f32" and k.params[0].ndims == 2
    assert k.sizes == ["M", "K", "N"]
    assert "matmul" in repr(k)


def test_help_of_load_is_useful():
    doc = ktune.load.__doc__.lower()
    for word in ("miss", "budget", "backend", "example", "k(x, y, z)"):
        assert word in doc
    assert ktune.load.__annotations__["return"] in ("Kernel", ktune.Kernel)


def test_transpose_tunes_on_a_miss_then_launches_the_winner(db):
    k = ktune.load(kernel_path("kernels/c/transpose.c"), db=db, budget=3)
    a = np.random.default_rng(1).random((48, 80), dtype=np.float32)
    out = np.zeros((80, 48), np.float32)
    k(a, out)
    np.testing.assert_array_equal(out, a.T)
    keys = ktune.cache.list(kernel="transpose", db=db)
    assert len(keys) == 1 and keys[0]["sizes"] == "R=48 C=80"
    out2 = np.zeros_like(out)
    k(a, out2)  # the stored winner, from the table
    np.testing.assert_array_equal(out2, a.T)


def test_online_miss_times_the_verified_configurations_on_the_calls(db):
    """miss="online": every call's output right while the verified
    configurations are timed on the calls; the winner is then stored."""
    import time

    k = ktune.load(kernel_path("kernels/c/transpose.c"), db=db, budget=3, miss="online")
    a = np.random.default_rng(2).random((48, 80), dtype=np.float32)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        out = np.full((80, 48), np.nan, np.float32)
        k(a, out)
        np.testing.assert_array_equal(out, a.T)
        keys = ktune.cache.list(kernel="transpose", db=db)
        if keys and keys[0].get("winner"):
            break
        time.sleep(0.01)
    keys = ktune.cache.list(kernel="transpose", db=db)
    assert len(keys) == 1 and keys[0].get("winner"), keys


def test_miss_names_every_policy():
    with pytest.raises(ktune.InvalidInput, match="'background', 'online'"):
        ktune.load(kernel_path("kernels/c/transpose.c"), miss="sometimes")


def _helpers_of_this_process():
    """Pids of the ktune-tuner processes this process started."""
    import os

    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"ktune-tuner" in cmd:
            found.append(int(pid))
    return found


def test_prepare_starts_the_helper_before_the_first_miss(db):
    import time

    k = ktune.load(kernel_path("kernels/c/transpose.c"), db=db, budget=3)
    # An earlier test's warm helper (5 s idle) would serve this miss: none left first.
    deadline = time.monotonic() + 15
    while _helpers_of_this_process() and time.monotonic() < deadline:
        time.sleep(0.1)
    before = _helpers_of_this_process()
    assert before == []
    k.prepare()
    # The helper is forked at once; its command line names ktune-tuner only once
    # it has exec'd, so give it a moment to show.
    deadline = time.monotonic() + 5
    while not _helpers_of_this_process() and time.monotonic() < deadline:
        time.sleep(0.01)
    started = _helpers_of_this_process()
    assert len(started) == 1  # waiting for the first miss
    a = np.random.default_rng(2).random((40, 24), dtype=np.float32)
    out = np.zeros((24, 40), np.float32)
    k(a, out)  # tuned by that helper
    np.testing.assert_array_equal(out, a.T)
    assert _helpers_of_this_process() == started  # no other helper started


def test_matmul_matches_numpy_at_two_shapes(db):
    k = ktune.load(kernel_path("kernels/c/matmul.c"), db=db, budget=2)
    rng = np.random.default_rng(2)
    for m, kk, n in ((32, 48, 16), (17, 9, 33)):
        a = rng.random((m, kk), dtype=np.float32)
        b = rng.random((kk, n), dtype=np.float32)
        c = np.full((m, n), np.nan, np.float32)
        k(a, b, c)
        np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_scalars_bound_positional_and_by_keyword(db):
    k = ktune.load(kernel_path("tests/kernels/scale.c"), db=db, miss="default")
    x = np.arange(10, dtype=np.float32)
    y = np.zeros(10, np.float32)
    k(x, y)  # a = 2 from @kernel
    np.testing.assert_array_equal(y, 2 * x)
    k(x, y, a=-0.5)
    np.testing.assert_array_equal(y, -0.5 * x)
    k(x, y, 3.0)  # scalars after the tensors, in @kernel order
    np.testing.assert_array_equal(y, 3 * x)


def test_a_computed_dimension_and_a_size_given_as_keyword(db):
    k = ktune.load(kernel_path("tests/kernels/shapes.c"), db=db, miss="default")
    x = np.arange(9, dtype=np.int32)
    h = np.zeros(5, np.int32)
    k(x, h, K=4)
    np.testing.assert_array_equal(h, x[::2] * 4)
    with pytest.raises(ktune.ArgumentError, match="runtime size K .* give K explicitly"):
        k(x, h)


def test_buffer_protocol_and_dlpack(db):
    k = ktune.load(kernel_path("tests/kernels/scale.c"), db=db, miss="default")
    x = array.array("f", [1, 2, 3, 4])
    y = array.array("f", [0, 0, 0, 0])
    k(x, y)
    assert list(y) == [2, 4, 6, 8]
    k(memoryview(bytes(x)).cast("f"), y, a=1)  # read-only input: accepted (copied), never written
    assert list(y) == [1, 2, 3, 4]

    class OnlyDLPack:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    xs = np.arange(6, dtype=np.float32)
    ys = np.zeros(6, np.float32)
    k(OnlyDLPack(xs), OnlyDLPack(ys))
    np.testing.assert_array_equal(ys, 2 * xs)


def test_opencl_transpose_on_pocl(db, has_opencl):
    if not has_opencl:
        pytest.skip("no OpenCL device (install pocl-opencl-icd)")
    k = ktune.load(kernel_path("kernels/opencl/transpose.cl"), db=db, budget=3)
    assert k.backend == "opencl"
    a = np.random.default_rng(3).random((40, 72), dtype=np.float32)
    out = np.zeros((72, 40), np.float32)
    k(a, out)  # tunes (PoCL), then copies through the backend's buffers
    np.testing.assert_array_equal(out, a.T)
    out[:] = 0
    k(a, out)
    np.testing.assert_array_equal(out, a.T)


def test_hot_path_host_time(db):
    """The host time of a later call stays small (the figure of
    docs/BENCHMARKS.md; a loose bound here, the machine is shared)."""
    import time

    k = ktune.load(kernel_path("tests/kernels/scale.c"), db=db, miss="default")
    x = np.ones(1, np.float32)
    y = np.zeros(1, np.float32)
    k(x, y)
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        k(x, y)
    per_call = (time.perf_counter() - t0) / n
    assert per_call < 200e-6, per_call


def test_the_readme_example_runs(tmp_path):
    """examples/python/numpy_matmul.py, the README's Python example."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    env = dict(os.environ, KTUNE_DB=str(tmp_path / "results.db"))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples/python/numpy_matmul.py")], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "matches numpy; winner TILE_M=" in r.stdout


def test_cuda_array_interface_and_cupys_stream(db, monkeypatch, no_gpu):
    """On the CUDA backend, objects with __cuda_array_interface__ pass every
    check; CuPy's take CuPy's current stream (asked once per call), others
    the interface's. No GPU here: the launch then fails with ktune's error."""
    import sys
    import types

    asked = []
    cupy = types.ModuleType("cupy")
    cupy.cuda = types.SimpleNamespace(get_current_stream=lambda: asked.append(1) or types.SimpleNamespace(ptr=0x6000))
    monkeypatch.setitem(sys.modules, "cupy", cupy)

    def device_array(module, n=64):
        a = type("ndarray", (), {"__module__": module})()
        a.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (0x10000, False), "version": 3,
                                      "strides": None, "stream": 1}
        return a

    k = ktune.load(kernel_path("kernels/cuda/elementwise.cu"), db=db, miss="default")
    for module in ("cupy", "numba.cuda"):
        with pytest.raises(ktune.KtuneError) as e:
            k(device_array(module), device_array(module), device_array(module))
        assert not isinstance(e.value, ktune.ArgumentError), e.value  # every check passed
    assert asked == [1]
    with pytest.raises(ktune.ArgumentError, match="parameter y: dimension 0 is 32, expected 64"):
        k(device_array("cupy"), device_array("cupy", 32), device_array("cupy"))


def test_threads_launch_new_shapes_through_one_kernel(db):
    # The GIL is released around kt_launch: threads launch side by side, each
    # shape new to one of them, every output right.
    import threading
    k = ktune.load(kernel_path("tests/kernels/scale.c"), db=db, miss="default")
    wrong = []

    def run(tid):
        rng = np.random.default_rng(tid)
        for i in range(120):
            n = (i * 7 + tid * 31) % 120 + 1
            x = rng.random(n, dtype=np.float32)
            y = np.full(n, -1, np.float32)
            k(x, y)
            if not np.array_equal(y, 2 * x):
                wrong.append((tid, n))

    threads = [threading.Thread(target=run, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []
