"""The two launch paths: the C extension ktune._launch (the default where it
is built) launches every valid call itself and hands every wrong one to the
checked Python path; the ctypes fallback can be asked for."""

import array

import numpy as np
import pytest
from conftest import kernel_path

import ktune

SCALE = kernel_path("tests/kernels/scale.c")


def test_the_default_launch_path_is_the_extension():
    assert ktune.launch_path == "extension", ktune.launch_path_reason
    assert "ktune._launch" in ktune.launch_path_reason


def test_a_kernel_says_its_launch_path(db, monkeypatch):
    assert ktune.load(SCALE, db=db, miss="default").launch_path == "extension"
    k = ktune.load(SCALE, db=db, miss="default", launch_path="ctypes")
    assert k.launch_path == "ctypes" and isinstance(k, ktune.Kernel)
    monkeypatch.setenv("KTUNE_LAUNCH_PATH", "ctypes")
    assert ktune.load(SCALE, db=db, miss="default").launch_path == "ctypes"
    assert ktune.load(SCALE, db=db, miss="default", launch_path="extension").launch_path == "extension"


def test_a_bad_launch_path(db, monkeypatch):
    with pytest.raises(ktune.InvalidInput, match="launch_path='cffi': expected 'extension' or 'ctypes'"):
        ktune.load(SCALE, db=db, launch_path="cffi")
    monkeypatch.setenv("KTUNE_LAUNCH_PATH", "fast")
    with pytest.raises(ktune.InvalidInput, match="KTUNE_LAUNCH_PATH='fast'"):
        ktune.load(SCALE, db=db)


def test_the_extension_launches_every_valid_call_itself(db):
    """Each array route and each way of giving a scalar or a size launches
    in C: nothing valid is handed to the Python path."""
    k = ktune.load(SCALE, db=db, miss="default", launch_path="extension")
    x = np.arange(6, dtype=np.float32)
    y = np.zeros(6, np.float32)
    k(x, y)
    np.testing.assert_array_equal(y, 2 * x)
    k(x, y, 3.0)  # a scalar by position
    np.testing.assert_array_equal(y, 3 * x)
    k(x, y, a=-1)  # by keyword, an int for an f32
    np.testing.assert_array_equal(y, -x)
    xa, ya = array.array("f", [1, 2, 3]), array.array("f", [0, 0, 0])
    k(xa, ya)  # the buffer protocol
    assert list(ya) == [2, 4, 6]
    k(memoryview(bytes(xa)).cast("f"), ya, a=1)  # a read-only input
    assert list(ya) == [1, 2, 3]

    class Interface:  # __array_interface__ without NumPy's type
        def __init__(self, a):
            self.a = a
            self.__array_interface__ = a.__array_interface__

    class OnlyDLPack:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__()

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    y[:] = 0
    k(Interface(x), Interface(y), a=4)
    np.testing.assert_array_equal(y, 4 * x)
    k(OnlyDLPack(x), OnlyDLPack(y))
    np.testing.assert_array_equal(y, 2 * x)
    shapes = ktune.load(kernel_path("tests/kernels/shapes.c"), db=db, miss="default", launch_path="extension")
    xi, h = np.arange(9, dtype=np.int32), np.zeros(5, np.int32)
    shapes(xi, h, K=4)  # a size as a keyword
    np.testing.assert_array_equal(h, xi[::2] * 4)
    assert k._launch_counts == {"launched": 7, "handed_over": 0}
    assert shapes._launch_counts == {"launched": 1, "handed_over": 0}


def test_the_extension_hands_wrong_calls_to_the_checks(db):
    k = ktune.load(SCALE, db=db, miss="default", launch_path="extension")
    x, y = np.ones(4, np.float32), np.zeros(4, np.float32)
    k(x, y)
    with pytest.raises(ktune.ArgumentError, match="parameter y: expected dtype f32"):
        k(x, y.astype(np.float64))
    with pytest.raises(ktune.ArgumentError, match="parameter a: expected a value of type f32"):
        k(x, y, a="not a number")
    with pytest.raises(ktune.ArgumentError, match="parameter y: dimension 0 is 5, expected 4"):
        k(x, np.zeros(5, np.float32))
    assert k._launch_counts == {"launched": 1, "handed_over": 3}
    y[:] = 0
    k(x, y)  # the array a wrong call named is launched as before
    np.testing.assert_array_equal(y, 2 * x)


def test_a_closed_kernel_does_not_launch(db):
    k = ktune.load(SCALE, db=db, miss="default", launch_path="extension")
    x, y = np.ones(4, np.float32), np.zeros(4, np.float32)
    k(x, y)
    k.close()
    with pytest.raises(ktune.KtuneError):
        k(x, y)


def test_many_shapes_and_threads(db):
    """The extension's table of shapes grows past its first slots, and
    threads calling one kernel at once each get their own results."""
    import threading

    k = ktune.load(SCALE, db=db, miss="default", launch_path="extension")
    for n in range(1, 60):
        x = np.arange(n, dtype=np.float32)
        y = np.zeros(n, np.float32)
        k(x, y, a=n)
        np.testing.assert_array_equal(y, n * x)
    failures = []

    def work(t):
        x = np.full(7 + t % 3, t, np.float32)
        for i in range(300):
            y = np.zeros_like(x)
            k(x, y, a=i)
            if not (y == i * t).all():
                failures.append((t, i, y))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert k._launch_counts["handed_over"] == 0


def test_a_kernel_the_extension_cannot_take_is_checked_in_python(db, tmp_path):
    """A tensor of a rank above the extension's 16: the kernel says ctypes,
    and its calls are checked and launched in Python."""
    src = tmp_path / "rank17.c"
    src.write_text(f"// @autotune(U in [1, 2])\n// @kernel fill(x: out tensor<f32>[{', '.join(['N'] * 17)}])\n"
                   "// @dims(N = 1)\nvoid fill(float *x) { x[0] = 7; }\n")
    k = ktune.load(str(src), db=db, miss="default")
    assert k.launch_path == "ctypes"
    x = np.zeros((1,) * 17, np.float32)
    k(x)
    assert x.ravel()[0] == 7
