"""Holding a lock: waiting for it (a deadline, a threading.Event, or an asyncio task's
cancellation), keeping it renewed in the background, and the with block that does
both and releases it.

Every rule is the library's (lj_lock_acquire_wait, lj_lock_heartbeat_*): the backoff
between tries, the renewal every third of the lease that keeps the lease length the
lock was taken with, the retries within the lease, what counts as lost. Judges add
LEASE_SKEW_MS (5 minutes) to every lease for clock skew.
"""
from __future__ import annotations

import asyncio
import ctypes
import math
import threading
from typing import Any, Callable, Mapping, Optional

from . import _lib
from .errors import ChangedError, NotFoundError, TimedOutError, error_for
from .lock import (AcquireOutcome, Acquisition, Execution, ExecutionState, Here, Lock, LockHolder, Text, _holder,
                   _Judging, _verdict)
from .store import Store

#: The longest wait one call of the C ABI takes (a day, in ms): a wait without a
#: timeout is made of turns of it.
_WAIT_TURN_MS = 86400000
_INT64_MAX = 2**63 - 1

#: on_lost(error): the loss as the exception of its code (ChangedError: the lock is
#: someone else's; TimedOutError: the lease ended without a renewal).
OnLost = Callable[[Exception], None]


def _wait_ms(timeout: Any) -> Optional[int]:
    """timeout in seconds as the C ABI's wait_ms (None: no end). Out of int64 it is
    handed on at int64's end, for the library to refuse."""
    if timeout is None:
        return None
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError("timeout must be a number of seconds or None, not %s" % type(timeout).__name__)
    if isinstance(timeout, float) and math.isnan(timeout):
        return -1  # no number: refused as a negative wait
    ms = timeout * 1000
    if ms >= _INT64_MAX:
        return _INT64_MAX
    if ms <= -_INT64_MAX:
        return -_INT64_MAX
    return int(ms)


def _check_cancel(cancel: Any) -> None:
    if cancel is not None and not callable(getattr(cancel, "is_set", None)):
        raise TypeError("cancel must be a threading.Event (anything with is_set()), not %s" % type(cancel).__name__)


def acquire_lock_wait(store: Store, key: Text, purpose: Text, *, timeout: Optional[float],
                      cancel: Optional[threading.Event] = None, holder: Optional[LockHolder] = None,
                      poll_min_ms: int = 0, poll_max_ms: int = 0, here: Optional[Here] = None,
                      describe: Optional[Callable[[Execution], ExecutionState]] = None,
                      gcloud_timeout_ms: int = 60000,
                      gcloud_env: Optional[Mapping[str, str]] = None) -> tuple[Optional[Lock], Acquisition]:
    """acquire_lock, tried again (the library's backoff: poll_min_ms, 0 its default,
    doubling up to poll_max_ms) while a live holder keeps the lock, its holder is
    unknown or a race is lost, for timeout seconds (0: one try; None: until acquired or
    cancelled). A holder provably gone is broken at once. Returns (the lock, or None;
    the last try's Acquisition) as acquire_lock does: a wait that ran out is (None,
    HELD/UNKNOWN/LOST_RACE). cancel set (seen within 20 ms) raises StoppedError
    (LJ_EUSER), nothing of ours left in the store. A negative timeout, or one over a
    day, is InvalidArgumentError; a store error ends the wait at once."""
    if not isinstance(store, Store):
        raise TypeError("store must be a Store, not %s" % type(store).__name__)
    _check_cancel(cancel)
    wait_ms = _wait_ms(timeout)
    k, p, keep = _lib.data(key, "key"), _lib.data(purpose, "purpose"), []  # type: ignore[var-annotated]
    h = _holder(holder, keep)
    judging = _Judging(here, describe, gcloud_timeout_ms, gcloud_env)
    wait = _lib.LockWaitOptions()
    _lib.call_plain("lj_lock_wait_options_init", ctypes.byref(wait), 1)
    wait.poll_min_ms, wait.poll_max_ms = _lib.int64(poll_min_ms, "poll_min_ms"), _lib.int64(poll_max_ms, "poll_max_ms")
    if cancel is not None:
        wait.cancelled = judging.cb.wrap(_lib.CANCELLED_FN, lambda _p: int(bool(cancel.is_set())))
    while True:
        wait.wait_ms = _WAIT_TURN_MS if wait_ms is None else wait_ms
        lock, acq = _acquire_turn(store, k, p, h, wait, judging)
        if lock is not None or wait_ms is not None:
            return lock, acq


