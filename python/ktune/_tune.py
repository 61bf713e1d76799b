"""ktune.tune and the result it returns, as plain Python objects."""

from __future__ import annotations

import ctypes
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Union

from . import errors
from ._context import Context, PathLike, budget_options, objective_value
from ._data import TuningData
from ._lib import TuneOptions, capture, kernel_p, lib, result_p


@dataclass(frozen=True)
class Configuration:
    """One configuration of a tuning: its ``values`` (NAME -> value), its
    ``status`` ("ok", "compile", "runtime", "timeout", "correctness",
    "constraint", "input", "bounds", "state", "pending") and, when it ran,
    its times in seconds. ``message`` says why it failed; ``output`` is the
    start of what it printed; ``raw`` is the JSON object ktune wrote."""

    values: Dict[str, int]
    status: str
    median_s: Optional[float] = None
    min_s: Optional[float] = None
    mean_s: Optional[float] = None
    stddev_s: Optional[float] = None
    samples: int = 0
    compile_s: Optional[float] = None
    is_default: bool = False
    reused: bool = False
    message: Optional[str] = None
    output: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Configuration":
        return cls(values=dict(d.get("config", {})), status=d.get("status", "?"), median_s=d.get("median_s"),
                   min_s=d.get("min_s"), mean_s=d.get("mean_s"), stddev_s=d.get("stddev_s"),
                   samples=d.get("samples", 0), compile_s=d.get("compile_s"), is_default=bool(d.get("default")),
                   reused=bool(d.get("reused")), message=d.get("message"), output=d.get("output"), raw=dict(d))

    def pin(self) -> str:
        """The values as "NAME=VALUE ..." (what pin= and --autotune take)."""
        return " ".join(f"{k}={v}" for k, v in self.values.items())


def _sizes(text: str) -> Dict[str, int]:
    out = {}
    for item in (text or "").split():
        name, _, value = item.partition("=")
        out[name] = int(value)
    return out


@dataclass(frozen=True)
class TuneResult:
    """What ktune.tune measured: the ``winner`` (None when nothing was
    valid), the ``default`` configuration, ``configurations`` (every one,
    with status and times), the ``timeline`` (wall time, compile and device
    busy, phases), the ``device``, ``sizes`` and the ``strategy`` used; ``raw``
    is ktune's whole --json document."""

    kernel: str
    file: str
    sizes: Dict[str, int]
    device: Dict[str, Any]
    strategy: str
    winner: Optional[Configuration]
    default: Optional[Configuration]
    configurations: List[Configuration]
    timeline: Dict[str, Any]
    interrupted: bool
    speedup_over_default: Optional[float]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "TuneResult":
        conf = lambda x: Configuration.from_json(x) if x else None  # noqa: E731
        return cls(kernel=d["kernel"], file=d.get("file", ""), sizes=_sizes(d.get("sizes", "")),
                   device=dict(d.get("device", {})), strategy=d.get("strategy", ""), winner=conf(d.get("winner")),
                   default=conf(d.get("default")),
                   configurations=[Configuration.from_json(c) for c in d.get("configurations", [])],
                   timeline=dict(d.get("timeline", {})), interrupted=bool(d.get("interrupted")),
                   speedup_over_default=d.get("speedup_over_default"), raw=dict(d))


def _pin_text(pin: Union[str, Mapping[str, int], None]) -> Optional[bytes]:
    if pin is None:
        return None
    if isinstance(pin, Mapping):
        pin = " ".join(f"{k}={v}" for k, v in pin.items())
    return str(pin).encode()


def _options(strategy, budget, seed, no_cache, retry_failed, show_output, objective) -> TuneOptions:
    o = TuneOptions()
    o.objective = objective_value(objective)
    o.strategy = strategy.encode() if strategy else None
    budget_options(o, budget)
    o.seed = int(seed or 0)
    o.no_cache = int(bool(no_cache))
    o.retry_failed = int(bool(retry_failed))
    o.show_output = int(bool(show_output))
    return o


def run_tune(ctx: Context, handle, opts: TuneOptions, report: Optional[PathLike] = None) -> TuneResult:
    """kt_tune on a loaded kernel, interruptible by Ctrl-C (SIGINT reaches
    kt_interrupt while the call blocks; KeyboardInterrupt follows it); with
    REPORT, the tuning's HTML report (kt_result_report) is written there."""
    r = result_p()
    if lib.kt_signals_catch() != 0:
        raise errors.KtuneIOError("ktune: cannot install the interrupt handlers (sigaction failed)")
    try:
        rc = lib.kt_tune(handle, ctypes.byref(opts), ctypes.byref(r))  # the GIL is released meanwhile
        msg = ctx.errmsg()
    finally:
        sig = lib.kt_signals_release()
    try:
        result = None
        if r:
            _, text = capture(lib.kt_result_print_json, r)
            result = TuneResult.from_json(json.loads(text))
            if report is not None and rc == 0:
                ctx.check(lib.kt_result_report(ctx.handle, r, os.fsencode(report)))
    finally:
        lib.kt_result_destroy(r)
    # A signal caught meanwhile was raised again by kt_signals_release: the
    # caller's handler runs at the next bytecode boundary (KeyboardInterrupt
    # for Ctrl-C), so an interrupted tuning ends in it, not in Interrupted.
    del sig
    if rc != 0:
        raise errors.error_for(rc, msg, result)
    return result


