"""ktune.replay, ktune.devices, ktune.strategies, ktune.space."""

from __future__ import annotations

import ctypes
import json
import os
from typing import Any, Dict, Optional, Sequence, Union

from ._context import Context, PathLike
from ._lib import c_char_p, capture, kernel_p, lib


def replay(path: PathLike, budget: Union[int, str], strategy: Optional[str] = None, repeats: int = 20, seed: int = 0,
           warm: Sequence[PathLike] = ()) -> Dict[str, Any]:
    """Replays search on an exhaustively measured space (a T4 results file,
    gzip or JSON): REPEATS simulated tunings of at most BUDGET configurations
    (or, as "60s", seconds of the recorded compile and benchmark times, as
    `ktune replay --budget 60s`; the report adds "seconds_mean")
    with STRATEGY (None: the default choice), seeds from SEED; WARM names T4
    files of the same kernel on other devices, evaluated first as a warm
    start. Returns ktune's JSON report as a dict (key "fraction_of_optimum":
    the mean and spread of t_opt / t_best_found)."""
    ctx = Context()
    warm_b = [os.fsencode(w) for w in warm]
    arr = (c_char_p * max(len(warm_b), 1))(*warm_b)
    try:
        name = strategy.encode() if strategy else None
        if isinstance(budget, str) and budget.endswith("s"):
            rc, text = capture(lib.kt_replay_seconds, ctx.handle, os.fsencode(path), name, float(budget[:-1]),
                               int(repeats), int(seed), arr, len(warm_b), 1)
        else:
            rc, text = capture(lib.kt_replay, ctx.handle, os.fsencode(path), name, int(budget), int(repeats),
                               int(seed), arr, len(warm_b), 1)
        ctx.check(rc)
        return json.loads(text)
    finally:
        ctx.close()


def devices() -> Dict[str, Any]:
    """The backends and devices found, as `ktune devices --json` lists them."""
    ctx = Context()
    try:
        rc, text = capture(lambda out: lib.kt_devices_print(ctx.handle, out, 1))
        ctx.check(rc)
        return json.loads(text)
    finally:
        ctx.close()


def strategies() -> Dict[str, str]:
    """Search strategy names, each with its one-line summary."""
    names, out, i = lib.kt_strategy_names(), {}, 0
    while names[i]:
        out[names[i].decode()] = (lib.kt_strategy_summary(names[i]) or b"").decode()
        i += 1
    return out


def space(path: PathLike, kernel: Optional[str] = None) -> Dict[str, Any]:
    """The kernel's expanded space (names, choices, sizes before and after
    @where, the default), as `ktune space --json` prints it."""
    ctx = Context()
    handle = kernel_p()
    try:
        ctx.check(lib.kt_kernel_load_file(ctx.handle, os.fsencode(path), kernel.encode() if kernel else None,
                                          ctypes.byref(handle)))
        rc, text = capture(lambda out: lib.kt_space_print(handle, out, 1))
        ctx.check(rc)
        return json.loads(text)
    finally:
        lib.kt_kernel_destroy(handle)
        ctx.close()
