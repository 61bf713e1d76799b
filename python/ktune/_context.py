"""A kt_context: the options every call works under, and turning a kt_err
code into the exception that carries the context's message."""

from __future__ import annotations

import ctypes
import os
from typing import Optional, Union

from . import errors
from ._lib import OBJECTIVES, Labels, Options, TuneOptions, ctx_p, kernel_p, lib

# kt_miss_policy (include/ktune.h), by the word after KT_MISS_
_MISS = {"tune": 0, "nearest": 1, "default": 2, "background": 3, "online": 4}
PathLike = Union[str, "os.PathLike[str]"]


def backend_names() -> list:
    """The backends this build knows, in kt_backend_kind order."""
    names, i = [], 1
    while True:
        n = lib.kt_backend_name(i)
        if n is None:
            return names
        names.append(n.decode())
        i += 1


def _encode(s: Optional[PathLike]) -> Optional[bytes]:
    return None if s is None else os.fsencode(s)


def objective_value(objective: str) -> int:
    """kt_objective's value of OBJECTIVE ("time", "energy", "edp")."""
    if objective not in OBJECTIVES:
        raise errors.InvalidInput(f"objective={objective!r}: expected 'time' (seconds per launch), 'energy' "
                                  "(joules per launch) or 'edp' (joules times seconds)")
    return OBJECTIVES.index(objective)


def budget_options(opts: TuneOptions, budget: Union[int, str, None]) -> None:
    """BUDGET: a number of configurations (100, "100") or seconds ("30s")."""
    if budget is None:
        return
    text = str(budget).strip()
    try:
        if isinstance(budget, bool):
            raise ValueError
        if text.endswith("s"):
            opts.budget_s = float(text[:-1])
            if not opts.budget_s > 0:
                raise ValueError
        elif isinstance(budget, float):
            raise ValueError
        else:
            opts.budget_configs = int(text)
            if opts.budget_configs <= 0:
                raise ValueError
    except ValueError:
        raise errors.InvalidInput(
            f"budget={budget!r}: expected a positive number of configurations (100) or of seconds as a string ('30s')"
        ) from None


class Context:
    """Owns one kt_context. Messages name the inputs by their Python
    keywords (dims, pin, kernel, db)."""

    def __init__(self, backend: Optional[str] = None, device: int = 0, db: Optional[PathLike] = None,
                 no_db: bool = False, quiet: bool = True, jobs: int = 0, miss: str = "tune",
                 miss_tune: Optional[TuneOptions] = None, objective: str = "time"):
        self.handle = ctx_p()
        o = Options()
        o.objective = objective_value(objective)
        if backend is not None:
            names = backend_names()
            if backend not in names:
                raise errors.InvalidInput(f"backend={backend!r}: expected one of {', '.join(map(repr, names))}")
            o.backend = names.index(backend) + 1
        if not isinstance(device, int) or isinstance(device, bool) or device < 0:
            raise errors.InvalidInput(f"device={device!r}: expected a device index (0, 1, ...; ktune.devices() lists them)")
        if miss not in _MISS:
            raise errors.InvalidInput(f"miss={miss!r}: expected {', '.join(map(repr, _MISS))}")
        o.device = device
        self._db = _encode(db)
        o.db_path = self._db
        o.no_db = int(bool(no_db))
        o.jobs = int(jobs)
        o.quiet = int(bool(quiet))
        o.miss_policy = _MISS[miss]
        self._miss_tune = miss_tune  # must live as long as the context
        if miss_tune is not None:
            o.miss_tune = ctypes.pointer(miss_tune)
        self._labels = (b"kernel=", b"dims", b"pin", b"db=", b"inputs", b"expect")
        o.labels = Labels(*self._labels)
        self._opts = o
        rc = lib.kt_context_create(ctypes.byref(o), ctypes.byref(self.handle))
        if rc != 0:
            err = errors.error_for(rc, self.errmsg())
            self.close()
            raise err

    def load(self, path: Optional[PathLike], kernel: Optional[str], source: Optional[str],
             lang: Optional[str]) -> "kernel_p":
        """The kernel KERNEL of the file PATH, or of the annotated SOURCE text
        in LANG ("c", "cl", "cu"; None: C), as kt_kernel_load_file and
        kt_kernel_load_string read them: a handle for kt_kernel_destroy."""
        if (path is None) == (source is None):
            raise errors.InvalidInput("give the kernel as a file path or as source=\"...\" (one of them)")
        if source is None and lang is not None:
            raise errors.InvalidInput(f"lang={lang!r} goes with source=: a file's language is its extension")
        handle = kernel_p()
        name = kernel.encode() if kernel else None
        if source is None:
            rc = lib.kt_kernel_load_file(self.handle, os.fsencode(path), name, ctypes.byref(handle))
        else:
            rc = lib.kt_kernel_load_string(self.handle, b"<source>", str(source).encode(),
                                           lang.encode() if lang else None, name, ctypes.byref(handle))
        self.check(rc)
        return handle

    def errmsg(self) -> str:
        m = lib.kt_errmsg(self.handle) if self.handle else None
        return m.decode("utf-8", "replace") if m else ""

    def check(self, rc: int, result=None) -> None:
        if rc != 0:
            raise errors.error_for(rc, self.errmsg(), result)

    def close(self) -> None:
        if self.handle:
            lib.kt_context_destroy(self.handle)
            self.handle = ctx_p()

    def __del__(self):
        self.close()
