"""Tuning on the caller's arrays: ``inputs={"x": a}`` and ``expect={"y": b}``
of ktune.tune become the .npy files that kt_kernel_set_input and
kt_kernel_set_expect read (the C library checks their type and shape
against the kernel's and binds sizes from them, as for `ktune tune --input`).
The files live in a private temporary folder for the tuning's duration."""

from __future__ import annotations

import os
import tempfile
from typing import Any, Mapping, Optional

from . import errors
from ._lib import lib


def _host_array(name: str, value: Any, keyword: str):
    """VALUE as a C-ordered NumPy array (a copy of a GPU tensor's content)."""
    try:
        import numpy as np
    except ImportError:
        raise errors.InvalidInput(f"{keyword}: giving arrays needs NumPy (pip install numpy)") from None
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a PyTorch tensor, wherever it lives
        value = value.detach().cpu().numpy()
    elif hasattr(value, "get") and hasattr(value, "__cuda_array_interface__"):  # CuPy
        value = value.get()
    try:
        return np.ascontiguousarray(value)
    except Exception as e:  # noqa: BLE001: whatever NumPy refuses, said with the name
        raise errors.InvalidInput(f"{keyword}[{name!r}]: not an array ({e})") from None


class TuningData:
    """Writes INPUTS and EXPECT (NAME -> array) where the kernel HANDLE
    reads them; close() removes the files."""

    def __init__(self, ctx, handle, inputs: Optional[Mapping[str, Any]], expect: Optional[Mapping[str, Any]]):
        self._dir: Optional[tempfile.TemporaryDirectory] = None
        for keyword, arrays, setter in (("inputs", inputs, lib.kt_kernel_set_input),
                                        ("expect", expect, lib.kt_kernel_set_expect)):
            if arrays is None:
                continue
            if not isinstance(arrays, Mapping):
                raise errors.InvalidInput(f"{keyword}={type(arrays).__name__}: expected a dict of NAME -> array")
            for i, (name, value) in enumerate(arrays.items()):
                path = self._write(f"{keyword}-{i}.npy", _host_array(str(name), value, keyword))
                ctx.check(setter(handle, f"{name}={path}".encode()))

    def _write(self, file: str, array) -> str:
        import numpy as np

        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="ktune-data-")
        path = os.path.join(self._dir.name, file)
        np.save(path, array, allow_pickle=False)
        return path

    def close(self) -> None:
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None
