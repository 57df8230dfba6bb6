"""Lock leases: judging a held lock's body, bodies themselves, and a lock's life on a
store (acquire, renew, release).

Times are milliseconds since the Unix epoch (int) or aware datetimes; None is now.
"""
from __future__ import annotations

import ctypes
import json
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Callable, Mapping, Optional, Union

from . import _lib
from .identity import HolderState
from .store import Store

Text = Union[str, bytes]
Time = Any  # int milliseconds, an aware datetime, or None (now)

#: A process holder's lease (10 minutes), renewed every third of it.
PROCESS_LEASE_MS = 600000
#: Added to every lease for clock skew between holder and judge (5 minutes).
LEASE_SKEW_MS = 300000


class LockKind(IntEnum):
    BREAK = 0
    HELD = 1
    UNKNOWN = 2

    @property
    def label(self) -> str:
        """"break", "held", "unknown"."""
        return _lib.static_text(_lib.lib().lj_lock_kind_name(int(self)))


class LockReason(IntEnum):
    """Why; the numbers never change. .code is the stable snake_case name."""
    NOT_READABLE = 1
    EXECUTION_FINISHED = 2
    EXECUTION_RUNNING = 3
    EXECUTION_NOT_FOUND_NO_LEASE = 4
    EXECUTION_NOT_FOUND_LEASE_ENDED = 5
    EXECUTION_NOT_FOUND_LEASE_RUNS = 6
    EXECUTION_UNKNOWN = 7
    PROCESS_GONE = 8
    NO_LEASE = 9
    LEASE_UNREADABLE = 10
    LEASE_ENDED = 11
    LEASE_RUNS = 12
    HOLDER_REBOOTED = 13
    PID_REUSED = 14
    STORE_LEASE_ENDED = 15
    STORE_LEASE_UNKNOWN = 16

    @property
    def code(self) -> str:
        """"not_readable", "lease_ended", ..."""
        return _lib.static_text(_lib.lib().lj_lock_reason_code(int(self)))


class MachineKind(IntEnum):
    ABSENT = 0  # no machine id stated: host names are compared
    NONE = 1    # no machine id (Cloud Run): a pid is never trusted
    ID = 2


class ExecutionKind(IntEnum):
    RUNNING = 0
    FINISHED = 1   # detail: how ("succeeded", "cancelled", ...)
    NOT_FOUND = 2  # Cloud Run does not know it
    UNKNOWN = 3    # Cloud Run could not be asked; detail: why


class HolderKind(IntEnum):
    NONE = 0       # no lease: a machine-local lock judged by its pid
    PROCESS = 1    # lease_ms is its lease
    EXECUTION = 2  # lease_ms is its longest run; execution names it


class AcquireOutcome(IntEnum):
    ACQUIRED = 0
    HELD = 1
    UNKNOWN = 2
    LOST_RACE = 3  # another writer moved the key meanwhile: not retried


@dataclass(frozen=True)
class LockVerdict:
    """The verdict on a held lock: kind, reason, manual_removal (held only: only a
    person can clear it) and the sentence naming the holder."""
    kind: LockKind
    reason: LockReason
    manual_removal: bool
    why: str

    def _c(self, keep: list[Any]) -> _lib.LockVerdict:
        raw = _lib.data(self.why, "why")
        keep.append(raw)
        return _lib.LockVerdict(int(self.kind), int(self.reason), int(bool(self.manual_removal)),
                                ctypes.cast(ctypes.c_char_p(raw), ctypes.c_void_p), len(raw))

    def text(self) -> str:
        """`<kind> <reason code> <why>`."""
        keep: list[Any] = []
        return _lib.call_text("lj_lock_verdict_text", ctypes.byref(self._c(keep))) or ""

    def json(self) -> str:
        """{"kind":..,"reason":..,"manualRemoval":..,"why":..} on one line."""
        keep: list[Any] = []
        return _lib.call_text("lj_lock_verdict_json", ctypes.byref(self._c(keep))) or ""


@dataclass(frozen=True)
class Execution:
    """A Cloud Run job execution."""
    project_id: str
    region: str
    name: str


@dataclass(frozen=True)
class ExecutionState:
    kind: ExecutionKind
    detail: str = ""


@dataclass
class Here:
    """The judging machine, for judging on another's behalf (and tests). alive(pid)
    says whether pid lives (True also when it cannot be told dead); owner_state(token)
    judges an owner token. None: this machine's own checks."""
    host: str
    machine_kind: MachineKind = MachineKind.NONE
    machine: str = ""
    alive: Optional[Callable[[float], bool]] = None
    owner_state: Optional[Callable[[str], HolderState]] = None