def tune(path: Optional[PathLike] = None, kernel: Optional[str] = None, *, source: Optional[str] = None,
         lang: Optional[str] = None, dims: Optional[Mapping[str, int]] = None,
         pin: Union[str, Mapping[str, int], None] = None, strategy: Optional[str] = None,
         budget: Union[int, str, None] = None, seed: Optional[int] = None, backend: Optional[str] = None,
         device: int = 0, db: Optional[PathLike] = None, no_db: bool = False, no_cache: bool = False,
         retry_failed: bool = False, show_output: bool = False, quiet: bool = True, jobs: int = 0,
         inputs: Optional[Mapping[str, Any]] = None, expect: Optional[Mapping[str, Any]] = None,
         report: Optional[PathLike] = None, objective: str = "time") -> TuneResult:
    """Tunes kernel KERNEL of PATH (None: the file's only one) and returns a TuneResult.

    Instead of PATH, SOURCE is the annotated kernel as a string, in LANG
    ("c", "cl" or "cu"; None: C). INPUTS ({"x": a}) fills in and inout
    tensors from arrays instead of their @kernel initial values, and EXPECT
    ({"y": b}) gives outputs' expected content, the reference every
    configuration is compared with (as `ktune tune --input/--expect`: each
    array's dtype and shape must be the tensor's, and sizes no DIMS give are
    read from the shapes; NumPy arrays, or anything NumPy converts). REPORT
    is a path where the tuning's self-contained HTML report is written.

    DIMS sets runtime sizes ({"N": 4096}; else @dims); PIN fixes tuned names
    ({"TILE_M": 32} or "TILE_M=32") and searches the rest; STRATEGY names a
    search strategy (ktune.strategies()); BUDGET is a number of configurations
    (100) or of seconds ("30s"); SEED seeds the search. Results go to DB
    (None: $KTUNE_DB, else ~/.cache/ktune/results.db) unless NO_DB; NO_CACHE
    measures again what the database holds, RETRY_FAILED its failures.
    OBJECTIVE is what the winner minimises: "time" per launch, "energy" per
    launch (NVML on CUDA, RAPL on the CPU; a device without either raises
    InvalidInput) or "edp" (energy times time); the winner is stored under it.

    Raises InvalidInput (bad sizes, pins, strategy), NoValidConfiguration
    (its .result says what happened to each configuration),
    BackendUnavailable, StoreError. Ctrl-C stops the tuning cleanly (what was
    measured is kept) and raises KeyboardInterrupt. The GIL is released
    while it runs.
    """
    args = dict(path=None if path is None else os.fspath(path), kernel=kernel, source=source, lang=lang,
                inputs=inputs, expect=expect, report=report, dims=dict(dims or {}), pin=pin if isinstance(pin, (str, type(None)))
                else dict(pin), strategy=strategy, budget=budget, seed=seed, backend=backend, device=device,
                db=os.fspath(db) if db is not None else None, no_db=no_db, no_cache=no_cache,
                retry_failed=retry_failed, show_output=show_output, quiet=quiet, jobs=jobs, objective=objective)
    # Here, in this process, even when PyTorch or CuPy has loaded the CUDA
    # driver: kt_tune then starts its device workers from a fresh ktune-tuner
    # image instead of forking them from this process (docs/DESIGN.md).
    return _tune_here(**args)


def _tune_here(path, kernel, source, lang, inputs, expect, report, dims, pin, strategy, budget, seed, backend, device,
               db, no_db, no_cache, retry_failed, show_output, quiet, jobs, objective) -> TuneResult:
    opts = _options(strategy, budget, seed, no_cache, retry_failed, show_output, objective)
    ctx = Context(backend, device, db, no_db, quiet, jobs)
    handle = kernel_p()
    data = None
    try:
        handle = ctx.load(path, kernel, source, lang)
        for name, value in (dims or {}).items():
            if isinstance(value, bool) or not isinstance(value, int):
                raise errors.InvalidInput(f"dims {name}={value!r}: expected an integer")
            ctx.check(lib.kt_kernel_set_size(handle, str(name).encode(), value))
        text = _pin_text(pin)
        if text:
            ctx.check(lib.kt_kernel_pin(handle, text))
        data = TuningData(ctx, handle, inputs, expect)
        return run_tune(ctx, handle, opts, report)
    finally:
        if data is not None:
            data.close()
        lib.kt_kernel_destroy(handle)
        ctx.close()
