"""ktune.report: the self-contained HTML report of the stored tunings, as
`ktune report` writes it (kt_report). A tuning's own report, with its
search's progress, is ktune.tune(..., report=PATH)."""

from __future__ import annotations

import ctypes
import os
from typing import Optional

from ._context import Context, PathLike
from .cache import Sizes, _filter
from ._lib import lib


def report(path: PathLike, kernel: Optional[str] = None, device: Optional[str] = None, sizes: Sizes = None,
           db: Optional[PathLike] = None) -> str:
    """Writes the HTML report of the tunings stored in DB (None: $KTUNE_DB,
    else ~/.cache/ktune/results.db) that KERNEL, DEVICE and SIZES select (as
    ktune.cache takes them; None: every one) to PATH, and returns PATH.

    Raises NotFound when there is no database, it is empty or nothing
    matches (a report never creates a database), StoreError when DB is not
    a ktune database, KtuneIOError when PATH cannot be written."""
    f, _keep = _filter(kernel, device, sizes)
    ctx = Context(db=db)
    try:
        ctx.check(lib.kt_report(ctx.handle, ctypes.byref(f), os.fsencode(path)))
    finally:
        ctx.close()
    return os.fspath(path)