def _acquire_turn(store: Store, k: bytes, p: bytes, h: Any, wait: Any,
                  judging: _Judging) -> tuple[Optional[Lock], Acquisition]:
    out, acq = ctypes.c_void_p(), _lib.LockAcquisition()
    try:
        _lib.call("lj_lock_acquire_wait", ctypes.byref(out), ctypes.byref(acq), store._ptr(), k, len(k), p, len(p), h,
                  ctypes.byref(wait), ctypes.byref(judging.opts), cause=[judging.cb, store._cause()])
        result = Acquisition(AcquireOutcome(acq.outcome), _verdict(acq.verdict) if acq.has_verdict else None,
                             int(acq.broke_at), int(acq.revision))
    except BaseException:
        _lib.lib().lj_lock_destroy(out)
        raise
    finally:
        _lib.lib().lj_lock_acquisition_clear(ctypes.byref(acq))
    return (Lock(out.value, store) if out.value else None), result


async def acquire_lock_async(store: Store, key: Text, purpose: Text, *, timeout: Optional[float],
                             **options: Any) -> tuple[Optional[Lock], Acquisition]:
    """acquire_lock_wait for asyncio: the wait runs in a thread of the loop's executor;
    cancelling the task stops it (within 20 ms; nothing of ours left in the store, a lock
    taken meanwhile released) and raises CancelledError. options: as acquire_lock_wait's
    (holder, poll_min_ms, poll_max_ms, here, describe, gcloud_timeout_ms, gcloud_env;
    cancel too)."""
    outer = options.pop("cancel", None)
    _check_cancel(outer)
    _wait_ms(timeout)  # a wrong type is raised here, not in the thread
    stop = threading.Event()
    if outer is not None:
        stop = _Either(stop, outer)  # type: ignore[assignment]
    loop = asyncio.get_running_loop()
    job = loop.run_in_executor(None, lambda: acquire_lock_wait(store, key, purpose, timeout=timeout, cancel=stop,
                                                               **options))
    try:
        return await asyncio.shield(job)
    except asyncio.CancelledError:
        stop.set()
        try:
            lock, _ = await job
        except Exception:  # the wait stopped (StoppedError) or failed: nothing is ours
            raise asyncio.CancelledError() from None
        if lock is not None:
            try:
                lock.release()
            finally:
                lock.close()
        raise


class _Either:
    """Set when either event is; set() sets the first."""

    def __init__(self, own: threading.Event, other: Any) -> None:
        self.own, self.other = own, other

    def is_set(self) -> bool:
        return self.own.is_set() or bool(self.other.is_set())

    def set(self) -> None:
        self.own.set()


class Heartbeat:
    """The library's heartbeat on a lock: renewed every third of its lease on a thread
    of its own; a failed renewal tried again while the lease runs. on_lost(error) is
    called once, on that thread, when the lock is lost (ChangedError: someone else's;
    TimedOutError: the lease ended unrenewed). While it runs the lock's renew() and
    release() are BusyError and its revision is the one last renewed. stop() (or
    closing the lock or its store) ends it; on_lost is never called after. On a
    callback_store the backend is called from the heartbeat's thread too."""

    def __init__(self, lock: Lock, on_lost: Optional[OnLost] = None) -> None:
        if not isinstance(lock, Lock):
            raise TypeError("lock must be a Lock, not %s" % type(lock).__name__)
        if on_lost is not None and not callable(on_lost):
            raise TypeError("on_lost must be callable, not %s" % type(on_lost).__name__)
        self._on_lost = on_lost
        self._mutex = threading.Lock()
        self._thread: Optional[int] = None
        self.error: Optional[Exception] = None  # the loss, once reported
        self.callback_error: Optional[BaseException] = None  # what on_lost raised
        self._fn = _lib.LOST_FN(self._lost)  # kept alive while the heartbeat runs
        out = ctypes.c_void_p()
        handle = lock._h()
        _lib.call("lj_lock_heartbeat_start", ctypes.byref(out), handle, self._fn, None)
        self._beat: Optional[int] = out.value
        self._lock, self._store = lock, lock._store
        lock._beat = self
        self._store._beats.add(self)

    def _lost(self, code: int, message: Optional[int], n: int, _payload: Any) -> None:
        self._thread = threading.get_ident()
        self.error = error_for(code, _lib.decode(_lib.at(message, n)))
        if self._on_lost is None:
            return
        try:
            self._on_lost(self.error)
        except BaseException as e:  # noqa: B902 - kept for the caller; a C thread cannot raise
            self.callback_error = e

    @property
    def lost(self) -> bool:
        """True once the lock is lost, or its lease's end passed without a renewal
        (possibly before on_lost runs): stop the work it guards. True once stopped."""
        beat = self._beat
        return True if beat is None else bool(_lib.fn("lj_lock_heartbeat_lost")(beat))

    @property
    def renewals(self) -> int:
        """Renewals that succeeded so far."""
        beat = self._beat
        return 0 if beat is None else int(_lib.fn("lj_lock_heartbeat_renewals")(beat))

    @property
    def retries(self) -> int:
        """Failed renewals tried again so far."""
        beat = self._beat
        return 0 if beat is None else int(_lib.fn("lj_lock_heartbeat_retries")(beat))

    @property
    def running(self) -> bool:
        return self._beat is not None

    def stop(self) -> None:
        """Stop renewing (waiting for a renewal in flight); the lock stays ours as last
        renewed: release it after this. Stopping twice is fine. RuntimeError from
        on_lost itself (its thread is the heartbeat's)."""
        if self._thread == threading.get_ident():
            raise RuntimeError("a heartbeat cannot be stopped from its own on_lost callback")
        with self._mutex:
            beat, self._beat = self._beat, None
            if beat is None:
                return
            _lib.lib().lj_lock_heartbeat_destroy(beat)  # releases the GIL while it waits
            self._lock._beat = None
            self._store._beats.discard(self)


