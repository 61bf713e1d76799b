"""ktune.load and the Kernel it returns: a kernel called like a function on
arrays, launching the stored winner for the arrays' sizes."""

from __future__ import annotations

import ctypes
import os
import struct
import sys
import threading
from ctypes import POINTER, c_int, c_int64, c_void_p
from typing import Any, Dict, List, Optional, Union

from . import _arrays, errors
from ._context import Context, PathLike, budget_options
from ._lib import ParamInfo, TuneOptions, kernel_p, lib

_MODES = {0: "scalar", 1: "in", 2: "out", 3: "inout", 4: "tensormap"}
_MEMORY = {0: _arrays.HOST, 1: _arrays.CUDA}  # kt_memory_kind
# struct formats of scalar types; bf16 is packed by hand (the top half of an f32).
_PACK = {"f16": "e", "f32": "f", "f64": "d", "i8": "b", "u8": "B", "i32": "i", "u32": "I", "i64": "q", "u64": "Q"}
_CU_STREAM_LEGACY = 1  # CUDA's handle for the legacy default stream (stream 0 in PyTorch and CuPy)
_HOST_HINT = "a NumPy array, a CPU torch tensor or any buffer"
_CUDA_HINT = "a CUDA torch tensor, a CuPy array or any __cuda_array_interface__ / DLPack CUDA array"

# The per-call path: the C extension ktune._launch when it was built (its
# Launcher is then Kernel's base type, and calling a kernel is its tp_call),
# else ctypes (Kernel._ctypes_call). ktune.launch_path says which.
try:
    from . import _launch as _ext

    launch_path_reason = "the C extension ktune._launch"
except ImportError as _e:
    _ext = None
    if any(f.startswith("_launch.") and f.endswith(".so") for f in os.listdir(os.path.dirname(__file__))):
        launch_path_reason = f"ktune._launch is there but does not import ({_e}): reinstall (pip install ./python)"
    else:
        launch_path_reason = ("ktune._launch is not built: pip install ./python builds it where Python's headers "
                              "are (apt-get install python3-dev); calls go through ctypes")
#: "extension" or "ctypes": how ktune.load's kernels are called by default.
launch_path = "extension" if _ext else "ctypes"
_Base = _ext.Launcher if _ext else object
_LAUNCH_PATHS = ("extension", "ctypes")


def _chosen_launch_path(asked: Optional[str]) -> str:
    """LAUNCH_PATH of ktune.load, else $KTUNE_LAUNCH_PATH, else the default."""
    where = "launch_path="
    if asked is None:
        asked, where = os.environ.get("KTUNE_LAUNCH_PATH") or None, "KTUNE_LAUNCH_PATH="
    if asked is None:
        return launch_path
    if asked not in _LAUNCH_PATHS:
        raise errors.InvalidInput(f"{where}{asked!r}: expected 'extension' or 'ctypes'")
    if asked == "extension" and _ext is None:
        raise errors.InvalidInput(f"{where}'extension': {launch_path_reason}")
    return asked


class Param:
    """One @kernel parameter: ``name``, ``mode`` ("in", "out", "inout",
    "scalar" or "tensormap": a TMA tensor map that ktune builds from its
    tensor, so the call passes nothing for it), ``dtype`` ("f32"...; a
    tensor map's is its tensor's), ``ndims`` (a tensor's rank) and
    ``has_value`` (a scalar that ktune computes from the sizes)."""

    __slots__ = ("index", "name", "mode", "dtype", "elem_size", "ndims", "has_value")

    def __init__(self, index: int, info: ParamInfo):
        self.index = index
        self.name = info.name.decode()
        self.mode = _MODES[info.mode]
        self.dtype = info.dtype.decode()
        self.elem_size = info.elem_size
        self.ndims = info.ndims
        self.has_value = bool(info.has_value)

    @property
    def is_tensor(self) -> bool:
        return self.mode in ("in", "out", "inout")

    def __repr__(self) -> str:
        kind = (f"{self.mode} tensor<{self.dtype}> of rank {self.ndims}" if self.is_tensor else
                "tensor map (built by ktune)" if self.mode == "tensormap" else f"{self.dtype}")
        return f"<ktune.Param {self.name}: {kind}>"


