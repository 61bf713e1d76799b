"""The PyTorch path (ktune reads a torch.Tensor's attributes directly: the
hot path) exercised without PyTorch: a stand-in module named torch whose
Tensor has the attributes ktune reads (dtype, get_device, is_contiguous,
data_ptr, shape), backed by NumPy on the CPU. tests/gpu/python_h200.sh runs
real tensors on the GPU."""

import sys
import types

import numpy as np
import pytest
from conftest import kernel_path

import ktune

# Every test twice: through the C extension and through ctypes (conftest.launch_path).
pytestmark = pytest.mark.usefixtures("launch_path")


class _DType:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


def _fake_torch():
    torch = types.ModuleType("torch")
    torch.float32, torch.float64, torch.int32 = _DType("float32"), _DType("float64"), _DType("int32")
    numpy_of = {"float32": np.float32, "float64": np.float64, "int32": np.int32}

    class Tensor:
        __module__ = "torch"

        def __init__(self, array):
            self.array = array
            self.dtype = getattr(torch, array.dtype.name)

        @property  # a data descriptor, as torch's shape is: the extension calls it directly
        def shape(self):
            return self.array.shape

        def get_device(self):
            return -1

        def is_contiguous(self):
            return self.array.flags.c_contiguous

        def data_ptr(self):
            return self.array.ctypes.data

    torch.Tensor = Tensor
    torch.numpy_of = numpy_of
    return torch


@pytest.fixture
def torch(monkeypatch):
    fake = _fake_torch()
    monkeypatch.setitem(sys.modules, "torch", fake)
    return fake


def test_tensors_launch_through_the_hot_path(torch, db):
    k = ktune.load(kernel_path("tests/kernels/scale.c"), db=db, miss="default")
    x = torch.Tensor(np.arange(8, dtype=np.float32))
    y = torch.Tensor(np.zeros(8, np.float32))
    k(x, y)  # the first call: the checked path
    np.testing.assert_array_equal(y.array, 2 * x.array)
    x.array[:] = 5
    calls = []
    original = k._call
    k._call = lambda *a: calls.append(a) or original(*a)
    k(x, y)  # a later call: the hot path, _call is not reached
    assert calls == []
    np.testing.assert_array_equal(y.array, 10 * np.ones(8, np.float32))


def test_tensor_errors_name_the_parameter(torch, db):
    k = ktune.load(kernel_path("tests/kernels/scale.c"), db=db, miss="default")
    x = torch.Tensor(np.zeros(8, np.float32))
    y = torch.Tensor(np.zeros(8, np.float32))
    k(x, y)
    with pytest.raises(ktune.ArgumentError, match="parameter x: expected dtype f32, got torch.float64"):
        k(torch.Tensor(np.zeros(8, np.float64)), y)  # a shape seen before: the hot path hands over to the checks
    with pytest.raises(ktune.ArgumentError, match="parameter y: expected a contiguous"):
        k(x, torch.Tensor(np.zeros(16, np.float32)[::2]))
    with pytest.raises(ktune.ArgumentError, match="parameter y: dimension 0 is 9, expected 8"):
        k(x, torch.Tensor(np.zeros(9, np.float32)))


def test_a_tensor_subclass(torch, db):
    """A subclass of torch.Tensor (nn.Parameter) is read by looking its
    attributes up, not through torch.Tensor's own descriptors."""

    class Parameter(torch.Tensor):
        def data_ptr(self):
            return self.array.ctypes.data

    k = ktune.load(kernel_path("tests/kernels/scale.c"), db=db, miss="default")
    x = Parameter(np.arange(4, dtype=np.float32))
    y = Parameter(np.zeros(4, np.float32))
    k(x, y)
    np.testing.assert_array_equal(y.array, 2 * x.array)
    with pytest.raises(ktune.ArgumentError, match="parameter y: expected dtype f32, got torch.float64"):
        k(x, Parameter(np.zeros(4, np.float64)))


def test_cuda_tensors_launch_on_torchs_current_stream(torch, db, no_gpu):
    """On the CUDA backend the stream is PyTorch's current one, read with
    torch._C._cuda_getCurrentRawStream(device) for the tensors' device. No
    GPU here: the launch itself then fails, with ktune's error, not a crash."""
    import types

    asked = []
    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda d: asked.append(d) or 0x5000)

    class CudaTensor(torch.Tensor):
        def get_device(self):
            return 0

    k = ktune.load(kernel_path("kernels/cuda/elementwise.cu"), db=db, miss="default")
    x, y, z = (CudaTensor(np.ones(64, np.float32)) for _ in range(3))
    with pytest.raises(ktune.KtuneError) as e:
        k(x, y, z)
    assert not isinstance(e.value, ktune.ArgumentError), e.value  # the arrays passed every check
    assert asked == [0]
    with pytest.raises(ktune.ArgumentError, match="parameter x: the array is on cuda:1, the kernel on cuda:0"):
        k(type("OtherDevice", (CudaTensor,), {"get_device": lambda self: 1})(np.ones(64, np.float32)), y, z)


def test_tensor_maps_are_built_by_ktune_not_passed(torch, db, no_gpu, launch_path):
    """gemm_wgmma.cu's amap and bmap are TMA tensor maps that kt_launch builds
    from a and b: the package lists them as such, the call passes nothing for
    them (the C path takes the kernel too), and a keyword for one is refused.
    No GPU here: the launch itself then fails, with ktune's error."""
    import types

    torch._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda d: 0x5000)
    torch.bfloat16 = _DType("bfloat16")

    class CudaBf16(torch.Tensor):
        def __init__(self, *shape):
            self.array = np.zeros(shape, np.uint16)
            self.dtype = torch.bfloat16

        def get_device(self):
            return 0

    k = ktune.load(kernel_path("kernels/cuda/gemm_wgmma.cu"), db=db, miss="default")
    assert [(p.name, p.mode) for p in k.params if not p.is_tensor] == [
        ("amap", "tensormap"), ("bmap", "tensormap"), ("m", "scalar"), ("n", "scalar"), ("k", "scalar")]
    assert k.launch_path == launch_path  # the extension did not hand the kernel to ctypes
    c, a, b = CudaBf16(128, 256), CudaBf16(128, 64), CudaBf16(256, 64)
    with pytest.raises(ktune.KtuneError) as e:
        k(c, a, b)
    assert not isinstance(e.value, ktune.ArgumentError), e.value  # the call passed every check
    with pytest.raises(ktune.ArgumentError, match="amap=: a tensor map that ktune builds from its tensor"):
        k(c, a, b, amap=0)