@dataclass
class LockHolder:
    """Who takes a lock: a process with a lease, an execution with its longest run, or
    a machine-local lock without lease. pid: the process of this machine the body
    names (0: this process)."""
    kind: HolderKind = HolderKind.PROCESS
    lease_ms: int = PROCESS_LEASE_MS
    execution: Optional[Execution] = None
    pid: int = 0


def _execution_ref(e: Execution, keep: list[Any]) -> _lib.ExecutionRef:
    if not isinstance(e, Execution):
        raise TypeError("execution must be an Execution, not %s" % type(e).__name__)
    raw = [_lib.data(e.project_id, "project_id"), _lib.data(e.region, "region"), _lib.data(e.name, "name")]
    keep.extend(raw)
    return _lib.ExecutionRef(raw[0], len(raw[0]), raw[1], len(raw[1]), raw[2], len(raw[2]))


def _verdict(c: _lib.LockVerdict) -> LockVerdict:
    why = _lib.decode(_lib.at(c.why, c.why_len))
    return LockVerdict(LockKind(c.kind), LockReason(c.reason), bool(c.manual_removal), why)


def _text_of(ptr: Optional[int], n: int) -> str:
    return _lib.decode(_lib.at(ptr, n))


class _Judging:
    """The lj_lock_options_t of one call, its callbacks and what they keep alive."""

    def __init__(self, here: Optional[Here], describe: Optional[Callable[[Execution], ExecutionState]],
                 gcloud_timeout_ms: int, gcloud_env: Optional[Mapping[str, str]]) -> None:
        self.cb = _lib.Callbacks()
        self.keep: list[Any] = []
        self.opts = _lib.LockOptions()
        _lib.fn("lj_lock_options_init")(ctypes.byref(self.opts), 1)
        self.opts.gcloud_timeout_ms = _lib.int64(gcloud_timeout_ms, "gcloud_timeout_ms")
        if describe is not None:
            self.opts.describe = self.cb.wrap(_lib.DESCRIBE_FN, self._describer(describe))
        if here is not None:
            self.here = self._here(here)
            self.opts.here = ctypes.pointer(self.here)
        if gcloud_env is not None:
            self.opts.gcloud_env, kept = _lib.env_block(gcloud_env, "gcloud_env")
            self.keep.append(kept)

    def _describer(self, describe: Callable[[Execution], ExecutionState]) -> Callable[..., int]:
        if not callable(describe):
            raise TypeError("describe must be callable")

        def run(state: int, ref: Any, _payload: Any) -> int:
            r = ref.contents
            got = describe(Execution(_text_of(r.project_id, r.project_id_len), _text_of(r.region, r.region_len),
                                     _text_of(r.name, r.name_len)))
            if not isinstance(got, ExecutionState):
                raise TypeError("describe must return an ExecutionState, not %s" % type(got).__name__)
            detail = _lib.data(got.detail, "detail")
            return int(_lib.lib().lj_execution_state_set(state, int(ExecutionKind(got.kind)), detail, len(detail)))
        return run

    def _here(self, here: Here) -> _lib.LockHere:
        if not isinstance(here, Here):
            raise TypeError("here must be a Here, not %s" % type(here).__name__)
        c = _lib.LockHere()
        _lib.fn("lj_lock_here_init")(ctypes.byref(c), 1)
        host, machine = _lib.data(here.host, "host"), _lib.data(here.machine, "machine")
        self.keep += [host, machine]
        c.host, c.host_len, c.machine, c.machine_len = host, len(host), machine, len(machine)
        c.machine_kind = int(MachineKind(here.machine_kind))
        if here.alive is not None:
            alive = here.alive

            def run_alive(out: Any, pid: float, _payload: Any) -> int:
                answer = alive(pid)
                if not isinstance(answer, bool):
                    raise TypeError("alive must return a bool, not %s" % type(answer).__name__)
                out[0] = int(answer)
                return 0
            c.alive = self.cb.wrap(_lib.ALIVE_FN, run_alive)
        if here.owner_state is not None:
            c.owner_state = self.cb.wrap(_lib.OWNER_STATE_FN, _owner_state(here.owner_state))
        return c


def _owner_state(judge: Callable[[str], HolderState]) -> Callable[..., int]:
    def run(out: Any, token: Optional[int], n: int, _payload: Any) -> int:
        out[0] = int(HolderState(judge(_text_of(token, n))))
        return 0
    return run


