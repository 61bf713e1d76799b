"""ktune's errors as Python exceptions: one class per kt_err code, each
carrying ktune's own message (what is wrong, where, how to fix it)."""

from __future__ import annotations

from typing import Any, Optional


class KtuneError(Exception):
    """An error from libktune. ``code`` is the kt_err value (negative),
    ``name`` its name ("INVALID"), ``message`` ktune's explanation."""

    code = 0
    name = "ERROR"

    def __init__(self, message: str, result: Optional[Any] = None):
        super().__init__(message)
        self.message = message
        #: For NoValidConfiguration: the TuneResult, every configuration with its status.
        self.result = result


class InvalidInput(KtuneError, ValueError):
    """Bad input: an annotation, a size, a pin, an option (KT_INVALID)."""

    code, name = -1, "INVALID"


class NoValidConfiguration(KtuneError):
    """No configuration compiled, ran and matched the default (KT_NOVALID);
    ``result`` says what happened to each."""

    code, name = -2, "NOVALID"


class BackendUnavailable(KtuneError):
    """The backend or device cannot be used here (KT_NOBACKEND)."""

    code, name = -3, "NOBACKEND"


class OutOfMemory(KtuneError, MemoryError):
    code, name = -4, "NOMEM"


class KtuneIOError(KtuneError, OSError):
    code, name = -5, "IO"


class Interrupted(KtuneError):
    """A tuning stopped by kt_interrupt without a signal (a signal becomes
    the caller's own exception: KeyboardInterrupt for Ctrl-C)."""

    code, name = -6, "INTERRUPTED"


class NotFound(KtuneError, LookupError):
    """Nothing matched: no such kernel, no stored winner (KT_NOTFOUND)."""

    code, name = -7, "NOTFOUND"


class StoreError(KtuneError):
    """The results database could not be opened or written (KT_STORE)."""

    code, name = -8, "STORE"


class InternalError(KtuneError):
    code, name = -9, "INTERNAL"


class ArgumentError(InvalidInput, TypeError):
    """An array or value given to a kernel does not fit its @kernel
    declaration (dtype, rank, shape, device, layout); the message names the
    parameter and what was expected. Both a ValueError and a TypeError."""


_BY_CODE = {c.code: c for c in (InvalidInput, NoValidConfiguration, BackendUnavailable, OutOfMemory, KtuneIOError,
                                 Interrupted, NotFound, StoreError, InternalError)}


def error_for(code: int, message: str, result: Optional[Any] = None) -> KtuneError:
    cls = _BY_CODE.get(code, KtuneError)
    err = cls(message or cls.__doc__ or "ktune error", result)
    if cls is KtuneError:
        err.code = code
    return err