def _pack_scalar(p: Param, value: Any) -> ctypes.Array:
    try:
        if p.dtype == "bf16":
            data = struct.pack("<f", float(value))[2:]
        else:
            fmt = _PACK[p.dtype]
            if fmt in "efd":
                value = float(value)
            elif isinstance(value, float) or not hasattr(value, "__index__"):
                raise TypeError
            data = struct.pack("<" + fmt, value)
    except (struct.error, TypeError, ValueError, OverflowError):
        raise errors.ArgumentError(
            f"parameter {p.name}: expected a value of type {p.dtype}, got {value!r}") from None
    buf = ctypes.create_string_buffer(data, 8)
    return buf


class _Shape:
    """What a shape (the arrays' shapes and the sizes given) launches with:
    kt_launch's sizes and the scalar values ktune binds."""

    __slots__ = ("sizes", "scalars", "argv", "launched")

    def __init__(self, sizes, scalars, nparams: int):
        self.sizes = sizes
        self.scalars = scalars
        # kt_launch's argument array with the bound scalars' addresses in
        # place; each call writes only the tensors' addresses.
        self.argv = (c_void_p * max(nparams, 1))()
        for i, buf in scalars.items():
            self.argv[i] = ctypes.addressof(buf)
        self.launched = False


class Kernel(_Base):
    """An annotated kernel loaded from a file, called like a function.

    ``k(x, y, z)`` launches the stored winner for the arrays' sizes (read
    from the shapes on the @kernel line) and tunes on a miss as ``miss``
    says; ``objective`` ("time", "energy", "edp") is which stored winner it
    launches, and what a miss tunes for. Tensors are given by position in @kernel order; scalars follow
    them by position or come as keywords, else from their @kernel expression
    (``n: i32 = N``); a runtime size no shape gives comes as a keyword too
    (``K=64``). On the CUDA backend arrays must be on the kernel's device and
    the launch is asynchronous on the current stream of PyTorch or CuPy; on
    the CPU and OpenCL backends arrays are host memory and the call returns
    when the kernel is done.

    ``launch_path`` is "extension" (the C extension ktune._launch reads,
    checks and launches) or "ctypes" (the Python fallback); both raise the
    same errors.
    """

    def __new__(cls, *args: Any, **kwargs: Any):
        # A kernel called through ctypes while the extension is built is a
        # _CtypesKernel, whose Python __call__ replaces the extension's.
        if cls is Kernel and _ext is not None and _chosen_launch_path(kwargs.get("launch_path")) == "ctypes":
            cls = _CtypesKernel
        return _Base.__new__(cls)

    def __init__(self, path: Optional[PathLike] = None, kernel: Optional[str] = None, *,
                 source: Optional[str] = None, lang: Optional[str] = None, backend: Optional[str] = None,
                 device: int = 0, db: Optional[PathLike] = None, no_db: bool = False, miss: str = "tune",
                 budget: Union[int, str, None] = None, strategy: Optional[str] = None, quiet: bool = True,
                 jobs: int = 0, launch_path: Optional[str] = None, objective: str = "time"):
        chosen = _chosen_launch_path(launch_path)
        self.launch_path = "ctypes" if _ext is None or isinstance(self, _CtypesKernel) else chosen
        self._miss_tune = TuneOptions()
        budget_options(self._miss_tune, budget)
        self._strategy = strategy.encode() if strategy else None
        self._miss_tune.strategy = self._strategy
        self._ctx = Context(backend, device, db, no_db, quiet, jobs, miss, self._miss_tune, objective)
        self._handle = kernel_p()  # null until loaded: close() on a failed load frees nothing
        self._handle = self._ctx.load(path, kernel, source, lang)
        self._source, self._lang = source, lang
        self.path = "<source>" if path is None else str(path)
        self.name: str = lib.kt_kernel_name(self._handle).decode()
        self.backend: str = lib.kt_kernel_backend(self._handle).decode()
        self.device = device
        self.params: List[Param] = []
        for i in range(lib.kt_kernel_num_params(self._handle)):
            info = ParamInfo()
            self._ctx.check(lib.kt_kernel_param(self._handle, i, ctypes.byref(info)))
            self.params.append(Param(i, info))
        self.sizes: List[str] = [lib.kt_kernel_size_name(self._handle, i).decode()
                                 for i in range(lib.kt_kernel_num_sizes(self._handle))]
        self._tensors = [p for p in self.params if p.is_tensor]
        self._scalars = [p for p in self.params if p.mode == "scalar"]  # tensor maps: kt_launch builds them
        self._by_name = {p.name: p for p in self.params}
        self._memory = _MEMORY[lib.kt_kernel_memory(self._handle)]
        n = len(self.params)
        self._ntensors = len(self._tensors)
        self._want_device = device if self._memory == _arrays.CUDA else -1
        self._ranks = (c_int * max(n, 1))(*[p.ndims for p in self.params])
        self._shapes: Dict[tuple, _Shape] = {}
        self._lock = threading.Lock()
        if self.launch_path == "extension":
            try:
                self._setup_extension()
            except ValueError:  # more parameters or a higher rank than it takes: every call checked in Python
                self.launch_path = "ctypes"
        self._refresh_types()

    def _setup_extension(self) -> None:
        """The per-kernel metadata of the C path, prepared once."""
        from ._lib import lib_handle

        tensors = tuple((p.index, p.ndims, p.mode != "in", p.dtype, p.name) for p in self._tensors)
        scalars = tuple((p.index, p.dtype, p.has_value, p.name) for p in self._scalars)
        self._ext_setup(lib_handle, self._handle.value, self._memory == _arrays.CUDA, self.device, len(self.params),
                        tensors, scalars, tuple(self.sizes))

    # ---- arrays -------------------------------------------------------

    def _view(self, p: Param, a: Any) -> _arrays.ArrayView:
        v = _arrays.view(a)
        if v is None:
            hint = _CUDA_HINT if self._memory == _arrays.CUDA else _HOST_HINT
            raise errors.ArgumentError(f"parameter {p.name}: expected an array of {p.dtype} ({hint}), "
                                       f"got {_arrays.describe(a)}")
        if v.dtype != p.dtype:
            raise errors.ArgumentError(f"parameter {p.name}: expected dtype {p.dtype}, got {v.dtype_shown}")
        if v.memory != self._memory:
            where = f"{self.backend} backend" + (f" (device {self.device})" if self._memory == _arrays.CUDA else "")
            want = _CUDA_HINT if self._memory == _arrays.CUDA else _HOST_HINT
            got = f"cuda:{v.device} memory" if v.memory == _arrays.CUDA else f"{v.memory} memory"
            raise errors.ArgumentError(f"parameter {p.name}: kernel {self.name} runs on the {where}, which needs "
                                       f"{want}; got {got} ({_arrays.describe(a)})")
        if self._memory == _arrays.CUDA and v.device != self.device:
            raise errors.ArgumentError(f"parameter {p.name}: the array is on cuda:{v.device}, the kernel on cuda:"
                                       f"{self.device} (ktune.load(..., device={v.device}) for that device)")
        if not v.contiguous:
            raise errors.ArgumentError(f"parameter {p.name}: expected a contiguous row-major array (shape "
                                       f"{list(v.shape)}); this one is strided: pass a contiguous copy "
                                       "(.contiguous(), numpy.ascontiguousarray)")
        if v.readonly and p.mode != "in":
            raise errors.ArgumentError(f"parameter {p.name}: the kernel writes it ({p.mode}), but the array is "
                                       "read-only")
        if len(v.shape) != p.ndims:
            raise errors.ArgumentError(f"parameter {p.name}: expected {p.ndims} dimension"
                                       f"{'' if p.ndims == 1 else 's'}, got {len(v.shape)} (shape {list(v.shape)})")
        return v

    def _bind(self, args: tuple, kwargs: dict):
        """Views of the tensors, the scalars given, the sizes given."""
        for key in kwargs:
            if key in self._by_name and self._by_name[key].is_tensor:
                raise errors.ArgumentError(f"{key}=: a tensor: pass it by position; it is one of {self.name}'s "
                                           f"arrays ({', '.join(p.name for p in self._tensors)}, in this order)")
        if len(args) < len(self._tensors):
            missing = ", ".join(p.name for p in self._tensors[len(args):])
            raise errors.ArgumentError(f"kernel {self.name}: missing the array{'s' if len(args) + 1 < len(self._tensors) else ''} "
                                       f"for {missing} (tensors come by position, in @kernel order)")
        if len(args) > len(self._tensors) + len(self._scalars):
            raise errors.ArgumentError(f"kernel {self.name} takes {len(self._tensors)} arrays and at most "
                                       f"{len(self._scalars)} scalars by position; got {len(args)} arguments")
        views = [self._view(p, a) for p, a in zip(self._tensors, args)]
        given: Dict[int, Any] = {p.index: v for p, v in zip(self._scalars, args[len(self._tensors):])}
        sizes_given: Dict[str, int] = {}
        for key, value in kwargs.items():
            p = self._by_name.get(key)
            if p is not None and p.mode == "scalar":
                if p.index in given:
                    raise errors.ArgumentError(f"parameter {key}: given by position and as a keyword")
                given[p.index] = value
            elif key in self.sizes and p is None:
                if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                    raise errors.ArgumentError(f"size {key}={value!r}: expected a positive integer")
                sizes_given[key] = value
            else:
                what = ("not a parameter or size" if p is None else
                        "a tensor map that ktune builds from its tensor: pass nothing for it; it is one"
                        if p.mode == "tensormap" else "a tensor: pass it by position; it is one")
                names = ", ".join([q.name for q in self._scalars] + self.sizes) or "(none)"
                raise errors.ArgumentError(f"{key}=: {what} of {self.name} (keywords: {names})")
        return views, given, sizes_given

    def _shape(self, views, sizes_given: Dict[str, int]) -> _Shape:
        """The sizes and bound scalars of these shapes (cached per shape)."""
        key = (tuple(v.shape for v in views), tuple(sorted(sizes_given.items())))
        s = self._shapes.get(key)
        if s is not None:
            return s
        n = len(self.params)
        rows = (POINTER(c_int64) * max(n, 1))()
        for p, v in zip(self._tensors, views):
            rows[p.index] = (c_int64 * max(len(v.shape), 1))(*v.shape)
        sizes = (c_int64 * max(len(self.sizes), 1))(*[sizes_given.get(name, 0) for name in self.sizes])
        rc = lib.kt_kernel_sizes_from_shapes(self._handle, self._ranks, rows, sizes)
        if rc != 0:
            raise errors.ArgumentError(self._ctx.errmsg())
        scalars = {}
        for p in self._scalars:
            if p.has_value:
                buf = ctypes.create_string_buffer(8)
                self._ctx.check(lib.kt_kernel_scalar_value(self._handle, p.index, sizes, buf))
                scalars[p.index] = buf
        s = _Shape(sizes, scalars, n)
        self._shapes[key] = s
        return s

    def _stream(self, args: tuple, views) -> Optional[int]:
        """The stream of the arrays' library: PyTorch's or CuPy's current
        one, else what __cuda_array_interface__ says, else the legacy
        default stream (never NULL, which would make the launch wait)."""
        tensor = _arrays.torch_tensor_type()
        for a, v in zip(args, views):
            mod = type(a).__module__
            if mod.startswith("torch") or (tensor is not None and isinstance(a, tensor)):
                return _torch_stream(v.device) or _CU_STREAM_LEGACY
            if mod.startswith("cupy"):
                return sys.modules["cupy"].cuda.get_current_stream().ptr or _CU_STREAM_LEGACY
            if isinstance(v.stream, int) and v.stream > 0:
                return v.stream
        return _CU_STREAM_LEGACY

    # ---- launching ----------------------------------------------------

    def _ctypes_call(self, *args: Any, **kwargs: Any) -> None:
        """Launches the kernel on these arrays; see the class docstring."""
        if not kwargs and len(args) == self._ntensors and self._launch_seen(args):
            return
        self._call(args, kwargs)

    if _ext is None:
        __call__ = _ctypes_call

    def _refresh_types(self) -> None:
        """The array types of the hot path, from the libraries imported now
        (this package imports neither PyTorch nor NumPy itself)."""
        self._torch_tensor = _arrays.torch_tensor_type()
        self._ndarray = getattr(sys.modules.get("numpy"), "ndarray", None)
        # Per tensor: (index, written?, NumPy typestr, torch dtype).
        self._fast = [(p.index, p.mode != "in", _typestr(p.dtype), _torch_dtype(p.dtype)) for p in self._tensors]
        if self.launch_path == "extension":
            self._ext_set_types(self._torch_tensor, self._ndarray, tuple(spec[3] for spec in self._fast),
                                _raw_stream_function())

    def _launch_seen(self, args: tuple) -> bool:
        """The hot path: PyTorch tensors and NumPy arrays of a shape launched
        before, every check passed without building views. False sends the
        call to _call, which checks everything and says what is wrong."""
        tensor, ndarray = self._torch_tensor, self._ndarray
        ptrs = []
        shapes = []
        for spec, a in zip(self._fast, args):
            t = type(a)
            if t is tensor:
                if a.dtype is not spec[3] or a.get_device() != self._want_device or not a.is_contiguous():
                    return False
                ptrs.append(a.data_ptr())
                shapes.append(a.shape)
            elif t is ndarray and self._memory is _arrays.HOST:
                d = a.__array_interface__
                data = d["data"]
                if d["typestr"] != spec[2] or d["strides"] is not None or (data[1] and spec[1]):
                    return False
                ptrs.append(data[0])
                shapes.append(d["shape"])
            else:
                return False
        shape = self._shapes.get((tuple(shapes), ()))
        if shape is None or not shape.launched:
            return False
        stream = None
        if self._memory is _arrays.CUDA:
            stream = _torch_stream(self._want_device) or _CU_STREAM_LEGACY if tensor is not None and \
                type(args[0]) is tensor else self._stream(args, [_arrays.view(a) for a in args])
        with self._lock:
            argv = shape.argv
            for spec, ptr in zip(self._fast, ptrs):
                argv[spec[0]] = ptr
            self._launch(shape, argv, stream)
        return True

    def _call(self, args: tuple, kwargs: dict) -> None:
        views, given, sizes_given = self._bind(args, kwargs)
        shape = self._shape(views, sizes_given)
        stream = self._stream(args, views) if self._memory == _arrays.CUDA else None
        packed = {i: _pack_scalar(self.params[i], value) for i, value in given.items()}
        for p in self._scalars:
            if p.index not in packed and p.index not in shape.scalars:
                raise errors.ArgumentError(f"parameter {p.name}: kernel {self.name} needs a value for this "
                                           f"{p.dtype} scalar (no expression binds it): pass {p.name}=...")
        with self._lock:
            argv = shape.argv if not packed else (c_void_p * max(len(self.params), 1))(*shape.argv)
            for p, v in zip(self._tensors, views):
                argv[p.index] = v.ptr
            for i, buf in packed.items():
                argv[i] = ctypes.addressof(buf)
            self._launch(shape, argv, stream)
        self._refresh_types()

    def _launch(self, shape: _Shape, argv, stream) -> None:
        # The first launch of a shape may tune: Ctrl-C must reach the tuner.
        catch = not shape.launched
        if catch:
            lib.kt_signals_catch()
        if self.launch_path == "extension":  # under the extension's lock, which its own launches take
            rc = self._launch_raw(ctypes.addressof(shape.sizes), ctypes.addressof(argv), stream or 0, catch)
            self._ctx.check(rc)
            shape.launched = True
            return
        try:
            if self._memory == _arrays.CUDA:
                rc = lib.kt_launch(self._handle, shape.sizes, argv, stream)
            else:
                rc = lib.kt_launch_host(self._handle, shape.sizes, argv)
        finally:
            if catch:
                lib.kt_signals_release()  # re-raises a signal caught meanwhile: KeyboardInterrupt follows
        self._ctx.check(rc)
        shape.launched = True

    # ---- tuning -------------------------------------------------------

    def tune(self, dims: Optional[Dict[str, int]] = None, **options: Any):
        """Tunes this kernel file now (see ktune.tune, which takes the same
        keywords) under this kernel's database, backend and device."""
        from ._tune import tune

        path = None if self._source is not None else self.path
        return tune(path, kernel=self.name, source=self._source, lang=self._lang, dims=dims, backend=self.backend,
                    device=self.device,
                    db=self._ctx._db.decode() if self._ctx._db else None, **options)

    def prepare(self) -> None:
        """Does a first call's work that no shape decides, now (kt_kernel_prepare):
        opens the device and the database, loads the default configuration
        (except under miss='tune') and starts the tuning helper, which opens its
        device and waits for the first miss, so that the first call pays neither."""
        self._ctx.check(lib.kt_kernel_prepare(self._handle))

    def close(self) -> None:
        """Frees the kernel and its context (also done when it is collected)."""
        if getattr(self, "_handle", None):
            if getattr(self, "launch_path", None) == "extension":
                self._ext_detach()  # no launch from C after this
            lib.kt_kernel_destroy(self._handle)
            self._handle = kernel_p()
        if getattr(self, "_ctx", None) is not None:
            self._ctx.close()

    def __del__(self):
        self.close()

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {p.mode + ' ' if p.mode != 'scalar' else ''}{p.dtype}"
                           + (f"[{p.ndims}d]" if p.is_tensor else "") for p in self.params)
        return f"<ktune.Kernel {self.name}({params}) on {self.backend}, from {self.path}>"