def judge_lock(body: Text, now: Time = None, *, here: Optional[Here] = None,
               describe: Optional[Callable[[Execution], ExecutionState]] = None,
               gcloud_timeout_ms: int = 60000, gcloud_env: Optional[Mapping[str, str]] = None) -> LockVerdict:
    """May the lock with this body be broken? A body that is not readable is a HELD
    verdict, not an error. describe(execution) answers for an execution holder (None:
    gcloud on PATH, run in gcloud_env when given)."""
    raw = _lib.data(body, "body")
    judging = _Judging(here, describe, gcloud_timeout_ms, gcloud_env)
    c = _lib.LockVerdict()
    try:
        _lib.call("lj_lock_judge", ctypes.byref(c), raw, len(raw), _lib.time_of(now, "now", 1000),
                  ctypes.byref(judging.opts), cause=judging.cb)
        return _verdict(c)
    finally:
        _lib.lib().lj_lock_verdict_clear(ctypes.byref(c))


def process_alive(pid: float) -> bool:
    """False only when pid is provably dead on this machine (kill(pid, 0): ESRCH)."""
    if isinstance(pid, bool) or not isinstance(pid, (int, float)):
        raise TypeError("pid must be a number, not %s" % type(pid).__name__)
    out = ctypes.c_int(-1)
    _lib.call("lj_process_alive", ctypes.byref(out), float(pid))
    return bool(out.value)


def _holder(holder: Optional[LockHolder], keep: list[Any]) -> Any:
    if holder is None:
        return None
    if not isinstance(holder, LockHolder):
        raise TypeError("holder must be a LockHolder, not %s" % type(holder).__name__)
    c = _lib.LockHolder()
    _lib.fn("lj_lock_holder_init")(ctypes.byref(c), 2)
    c.kind = int(HolderKind(holder.kind))
    c.lease_ms = _lib.int64(holder.lease_ms, "lease_ms")
    c.pid = _lib.int32(holder.pid, "pid")
    if holder.execution is not None:
        c.execution = _execution_ref(holder.execution, keep)
    keep.append(c)
    return ctypes.byref(c)


def lock_body(purpose: Text, now: Time = None, holder: Optional[LockHolder] = None,
              id: Optional[Text] = None) -> str:
    """A new body for this process taking a lock (id None: a fresh UUID)."""
    p, i, keep = _lib.data(purpose, "purpose"), _lib.optional_data(id, "id"), []  # type: ignore[var-annotated]
    h = _holder(holder, keep)
    return _lib.call_text("lj_lock_body_new", p, len(p), _lib.time_of(now, "now", 1000), h, i,
                          len(i) if i else 0) or ""


def renew_lock_body(body: Text, now: Time = None, lease_ms: int = PROCESS_LEASE_MS) -> str:
    """The body with its lease moved to now + lease_ms + skew. ParseError: no body."""
    raw = _lib.data(body, "body")
    return _lib.call_text("lj_lock_body_renew", raw, len(raw), _lib.time_of(now, "now", 1000),
                          _lib.int64(lease_ms, "lease_ms")) or ""


def parse_lock_body(body: Text) -> dict[str, Any]:
    """The body as the lock schema reads it (the JavaScript parseLockBody()), as a dict.
    ParseError when it is not a readable lock body."""
    raw = _lib.data(body, "body")
    return json.loads(_lib.call_bytes("lj_lock_body_parse", raw, len(raw)) or b"null")


def lock_body_id(body: Text) -> str:
    """The body's acquisition id. ParseError: not readable; NotFoundError: no id."""
    raw = _lib.data(body, "body")
    return _lib.call_text("lj_lock_body_id", raw, len(raw)) or ""


def format_lock_time(unix_ms: int) -> str:
    """A time as lock bodies write it (toISOString())."""
    return _lib.call_text("lj_lock_time_format", _lib.int64(unix_ms, "unix_ms")) or ""


def parse_lock_time(text: Text) -> int:
    """Milliseconds since the epoch of a lock body's time (Date.parse, ISO forms)."""
    raw, out = _lib.data(text, "text"), ctypes.c_int64()
    _lib.call("lj_lock_time_parse", ctypes.byref(out), raw, len(raw))
    return out.value


def parse_execution_state(exit_code: int, stdout: Text, stderr: Text) -> ExecutionState:
    """Read `gcloud run jobs executions describe --format=json` output."""
    out, err = _lib.data(stdout, "stdout"), _lib.data(stderr, "stderr")
    kind = ctypes.c_int(-1)
    detail = _lib.call_bytes_after(ctypes.byref(kind), "lj_execution_state_parse",
                                   _lib.int32(exit_code, "exit_code"), out, len(out), err, len(err))
    return ExecutionState(ExecutionKind(kind.value), _lib.decode(detail or b""))


def describe_execution_args(execution: Execution) -> list[str]:
    """The arguments after `gcloud` that describing an execution runs."""
    keep: list[Any] = []
    ref = _execution_ref(execution, keep)
    raw = _lib.call_bytes("lj_execution_describe_args", None, ctypes.byref(ref)) or b""
    return [_lib.decode(a) for a in raw.split(b"\0")[:-1]]


