"""What an array is, read without copying: its address, shape, element type,
memory (host or a CUDA device) and whether it is laid out row-major without
gaps. Arrays come as PyTorch tensors (read directly, the fast path), through
__cuda_array_interface__ (CuPy, Numba), __array_interface__ (NumPy), DLPack
(__dlpack__) or the buffer protocol (bytearray, array.array, memoryview)."""

from __future__ import annotations

import ctypes
import sys
from typing import Any, NamedTuple, Optional, Tuple

HOST, CUDA = "host", "cuda"


class ArrayView(NamedTuple):
    ptr: int
    shape: Tuple[int, ...]
    dtype: Optional[str]  # ktune's name ("f32"); None for a type ktune has no name for
    dtype_shown: str  # the type as the array's library names it, for messages
    memory: str  # HOST or CUDA
    device: int  # CUDA device index (-1 on the host)
    contiguous: bool
    readonly: bool
    stream: Optional[int]  # the stream the array's library works on (CUDA), when it says
    keep: Any  # what must stay alive while the address is used


# NumPy-style type strings (byte order stripped) and buffer-protocol formats.
_TYPESTR = {"f2": "f16", "f4": "f32", "f8": "f64", "i1": "i8", "u1": "u8", "i4": "i32", "u4": "u32",
            "i8": "i64", "u8": "u64"}
_FORMAT = {("e", 2): "f16", ("f", 4): "f32", ("d", 8): "f64", ("b", 1): "i8", ("B", 1): "u8", ("i", 4): "i32",
           ("I", 4): "u32", ("l", 4): "i32", ("L", 4): "u32", ("l", 8): "i64", ("L", 8): "u64", ("q", 8): "i64",
           ("Q", 8): "u64"}
# DLPack (type code, bits): 0 int, 1 uint, 2 float, 4 bfloat.
_DLPACK = {(2, 16): "f16", (4, 16): "bf16", (2, 32): "f32", (2, 64): "f64", (0, 8): "i8", (1, 8): "u8",
           (0, 32): "i32", (1, 32): "u32", (0, 64): "i64", (1, 64): "u64"}
_TORCH_NAMES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "int8": "i8", "uint8": "u8",
                "int32": "i32", "uint32": "u32", "int64": "i64", "uint64": "u64"}
SIZES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "u8": 1, "i32": 4, "u32": 4, "i64": 8, "u64": 8}

_torch_dtypes: dict = {}


def torch_tensor_type():
    """torch.Tensor when torch is imported (never imported here)."""
    torch = sys.modules.get("torch")
    return getattr(torch, "Tensor", None) if torch else None


def torch_dtype_name(dt) -> Optional[str]:
    name = _torch_dtypes.get(dt)
    if name is None:
        name = _TORCH_NAMES.get(str(dt).replace("torch.", ""), "")
        _torch_dtypes[dt] = name
    return name or None


def c_contiguous(shape, strides, itemsize: int) -> bool:
    if strides is None:
        return True
    want = itemsize
    for extent, stride in zip(reversed(shape), reversed(strides)):
        if extent != 1 and stride != want:
            return False
        want *= extent
    return True


def from_torch(t) -> ArrayView:
    dev = t.get_device()  # -1 on the CPU
    name = torch_dtype_name(t.dtype)
    return ArrayView(t.data_ptr(), tuple(t.shape), name, str(t.dtype), CUDA if dev >= 0 else HOST, dev,
                     t.is_contiguous(), False, None, t)


def _from_interface(a, d: dict, memory: str) -> ArrayView:
    typestr = d["typestr"]
    name = _TYPESTR.get(typestr[1:]) if typestr[0] in "<|=" else None
    shape = tuple(d["shape"])
    ptr, readonly = d["data"]
    itemsize = int(typestr[2:]) if typestr[2:].isdigit() else 1
    device, stream = -1, None
    if memory == CUDA:
        device = _cuda_device_of(a)
        stream = d.get("stream")
    shown = f"{name} (typestr {typestr})" if name else f"typestr {typestr}"
    return ArrayView(ptr or 0, shape, name, shown, memory, device,
                     c_contiguous(shape, d.get("strides"), itemsize), bool(readonly), stream, a)


def _cuda_device_of(a) -> int:
    dev = getattr(a, "device", None)
    ident = getattr(dev, "id", None)
    if isinstance(ident, int):
        return ident
    if hasattr(a, "__dlpack_device__"):
        return int(a.__dlpack_device__()[1])
    return 0


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]

# DLPack device types: 1 CPU, 2 CUDA, 3 CUDA pinned host memory, 13 CUDA managed.
_DL_MEMORY = {1: HOST, 3: HOST, 2: CUDA, 13: CUDA}


def _from_dlpack(a) -> ArrayView:
    capsule = a.__dlpack__()
    # The capsule keeps its name "dltensor" (not consumed), so its destructor
    # still frees the tensor when the capsule goes: it is kept alive in `keep`.
    t = _DLTensor.from_address(_capsule_pointer(capsule, b"dltensor"))  # DLManagedTensor starts with a DLTensor
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] for i in range(t.ndim)) if t.strides else None
    bits = t.dtype.bits
    name = _DLPACK.get((t.dtype.code, bits)) if t.dtype.lanes == 1 else None
    memory = _DL_MEMORY.get(t.device.device_type, "device type %d" % t.device.device_type)
    contiguous = c_contiguous(shape, strides, 1) if strides is not None else True  # DLPack strides count elements
    return ArrayView((t.data or 0) + t.byte_offset, shape, name, "DLPack code %d bits %d" % (t.dtype.code, bits),
                     memory, t.device.device_id if memory == CUDA else -1, contiguous, False, None, (capsule, a))


def _from_buffer(a) -> ArrayView:
    m = memoryview(a)
    fmt = m.format.lstrip("@=<")
    name = _FORMAT.get((fmt, m.itemsize))
    if m.readonly:
        # ctypes gives no address for read-only memory: a copy, which is
        # right for an input (the kernel must not write it; an output that
        # is read-only is refused before this matters).
        keep = (ctypes.c_char * max(m.nbytes, 1)).from_buffer_copy(m.tobytes() or b"\0")
    else:
        keep = (ctypes.c_char * m.nbytes).from_buffer(m) if m.nbytes else None
    ptr = ctypes.addressof(keep) if keep is not None else 0
    return ArrayView(ptr, tuple(m.shape or ()), name, "format %r" % m.format, HOST, -1, m.c_contiguous, m.readonly,
                     None, (keep, m, a))


def view(a) -> Optional[ArrayView]:
    """The ArrayView of A, or None when A is no array ktune can read."""
    tensor = torch_tensor_type()
    if tensor is not None and isinstance(a, tensor):
        return from_torch(a)
    d = getattr(a, "__cuda_array_interface__", None)
    if d is not None:
        return _from_interface(a, d, CUDA)
    d = getattr(a, "__array_interface__", None)
    if d is not None:
        return _from_interface(a, d, HOST)
    if hasattr(a, "__dlpack__"):
        return _from_dlpack(a)
    try:
        return _from_buffer(a)
    except TypeError:
        return None


def describe(a) -> str:
    t = type(a)
    return t.__name__ if t.__module__ == "builtins" else "%s.%s" % (t.__module__, t.__name__)