def start_heartbeat(lock: Lock, on_lost: Optional[OnLost] = None) -> Heartbeat:
    """A Heartbeat on lock. InvalidArgumentError for a lock without a lease, BusyError
    when one runs already."""
    return Heartbeat(lock, on_lost)


class HeldLock:
    """What `with lock(...)` gives: the lock, renewed in the background until the block
    ends. token (== revision) is the fencing token; lost says the lock is gone."""

    def __init__(self, lock: Lock, acquisition: Acquisition, heartbeat: Optional[Heartbeat]) -> None:
        self.lock, self.acquisition, self.heartbeat = lock, acquisition, heartbeat

    @property
    def token(self) -> int:
        """The revision of our body as last renewed: the fencing token."""
        return self.lock.revision

    revision = token

    @property
    def lost(self) -> bool:
        return self.heartbeat.lost if self.heartbeat is not None else False

    @property
    def error(self) -> Optional[Exception]:
        """The loss (ChangedError, TimedOutError), once reported."""
        return self.heartbeat.error if self.heartbeat is not None else None


class lock:  # noqa: N801 - used as a function: `with leasejudge.lock(...) as held`
    """Hold the lock at key for a with block: wait for it (timeout seconds, None: no
    end; cancel: a threading.Event), renew it in the background (on_lost(error) when it
    is lost; held.lost says so), and at the end stop renewing and release it.

    Not acquired within timeout: TimedOutError (LJ_ETIMEOUT) with .acquisition, the
    last try's (HELD, UNKNOWN or LOST_RACE and the holder's verdict). Cancelled:
    StoppedError (LJ_EUSER). purpose None: "leasejudge lock KEY (pid N)", as the
    command writes. A lock without a lease (holder kind NONE) is not renewed."""

    def __init__(self, store: Store, key: Text, timeout: Optional[float], *, purpose: Optional[Text] = None,
                 cancel: Optional[threading.Event] = None, on_lost: Optional[OnLost] = None,
                 holder: Optional[LockHolder] = None, **options: Any) -> None:
        if on_lost is not None and not callable(on_lost):
            raise TypeError("on_lost must be callable, not %s" % type(on_lost).__name__)
        self._args = (store, key, timeout)
        if purpose is None:
            k = _lib.data(key, "key")
            purpose = _lib.call_text("lj_lock_purpose_default", k, len(k), 0) or ""
        self._options = dict(options, purpose=purpose, cancel=cancel, holder=holder)
        self._on_lost = on_lost
        self._held: Optional[HeldLock] = None

    def __enter__(self) -> HeldLock:
        store, key, timeout = self._args
        opts = dict(self._options)
        purpose = opts.pop("purpose")
        got, acq = acquire_lock_wait(store, key, purpose, timeout=timeout, **opts)
        if got is None:
            e = TimedOutError(TimedOutError.code, "the lock %r was not acquired within %s s: %s%s" % (
                key, timeout, acq.outcome.name.lower(),
                "" if acq.verdict is None else " (%s: %s)" % (acq.verdict.reason.code, acq.verdict.why)))
            e.acquisition = acq  # type: ignore[attr-defined]
            raise e
        try:
            beat = Heartbeat(got, self._on_lost) if got.renew_interval_ms > 0 else None
        except BaseException:
            _release_quietly(got, False)
            raise
        self._held = HeldLock(got, acq, beat)
        return self._held

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        held, self._held = self._held, None
        if held is None:
            return
        if held.heartbeat is not None:
            held.heartbeat.stop()
        _release_quietly(held.lock, held.heartbeat is not None and held.heartbeat.error is not None
                         or exc_type is not None)


def _release_quietly(got: Lock, quiet: bool) -> None:
    """Release and close got; a lock found gone or someone else's is no error when quiet
    (it was reported lost, or the block already raised)."""
    try:
        got.release()
    except (ChangedError, NotFoundError):
        if not quiet:
            raise
    finally:
        got.close()


__all__ = ["acquire_lock_wait", "acquire_lock_async", "Heartbeat", "start_heartbeat", "HeldLock", "lock"]
