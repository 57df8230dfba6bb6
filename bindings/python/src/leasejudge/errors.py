"""One exception class per LJ_E* code of the C ABI, all subclasses of LeasejudgeError.

Each carries .code (the C code, a negative int) and the C error's message as its
text (str(e), e.message). Where a builtin says the same, the class is one too:
InvalidArgumentError and ParseError are ValueErrors, NotFoundError a LookupError,
OutOfMemoryError a MemoryError, TimedOutError a TimeoutError, UnsupportedError a
NotImplementedError, so code that catches the builtin keeps working.
"""
from __future__ import annotations

from typing import Any


class LeasejudgeError(Exception):
    """A call of libleasejudge failed. code: the LJ_E* code; message: its sentence."""

    code: int = 0

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __reduce__(self) -> Any:
        return (type(self), (self.code, self.message))

    def __repr__(self) -> str:
        return "%s(%d, %r)" % (type(self).__name__, self.code, self.message)


class InvalidArgumentError(LeasejudgeError, ValueError):
    """LJ_EINVAL: a NULL pointer or an argument out of range."""
    code = -1


class OutOfMemoryError(LeasejudgeError, MemoryError):
    """LJ_ENOMEM."""
    code = -2


class ParseError(LeasejudgeError, ValueError):
    """LJ_EPARSE: bytes that are not what the format says."""
    code = -3


class ChangedError(LeasejudgeError):
    """LJ_ECHANGED: a compare-and-swap lost: the key moved since it was read."""
    code = -4


class NotFoundError(LeasejudgeError, LookupError):
    """LJ_ENOTFOUND: no such key, pid, file or executable."""
    code = -5


class SystemFailureError(LeasejudgeError):
    """LJ_EIO: a system call or a child process failed."""
    code = -6


class VersionError(LeasejudgeError):
    """LJ_EVERSION: an options struct of an unknown version, or a library of another ABI."""
    code = -7


class StoppedError(LeasejudgeError):
    """LJ_EUSER: a callback asked to stop (a callback that raised gives its own exception)."""
    code = -8


class TimedOutError(LeasejudgeError, TimeoutError):
    """LJ_ETIMEOUT."""
    code = -9


class UnsupportedError(LeasejudgeError, NotImplementedError):
    """LJ_EUNSUPPORTED: the platform or this build of the library lacks what is needed."""
    code = -10


class ExistsError(LeasejudgeError):
    """LJ_EEXISTS: create-if-absent found the key."""
    code = -11


class RefusedError(LeasejudgeError):
    """LJ_EREFUSED: a rule refuses the action."""
    code = -12


class StoreError(LeasejudgeError):
    """LJ_ESTORE: the store failed (server down, bucket missing, ...)."""
    code = -13


class BusyError(LeasejudgeError):
    """LJ_EBUSY: a live holder keeps the lock."""
    code = -14


class InternalError(LeasejudgeError):
    """LJ_EINTERNAL: a bug in leasejudge."""
    code = -15


class OutcomeUnknownError(LeasejudgeError):
    """LJ_EUNKNOWN: a write was sent and no answer came: it may have landed."""
    code = -16


#: The class of each code.
BY_CODE: dict[int, type[LeasejudgeError]] = {
    cls.code: cls for cls in (InvalidArgumentError, OutOfMemoryError, ParseError, ChangedError, NotFoundError,
                              SystemFailureError, VersionError, StoppedError, TimedOutError, UnsupportedError,
                              ExistsError, RefusedError, StoreError, BusyError, InternalError,
                              OutcomeUnknownError)
}


def error_for(code: int, message: str) -> LeasejudgeError:
    """The exception of code (a LeasejudgeError for a code this package does not know)."""
    cls = BY_CODE.get(code)
    return cls(code, message) if cls is not None else LeasejudgeError(code, message)


def code_of(exc: BaseException) -> int:
    """The LJ_E* code a store callback answers for exc: its own for a LeasejudgeError,
    LJ_ENOMEM for a MemoryError, else LJ_ESTORE (the store failed)."""
    if isinstance(exc, LeasejudgeError) and exc.code < 0:
        return exc.code
    if isinstance(exc, MemoryError):
        return OutOfMemoryError.code
    return StoreError.code
