"""Finding libktune and declaring its C API for ctypes.

The library is looked up in this order: the file named by $KTUNE_LIBRARY; the
copy ``pip install`` built into the package; the one pkg-config knows
(``cmake --install``); the system's (ldconfig). Every function used is
declared here with its argument and result types, so that a wrong call is a
Python TypeError, never a crash. ctypes releases the GIL during every call.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import subprocess
from ctypes import POINTER, c_char_p, c_double, c_int, c_int64, c_long, c_size_t, c_uint64, c_void_p

# The C API this package needs: kt_launch_host and kt_signals_catch came with it.
REQUIRED_VERSION = 100  # 0.1.0 as KTUNE_VERSION_NUMBER writes it


class Labels(ctypes.Structure):
    _fields_ = [
        ("kernel", c_char_p),
        ("size", c_char_p),
        ("pin", c_char_p),
        ("db", c_char_p),
        ("input", c_char_p),
        ("expect", c_char_p),
        ("check", c_char_p),
    ]


class TuneOptions(ctypes.Structure):
    _fields_ = [
        ("strategy", c_char_p),
        ("budget_configs", c_long),
        ("budget_s", c_double),
        ("seed", c_uint64),
        ("no_cache", c_int),
        ("finalists", c_int),
        ("rounds", c_int),
        ("bench_only", c_int),
        ("show_output", c_int),
        ("retry_failed", c_int),
        ("check", c_void_p),  # kt_check_fn: an author's check (unused from Python yet)
        ("check_data", c_void_p),
        ("timing", c_int),  # kt_timing: 0 auto, 1 graph, 2 events
        ("objective", c_int),  # kt_objective: 0 time, 1 energy, 2 edp
    ]


class Options(ctypes.Structure):
    _fields_ = [
        ("backend", c_int),
        ("device", c_int),
        ("db_path", c_char_p),
        ("no_db", c_int),
        ("jobs", c_int),
        ("compile_timeout_s", c_double),
        ("run_timeout_s", c_double),
        ("quiet", c_int),
        ("miss_policy", c_int),
        ("miss_tune", POINTER(TuneOptions)),
        ("max_tensor_bytes", c_uint64),
        ("labels", Labels),
        ("binary_cache", c_char_p),
        ("no_binary_cache", c_int),
        ("binary_cache_max_bytes", c_uint64),
        ("opencl_context", c_void_p),
        ("opencl_device", c_void_p),
        ("objective", c_int),  # kt_objective: which stored winner kt_launch uses
    ]


class CacheFilter(ctypes.Structure):
    _fields_ = [("kernel", c_char_p), ("device", c_char_p), ("sizes", c_char_p)]


class ParamInfo(ctypes.Structure):
    _fields_ = [
        ("name", c_char_p),
        ("mode", c_int),
        ("dtype", c_char_p),
        ("elem_size", c_int),
        ("ndims", c_int),
        ("has_value", c_int),
    ]


OBJECTIVES = ("time", "energy", "edp")  # kt_objective's values, in order

ctx_p = c_void_p
kernel_p = c_void_p
result_p = c_void_p
file_p = c_void_p

_PROTOTYPES = {
    "kt_version_number": (c_int, []),
    "kt_struct_size": (c_size_t, [c_char_p]),
    "kt_version": (c_char_p, []),
    "kt_err_name": (c_char_p, [c_int]),
    "kt_strerror": (c_char_p, [c_int]),
    "kt_backend_name": (c_char_p, [c_int]),
    "kt_context_create": (c_int, [POINTER(Options), POINTER(ctx_p)]),
    "kt_context_destroy": (None, [ctx_p]),
    "kt_errmsg": (c_char_p, [ctx_p]),
    "kt_kernel_load_file": (c_int, [ctx_p, c_char_p, c_char_p, POINTER(kernel_p)]),
    "kt_kernel_load_string": (c_int, [ctx_p, c_char_p, c_char_p, c_char_p, c_char_p, POINTER(kernel_p)]),
    "kt_kernel_set_input": (c_int, [kernel_p, c_char_p]),
    "kt_kernel_set_expect": (c_int, [kernel_p, c_char_p]),
    "kt_report": (c_int, [ctx_p, POINTER(CacheFilter), c_char_p]),
    "kt_result_report": (c_int, [ctx_p, result_p, c_char_p]),
    "kt_kernel_destroy": (None, [kernel_p]),
    "kt_kernel_prepare": (c_int, [kernel_p]),
    "kt_kernel_name": (c_char_p, [kernel_p]),
    "kt_kernel_backend": (c_char_p, [kernel_p]),
    "kt_kernel_memory": (c_int, [kernel_p]),
    "kt_kernel_num_sizes": (c_int, [kernel_p]),
    "kt_kernel_size_name": (c_char_p, [kernel_p, c_int]),
    "kt_kernel_set_size": (c_int, [kernel_p, c_char_p, c_int64]),
    "kt_kernel_pin": (c_int, [kernel_p, c_char_p]),
    "kt_kernel_num_params": (c_int, [kernel_p]),
    "kt_kernel_param": (c_int, [kernel_p, c_int, POINTER(ParamInfo)]),
    "kt_kernel_sizes_from_shapes": (c_int, [kernel_p, POINTER(c_int), POINTER(POINTER(c_int64)), POINTER(c_int64)]),
    "kt_kernel_scalar_value": (c_int, [kernel_p, c_int, POINTER(c_int64), c_void_p]),
    "kt_space_print": (c_int, [kernel_p, file_p, c_int]),
    "kt_devices_print": (c_int, [ctx_p, file_p, c_int]),
    "kt_tune": (c_int, [kernel_p, POINTER(TuneOptions), POINTER(result_p)]),
    "kt_result_destroy": (None, [result_p]),
    "kt_result_print_json": (c_int, [result_p, file_p]),
    "kt_interrupt": (None, []),
    "kt_launch": (c_int, [kernel_p, POINTER(c_int64), POINTER(c_void_p), c_void_p]),
    "kt_launch_host": (c_int, [kernel_p, POINTER(c_int64), POINTER(c_void_p)]),
    "kt_signals_catch": (c_int, []),
    "kt_signals_release": (c_int, []),
    "kt_cache_path": (c_int, [ctx_p, c_char_p, c_size_t]),
    "kt_cache_list": (c_int, [ctx_p, POINTER(CacheFilter), c_int, file_p]),
    "kt_cache_show": (c_int, [ctx_p, POINTER(CacheFilter), c_char_p, file_p]),
    "kt_cache_export": (c_int, [ctx_p, POINTER(CacheFilter), c_char_p, file_p]),
    "kt_cache_import": (c_int, [ctx_p, c_char_p, file_p]),
    "kt_cache_clear": (c_int, [ctx_p, POINTER(CacheFilter), file_p]),
    "kt_strategy_names": (POINTER(c_char_p), []),
    "kt_strategy_summary": (c_char_p, [c_char_p]),
    "kt_replay": (
        c_int,
        [ctx_p, c_char_p, c_char_p, c_long, c_int, c_uint64, POINTER(c_char_p), c_int, c_int, file_p],
    ),
    "kt_replay_seconds": (
        c_int,
        [ctx_p, c_char_p, c_char_p, c_double, c_int, c_uint64, POINTER(c_char_p), c_int, c_int, file_p],
    ),
}


def _candidates() -> list[tuple[str, str]]:
    """(path, where it came from), in the order they are tried."""
    found = []
    env = os.environ.get("KTUNE_LIBRARY")
    if env:
        return [(env, "$KTUNE_LIBRARY")]
    here = os.path.dirname(os.path.abspath(__file__))
    found.append((os.path.join(here, "libktune.so"), "the package"))
    try:
        from ._built import LIBRARY  # the library `pip install` was pointed at

        if LIBRARY:
            found.append((LIBRARY, "the installation"))
    except ImportError:
        pass
    try:
        libdir = subprocess.run(
            ["pkg-config", "--variable=libdir", "ktune"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
        if libdir:
            found.append((os.path.join(libdir, "libktune.so.0"), "pkg-config"))
    except (OSError, subprocess.SubprocessError):
        pass
    system = ctypes.util.find_library("ktune")
    if system:
        found.append((system, "the system"))
    return found


def _declare(lib: ctypes.CDLL, path: str) -> None:
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise ImportError(
                f"ktune: {path} has no {name}: it is older than this package; "
                "rebuild it from the same checkout (pip install ./python) or point KTUNE_LIBRARY at a newer one"
            ) from None
        fn.restype = restype
        fn.argtypes = argtypes


def _check_layouts(lib, path: str) -> None:
    """The structs mirrored here must match the loaded library's, field for
    field: a mismatch would make C read past them."""
    mirrors = {"kt_options": Options, "kt_tune_options": TuneOptions, "kt_labels": Labels,
               "kt_cache_filter": CacheFilter, "kt_param_info": ParamInfo}
    for name, mirror in mirrors.items():
        size = lib.kt_struct_size(name.encode())
        if size != ctypes.sizeof(mirror):
            raise ImportError(f"ktune: {path}: struct {name} is {size} bytes there but {ctypes.sizeof(mirror)} in "
                              "this package (python/ktune/_lib.py): the package and the library are from "
                              "different versions; reinstall the package (pip install ./python)")


def load_library() -> tuple[ctypes.CDLL, str]:
    tried = []
    for path, origin in _candidates():
        if origin == "the package" and not os.path.exists(path):
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append(f"{path} ({origin}): {e}")
            continue
        _declare(lib, path)
        if lib.kt_version_number() < REQUIRED_VERSION:
            raise ImportError(f"ktune: {path} is version {lib.kt_version().decode()}; this package needs 0.1.0 or later")
        _check_layouts(lib, path)
        return lib, path
    detail = "; ".join(tried) if tried else "none found"
    raise ImportError(
        "ktune: cannot load libktune (" + detail + "). Install the package from the repository "
        "(pip install ./python builds it), or build the library (cmake --build build) and set "
        "KTUNE_LIBRARY=/path/to/libktune.so"
    )


lib, library_path = load_library()
# The dlopen handle, from which the C extension takes the same functions.
lib_handle: int = lib._handle

# libc's open_memstream gathers what a kt_*_print call writes to a FILE *.
_libc = ctypes.CDLL(None)
_libc.open_memstream.restype = c_void_p
_libc.open_memstream.argtypes = [POINTER(c_void_p), POINTER(c_size_t)]
_libc.fclose.restype = c_int
_libc.fclose.argtypes = [c_void_p]
_libc.free.restype = None
_libc.free.argtypes = [c_void_p]


def capture(fn, *args) -> tuple[int, str]:
    """Calls FN(*ARGS, FILE *) and returns its code and what it wrote."""
    buf, size = c_void_p(), c_size_t()
    f = _libc.open_memstream(ctypes.byref(buf), ctypes.byref(size))
    if not f:
        raise MemoryError("ktune: open_memstream failed")
    try:
        rc = fn(*args, f)
    finally:
        _libc.fclose(f)
    text = ctypes.string_at(buf, size.value).decode("utf-8", "replace") if buf.value else ""
    _libc.free(buf)
    return rc, text
