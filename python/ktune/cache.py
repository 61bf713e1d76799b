"""ktune.cache: the results database, as `ktune cache` reads and writes it.

Every function takes DB (None: $KTUNE_DB, else $XDG_CACHE_HOME/ktune/results.db,
else ~/.cache/ktune/results.db) and the filters KERNEL (exact name), DEVICE
(part of the device name, or a backend name) and SIZES ({"N": 4096} or
"N=4096": each must be among the key's sizes). Reading never creates a
database. Errors raise NotFound, InvalidInput or StoreError with ktune's
message.
"""

from __future__ import annotations

import ctypes
import json
import os
from typing import Any, Dict, List, Mapping, Optional, Union

from ._context import Context, PathLike
from ._lib import CacheFilter, capture, lib

Sizes = Union[str, Mapping[str, int], None]


def _filter(kernel: Optional[str], device: Optional[str], sizes: Sizes):
    if isinstance(sizes, Mapping):
        sizes = " ".join(f"{k}={v}" for k, v in sizes.items())
    keep = [s.encode() if s else None for s in (kernel, device, sizes)]
    return CacheFilter(*keep), keep


def _run(db: Optional[PathLike], fn, *args) -> str:
    ctx = Context(db=db)
    try:
        rc, text = capture(fn, ctx.handle, *args)
        ctx.check(rc)
        return text
    finally:
        ctx.close()


def path(db: Optional[PathLike] = None) -> str:
    """The path of the results database."""
    ctx = Context(db=db)
    try:
        buf = ctypes.create_string_buffer(4096)
        ctx.check(lib.kt_cache_path(ctx.handle, buf, len(buf)))
        return os.fsdecode(buf.value)
    finally:
        ctx.close()


def list(kernel: Optional[str] = None, device: Optional[str] = None, sizes: Sizes = None,  # noqa: A001
         db: Optional[PathLike] = None) -> List[Dict[str, Any]]:
    """One dict per stored key: kernel, device, sizes, results measured and
    valid, the winner and its time."""
    f, _keep = _filter(kernel, device, sizes)
    text = _run(db, lib.kt_cache_list, ctypes.byref(f), 1)
    return json.loads(text)["keys"]


def show(kernel: Optional[str] = None, device: Optional[str] = None, sizes: Sizes = None,
         db: Optional[PathLike] = None, format: str = "json") -> Any:  # noqa: A002
    """Every stored result of the matching keys. FORMAT "json" (the default)
    returns ktune's export document as a dict; "table" the text table;
    "defines" the winner as a C header of #defines and "dflags" as -D flags
    (both need exactly one matching key)."""
    f, _keep = _filter(kernel, device, sizes)
    text = _run(db, lib.kt_cache_show, ctypes.byref(f), format.encode())
    return json.loads(text) if format == "json" else text


def export(kernel: Optional[str] = None, device: Optional[str] = None, sizes: Sizes = None,
           db: Optional[PathLike] = None, format: str = "json", file: Optional[PathLike] = None) -> str:  # noqa: A002
    """ktune's export document ("json", what import_ reads back) or the T4
    results format of one key ("t4"), as text; written to FILE too when given."""
    f, _keep = _filter(kernel, device, sizes)
    text = _run(db, lib.kt_cache_export, ctypes.byref(f), format.encode())
    if file is not None:
        with open(file, "w", encoding="utf-8") as out:
            out.write(text)
    return text


def import_(file: PathLike, db: Optional[PathLike] = None) -> str:
    """Merges an export document (a file path) into the database; of two
    records of one configuration the newer is kept. Returns ktune's summary."""
    return _run(db, lambda ctx, out: lib.kt_cache_import(ctx, os.fsencode(file), out)).strip()


def clear(kernel: Optional[str] = None, device: Optional[str] = None, sizes: Sizes = None,
          db: Optional[PathLike] = None) -> str:
    """Deletes the matching keys with their results; returns ktune's summary."""
    f, _keep = _filter(kernel, device, sizes)
    return _run(db, lib.kt_cache_clear, ctypes.byref(f)).strip()


globals()["import"] = import_  # ktune.cache.import_ is the spelling Python allows; getattr(cache, "import") works too
