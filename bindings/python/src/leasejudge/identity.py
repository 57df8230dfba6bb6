"""Process identity: boot id, step owner tokens, lease identities, the machine id,
and judging whether the process a token names is the one alive now."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from enum import IntEnum
from typing import Optional, Union

from . import _lib
from .errors import NotFoundError

Text = Union[str, bytes]


class HolderState(IntEnum):
    """lj_holder_state_t: is the process a token names the one alive now?"""
    ALIVE = 0
    DEAD = 1
    RECYCLED = 2  # the pid lives with another start
    OTHER_BOOT = 3
    UNKNOWN = 4


@dataclass(frozen=True)
class OwnerToken:
    """The fields of a step owner token "<boot id>.<pid>.<start ms base36>"."""
    boot_id: str
    pid: int
    start_ms: int


@dataclass(frozen=True)
class HolderVerdict:
    """A holder's state and the sentence saying why."""
    state: HolderState
    why: str


def boot_id() -> str:
    """This node's boot id, or "no-boot-id" where unreadable."""
    return _lib.call_text("lj_boot_id") or ""


def owner_token(pid: int = 0) -> str:
    """The step owner token of pid (0: this process). NotFoundError: no such pid."""
    return _lib.call_text("lj_owner_token", _lib.int32(pid, "pid")) or ""


def parse_owner_token(token: Text) -> OwnerToken:
    """A token's fields. ParseError for text that is no owner token."""
    raw = _lib.data(token, "token")
    pid, start = ctypes.c_int32(), ctypes.c_int64()
    boot = _lib.call_bytes("lj_owner_token_parse", ctypes.byref(pid), ctypes.byref(start), raw, len(raw))
    return OwnerToken(_lib.decode(boot or b""), pid.value, start.value)


def lease_identity(pid: int = 0) -> str:
    """The lease identity line of pid (0: this process). NotFoundError when unreadable."""
    return _lib.call_text("lj_lease_identity", _lib.int32(pid, "pid")) or ""


def machine_id() -> Optional[str]:
    """The machine id (32 lowercase hex), None where the machine has none."""
    return _lib.call_text("lj_machine_id", ok=(NotFoundError.code,))


def judge_owner(token: Text, start_tolerance_ms: int = 5000) -> HolderVerdict:
    """Judge a step owner token on this machine. A malformed token is UNKNOWN."""
    raw = _lib.data(token, "token")
    opts = _lib.OwnerOptions(1, _lib.int64(start_tolerance_ms, "start_tolerance_ms"))
    state = ctypes.c_int(-1)
    why = _lib.call_bytes_after(ctypes.byref(state), "lj_owner_judge", raw, len(raw), ctypes.byref(opts))
    return HolderVerdict(HolderState(state.value), _lib.decode(why or b""))


def judge_lease_identity(pid: int, record: Text, age_min: int) -> HolderVerdict:
    """The lease-directory rule for a pid, its recorded identity and the lease's age in
    minutes: ALIVE, DEAD or RECYCLED (the lease script's "stale")."""
    raw = _lib.data(record, "record")
    state = ctypes.c_int(-1)
    why = _lib.call_bytes_after(ctypes.byref(state), "lj_lease_identity_judge", _lib.int32(pid, "pid"), raw,
                                len(raw), _lib.int64(age_min, "age_min"))
    return HolderVerdict(HolderState(state.value), _lib.decode(why or b""))