class _CtypesKernel(Kernel):
    """A Kernel called through ctypes although the extension is built
    (launch_path="ctypes"): the fallback, kept comparable and tested."""

    __call__ = Kernel._ctypes_call


def _typestr(dtype: str) -> Optional[str]:
    """NumPy's type string of a ktune dtype on this machine's byte order."""
    order = "<" if sys.byteorder == "little" else ">"
    size = _arrays.SIZES[dtype]
    kind = {"f": "f", "b": None, "i": "i", "u": "u"}[dtype[0]]
    return None if kind is None else (("|" if size == 1 else order) + kind + str(size))


def _torch_dtype(dtype: str):
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    return getattr(torch, {v: k for k, v in _arrays._TORCH_NAMES.items()}[dtype], None)



_raw_stream = (None, None)  # (the torch module, its raw current-stream function)


def _raw_stream_function():
    """What the extension calls for PyTorch's current stream on a device:
    the raw-handle function when torch has it (None: torch not imported)."""
    torch = sys.modules.get("torch")
    if torch is None or getattr(torch, "Tensor", None) is None:
        return None
    raw = getattr(getattr(torch, "_C", None), "_cuda_getCurrentRawStream", None)
    return raw if raw is not None else (lambda d: torch.cuda.current_stream(d).cuda_stream)


