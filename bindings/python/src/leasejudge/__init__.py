"""leasejudge: is the holder of a lock, a lease or a running step still alive?

A pure-Python package over libleasejudge's C ABI (ctypes). Verdicts are dataclasses,
kinds and reason codes IntEnums with the C numbers, failures one exception class per
LJ_E* code (all LeasejudgeError, with .code and the library's message).

The library is found through LEASEJUDGE_LIBRARY (a path), next to the prefix this
package is installed under, or by ctypes.util.find_library("leasejudge");
leasejudge.load(path) loads an explicit one. It is loaded on first use.

    >>> import leasejudge
    >>> v = leasejudge.judge_lock(body, here=leasejudge.Here("build-1"))
    >>> v.kind, v.reason.code, v.why
"""
from __future__ import annotations

from . import _lib
from ._lib import candidates, load
from .errors import (BusyError, ChangedError, ExistsError, InternalError, InvalidArgumentError, LeasejudgeError,
                     NotFoundError, OutcomeUnknownError, OutOfMemoryError, ParseError, RefusedError, StoppedError, StoreError,
                     SystemFailureError, TimedOutError, UnsupportedError, VersionError)
from .holding import Heartbeat, HeldLock, acquire_lock_async, acquire_lock_wait, lock, start_heartbeat
from .identity import (HolderState, HolderVerdict, OwnerToken, boot_id, judge_lease_identity, judge_owner,
                       lease_identity, machine_id, owner_token, parse_owner_token)
from .leasedir import (LeaseDir, LeaseOptions, LeaseOutput, LeaseState, lease_dir_path, lease_state,
                       run_lease_command)
from .lock import (LEASE_SKEW_MS, PROCESS_LEASE_MS, AcquireOutcome, Acquisition, Execution, ExecutionKind,
                   ExecutionState, Here, HolderKind, Lock, LockHolder, LockKind, LockReason, LockVerdict,
                   MachineKind, acquire_lock, describe_execution_args, format_lock_time, judge_lock, lock_body,
                   lock_body_id, open_lock, parse_execution_state, parse_lock_body, parse_lock_time, process_alive,
                   renew_lock_body)
from .step import (RESTART_REASON, LinesPlan, PlanSummary, ResolvedRules, Rules, StepAction, StepReason, StepRule, StepVerdict,
                   SweepCounts, SweepKey, SweepOutcome, SweepReport, SweepWrite, end_one, end_value, plan_lines,
                   plan_step, step_key, sweep)
from .store import (Backend, CallbackStore, Entry, Store, callback_store, file_store, memory_store, nats_store,
                    open_store)

__version__ = "0.1.0"


def library_version() -> str:
    """The loaded library's version, "MAJOR.MINOR.PATCH"."""
    return _lib.static_text(_lib.lib().lj_version())


def strerror(code: int) -> str:
    """The short, stable name of an LJ_E* code ("changed", ...)."""
    return _lib.static_text(_lib.lib().lj_strerror(_lib.int32(code, "code")))


__all__ = [
    "load", "candidates", "library_version", "strerror",
    "LeasejudgeError", "InvalidArgumentError", "OutOfMemoryError", "ParseError", "ChangedError", "NotFoundError",
    "SystemFailureError", "VersionError", "StoppedError", "TimedOutError", "UnsupportedError", "ExistsError",
    "RefusedError", "StoreError", "BusyError", "InternalError", "OutcomeUnknownError",
    "HolderState", "HolderVerdict", "OwnerToken", "boot_id", "owner_token", "parse_owner_token", "lease_identity",
    "machine_id", "judge_owner", "judge_lease_identity",
    "PROCESS_LEASE_MS", "LEASE_SKEW_MS", "LockKind", "LockReason", "MachineKind", "ExecutionKind", "HolderKind",
    "AcquireOutcome", "LockVerdict", "Execution", "ExecutionState", "Here", "LockHolder", "Acquisition", "Lock",
    "judge_lock", "process_alive", "lock_body", "renew_lock_body", "parse_lock_body", "lock_body_id",
    "format_lock_time", "parse_lock_time", "parse_execution_state", "describe_execution_args", "acquire_lock",
    "open_lock", "acquire_lock_wait", "acquire_lock_async", "Heartbeat", "start_heartbeat", "HeldLock", "lock",
    "RESTART_REASON", "Rules", "ResolvedRules", "StepAction", "StepReason", "StepRule", "SweepOutcome", "StepVerdict", "PlanSummary",
    "LinesPlan", "SweepCounts", "SweepKey", "SweepWrite", "SweepReport", "plan_step", "plan_lines", "step_key",
    "end_value",    "sweep", "end_one",
    "Entry", "Store", "Backend", "CallbackStore", "memory_store", "file_store", "nats_store", "open_store",
    "callback_store",
    "LeaseState", "LeaseOutput", "LeaseOptions", "LeaseDir", "lease_dir_path", "lease_state", "run_lease_command",
]