# --- the lock's life on a store ----------------------------------------------------------

@dataclass(frozen=True)
class Acquisition:
    """What acquiring did: its outcome, the verdict on a holder found (None when none
    was), the revision of the body broken (0: none) and ours (the fencing token)."""
    outcome: AcquireOutcome
    verdict: Optional[LockVerdict]
    broke_at: int
    revision: int


class Lock:
    """A lock this process holds on a store (which it keeps open while it lives).
    Use as a context manager to release it at the end of the block."""

    def __init__(self, handle: int, store: Store) -> None:
        self._handle: Optional[int] = handle
        self._store = store
        self._beat: Any = None  # its Heartbeat while one runs (holding.py)

    def _h(self) -> int:
        self._store._ptr()  # the store must still be open
        if self._handle is None:
            raise ValueError("the lock handle is closed")
        return self._handle

    def renew(self, now: Time = None) -> None:
        """Move our lease forward. ChangedError: the lock is no longer ours."""
        _lib.call("lj_lock_renew", self._h(), _lib.time_of(now, "now", 1000), cause=self._store._cause())

    def release(self) -> None:
        """Remove the lock while its body is ours. NotFoundError, ChangedError."""
        _lib.call("lj_lock_release", self._h(), cause=self._store._cause())

    @property
    def revision(self) -> int:
        return int(_lib.fn("lj_lock_revision")(self._h()))

    @property
    def renew_interval_ms(self) -> int:
        return int(_lib.fn("lj_lock_renew_interval_ms")(self._h()))

    @property
    def id(self) -> str:
        return _lib.call_text("lj_lock_id", self._h()) or ""

    @property
    def body(self) -> str:
        return _lib.call_text("lj_lock_body", self._h()) or ""

    def close(self) -> None:
        """Forget the handle (the lock stays in the store: release it first), stopping
        its heartbeat."""
        beat = self._beat
        if beat is not None:
            beat.stop()
        handle, self._handle = self._handle, None
        if handle is not None:
            _lib.lib().lj_lock_destroy(handle)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __enter__(self) -> "Lock":
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            if self._handle is not None:
                self.release()
        finally:
            self.close()


def acquire_lock(store: Store, key: Text, purpose: Text, *, holder: Optional[LockHolder] = None,
                 now: Time = None, here: Optional[Here] = None,
                 describe: Optional[Callable[[Execution], ExecutionState]] = None, gcloud_timeout_ms: int = 60000,
                 gcloud_env: Optional[Mapping[str, str]] = None) -> tuple[Optional[Lock], Acquisition]:
    """Take the lock at key: create it when absent; when held, judge the holder and on
    BREAK delete its body at the revision judged, then create ours. Returns (the lock,
    or None unless ACQUIRED; what happened)."""
    if not isinstance(store, Store):
        raise TypeError("store must be a Store, not %s" % type(store).__name__)
    k, p, keep = _lib.data(key, "key"), _lib.data(purpose, "purpose"), []  # type: ignore[var-annotated]
    h = _holder(holder, keep)
    judging = _Judging(here, describe, gcloud_timeout_ms, gcloud_env)
    out, acq = ctypes.c_void_p(), _lib.LockAcquisition()
    try:
        _lib.call("lj_lock_acquire", ctypes.byref(out), ctypes.byref(acq), store._ptr(), k, len(k), p, len(p), h,
                  _lib.time_of(now, "now", 1000), ctypes.byref(judging.opts), cause=[judging.cb, store._cause()])
        result = Acquisition(AcquireOutcome(acq.outcome), _verdict(acq.verdict) if acq.has_verdict else None,
                             int(acq.broke_at), int(acq.revision))
    except BaseException:
        _lib.lib().lj_lock_destroy(out)
        raise
    finally:
        _lib.lib().lj_lock_acquisition_clear(ctypes.byref(acq))
    return (Lock(out.value, store) if out.value else None), result


def open_lock(store: Store, key: Text, id: Text, lease_ms: int = 0) -> Lock:
    """A handle for the lock at key while its body has acquisition id `id`, to renew or
    release a lock taken before. NotFoundError: no lock; ChangedError: someone else's."""
    if not isinstance(store, Store):
        raise TypeError("store must be a Store, not %s" % type(store).__name__)
    k, i = _lib.data(key, "key"), _lib.data(id, "id")
    out = ctypes.c_void_p()
    _lib.call("lj_lock_open", ctypes.byref(out), store._ptr(), k, len(k), i, len(i), _lib.int64(lease_ms, "lease_ms"),
              cause=store._cause())
    return Lock(out.value or 0, store)