def _torch_stream(device: int) -> int:
    """PyTorch's current stream on DEVICE: the raw handle, as Triton reads it
    (torch.cuda.current_stream() costs microseconds)."""
    global _raw_stream
    torch = sys.modules["torch"]
    if _raw_stream[0] is not torch:
        _raw_stream = (torch, _raw_stream_function())
    return _raw_stream[1](device)


def load(path: Optional[PathLike] = None, kernel: Optional[str] = None, *, source: Optional[str] = None,
         lang: Optional[str] = None, backend: Optional[str] = None, device: int = 0,
         db: Optional[PathLike] = None, no_db: bool = False, miss: str = "tune",
         budget: Union[int, str, None] = None, strategy: Optional[str] = None, quiet: bool = True,
         jobs: int = 0, launch_path: Optional[str] = None, objective: str = "time") -> Kernel:
    """Loads the annotated kernel KERNEL (None: the file's only one) from PATH,
    or from SOURCE, the annotated kernel as a string in LANG ("c", "cl" or
    "cu"; None: C), e.g. ``ktune.load(source=code, lang="cu")``.

    Returns a Kernel; call it on arrays: ``k(x, y, z)`` launches the stored
    winner for the arrays' sizes, and a size seen for the first time that has
    no stored winner is handled as MISS says: "tune" (tune now, with BUDGET
    configurations or "30s" and STRATEGY), "nearest" (the winner of the
    nearest stored size), "default" (the first choices), "background" (the
    nearest stored size's winner now, the tuning's once it is stored) or
    "online" (the configurations verified in the helper, then timed on the
    calls themselves, 5 calls each, and the fastest kept: KT_MISS_ONLINE).

    BACKEND ("cpu", "opencl", "cuda"; None: from the file's extension) and
    DEVICE (an index among ktune.devices()) pick where it runs; DB is the
    results database (None: $KTUNE_DB, else ~/.cache/ktune/results.db) and
    NO_DB keeps nothing on disk; QUIET=False prints tuning progress on stderr.
    LAUNCH_PATH picks how calls are made: "extension" (the C extension
    ktune._launch, a few microseconds less per call) or "ctypes" (the
    fallback, used when the extension is not built); None: $KTUNE_LAUNCH_PATH,
    else ktune.launch_path. The kernel's ``launch_path`` says which it got.
    OBJECTIVE ("time", "energy", "edp") picks which stored winner a call
    launches (a key's winner is stored per objective) and what a miss tunes for.

    Raises InvalidInput (with file:line:col) for a bad annotation or option,
    NotFound for an unknown kernel name, BackendUnavailable when the
    backend cannot run here.

    Example::

        k = ktune.load("kernels/cuda/elementwise.cu")
        x, y = torch.rand(1 << 20, device="cuda"), torch.rand(1 << 20, device="cuda")
        z = torch.empty_like(x)
        k(x, y, z)             # z = x * y + x, with the winner for N = 2^20
    """
    return Kernel(path, kernel, source=source, lang=lang, backend=backend, device=device, db=db, no_db=no_db,
                  miss=miss, budget=budget,
                  strategy=strategy, quiet=quiet, jobs=jobs, launch_path=launch_path, objective=objective)
