"""The Python package holding a lock on the file store (and in memory): a wait that
times out with the holder's verdict, a wait cancelled by a threading.Event and by an
asyncio task's cancellation, a wait that gets the lock once its holder releases it,
the heartbeat renewing and reporting a loss once, the `with lock(...)` block; bad
input on every new entry point answered with its documented exception."""
import asyncio
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_support  # noqa: E402

python_support.bootstrap()

import pytest  # noqa: E402

import leasejudge as lj  # noqa: E402

LJ_EUSER, LJ_ECHANGED, LJ_ETIMEOUT = -8, -4, -9  # capi/include/leasejudge.h


@pytest.fixture()
def store(tmp_path):
    s = lj.open_store("file:" + str(tmp_path / "locks"), create=True)
    yield s
    s.close()


def later(seconds, action):
    t = threading.Timer(seconds, action)
    t.start()
    return t


def settled(got, store, key):
    """The store's entry at a moment the lock's token stands still and equals its
    revision (a renewal may land between two reads); None when none came."""
    for _ in range(100):
        before = got.revision
        entry = store.get(key)
        if got.revision == before and entry.revision == before:
            return entry
        time.sleep(0.005)
    return None


def test_a_wait_that_times_out_answers_the_holders_verdict(store):
    mine, _ = lj.acquire_lock(store, "deploy", "first")
    body = store.get("deploy")
    start = time.monotonic()
    none, acq = lj.acquire_lock_wait(store, "deploy", "second", timeout=0.4)
    took = time.monotonic() - start
    assert none is None
    assert (acq.outcome, acq.verdict.kind, acq.verdict.reason) == (lj.AcquireOutcome.HELD, lj.LockKind.HELD,
                                                                   lj.LockReason.LEASE_RUNS)
    assert (acq.broke_at, acq.revision) == (0, 0)
    assert 0.4 <= took < 3, took
    assert store.get("deploy") == body  # the holder's body, untouched
    none, acq = lj.acquire_lock_wait(store, "deploy", "one try", timeout=0)
    assert none is None and acq.outcome is lj.AcquireOutcome.HELD
    mine.release()
    mine.close()


def test_a_wait_cancelled_by_an_event_leaves_nothing(store):
    mine, _ = lj.acquire_lock(store, "deploy", "first")
    body = store.get("deploy")
    cancel = threading.Event()
    later(0.3, cancel.set)
    start = time.monotonic()
    with pytest.raises(lj.StoppedError) as e:
        lj.acquire_lock_wait(store, "deploy", "second", timeout=60, cancel=cancel)
    assert e.value.code == LJ_EUSER and type(e.value) is lj.StoppedError
    assert 0.3 <= time.monotonic() - start < 3
    assert store.get("deploy") == body
    with pytest.raises(lj.StoppedError):  # set before: not one try
        lj.acquire_lock_wait(store, "free", "never", timeout=60, cancel=cancel)
    with pytest.raises(lj.NotFoundError):
        store.get("free")
    mine.release()


def test_a_wait_gets_the_lock_its_holder_releases(store):
    first, _ = lj.acquire_lock(store, "deploy", "first")
    old = first.revision
    later(0.3, first.release)
    second, acq = lj.acquire_lock_wait(store, "deploy", "second", timeout=30, poll_min_ms=10, poll_max_ms=50)
    assert acq.outcome is lj.AcquireOutcome.ACQUIRED and second.revision == acq.revision > old
    assert json.loads(store.get("deploy").value)["purpose"] == "second"
    second.release()


def test_asyncio_wait_and_its_cancellation(store):
    async def run():
        got, acq = await lj.acquire_lock_async(store, "a", "async", timeout=5)
        assert acq.outcome is lj.AcquireOutcome.ACQUIRED and got.revision == store.get("a").revision
        body = store.get("a")
        task = asyncio.ensure_future(lj.acquire_lock_async(store, "a", "waiting", timeout=60))
        await asyncio.sleep(0.3)
        start = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - start < 2
        assert store.get("a") == body
        none, acq = await lj.acquire_lock_async(store, "a", "short", timeout=0.2)
        assert none is None and acq.outcome is lj.AcquireOutcome.HELD
        got.release()
    asyncio.run(run())


def test_heartbeat_renews_keeping_the_lease_taken(store):
    got, acq = lj.acquire_lock(store, "hb", "beat", holder=lj.LockHolder(lease_ms=600))
    first = json.loads(got.body)
    beat = lj.start_heartbeat(got)
    with pytest.raises(lj.BusyError):
        got.renew()
    with pytest.raises(lj.BusyError):
        got.release()
    with pytest.raises(lj.BusyError):
        lj.start_heartbeat(got)
    time.sleep(0.9)  # a renewal every 200 ms
    assert beat.renewals >= 2 and beat.retries == 0 and not beat.lost
    entry = settled(got, store, "hb")
    assert entry is not None and entry.revision > acq.revision
    body = json.loads(entry.value)
    assert body["id"] == first["id"]
    # now + 600 ms + the skew: the lease taken, not the 10-minute default.
    until = lj.parse_lock_time(body["leaseUntil"]) - int(time.time() * 1000)
    assert lj.LEASE_SKEW_MS <= until <= lj.LEASE_SKEW_MS + 600, until
    beat.stop()
    beat.stop()
    assert beat.lost and not beat.running
    got.release()


def test_heartbeat_reports_a_lock_taken_by_another_writer_once(store):
    got, _ = lj.acquire_lock(store, "hb", "beat", holder=lj.LockHolder(lease_ms=600))
    seen = []
    fired = threading.Event()

    def on_lost(err):
        seen.append((type(err), err.code, threading.get_ident()))
        fired.set()
    beat = lj.start_heartbeat(got, on_lost)
    entry = store.get("hb")
    store.update("hb", b'{"purpose":"another writer"}', entry.revision)
    assert fired.wait(5)
    time.sleep(0.5)
    assert seen == [(lj.ChangedError, LJ_ECHANGED, seen[0][2])] and seen[0][2] != threading.get_ident()
    assert beat.lost and isinstance(beat.error, lj.ChangedError)
    beat.stop()
    with pytest.raises(lj.ChangedError):
        got.release()
    assert store.get("hb").value == b'{"purpose":"another writer"}'


def test_an_on_lost_that_raises_or_stops_its_heartbeat_is_kept_not_lost(store):
    got, _ = lj.acquire_lock(store, "hb", "beat", holder=lj.LockHolder(lease_ms=600))
    fired = threading.Event()
    beat = None

    def on_lost(err):
        fired.set()
        beat.stop()  # the heartbeat's own thread: refused
    beat = lj.start_heartbeat(got, on_lost)
    store.update("hb", b'{"purpose":"another writer"}', store.get("hb").revision)
    assert fired.wait(5)
    deadline = time.monotonic() + 5
    while beat.callback_error is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert isinstance(beat.callback_error, RuntimeError) and "own on_lost" in str(beat.callback_error)
    assert beat.running and beat.lost
    beat.stop()
    assert not beat.running
    got.close()


def test_with_lock_acquires_renews_and_releases(store):
    with lj.lock(store, "w", timeout=5, holder=lj.LockHolder(lease_ms=600)) as held:
        assert held.token == held.revision and settled(held.lock, store, "w") is not None
        assert json.loads(store.get("w").value)["purpose"] == "leasejudge lock w (pid %d)" % os.getpid()
        time.sleep(0.5)
        assert settled(held.lock, store, "w") is not None and held.heartbeat.renewals >= 1 and not held.lost
        with pytest.raises(lj.TimedOutError) as e:
            with lj.lock(store, "w", timeout=0.2, purpose="second"):
                pass
        assert e.value.code == LJ_ETIMEOUT and e.value.acquisition.outcome is lj.AcquireOutcome.HELD
        assert e.value.acquisition.verdict.reason is lj.LockReason.LEASE_RUNS
    with pytest.raises(lj.NotFoundError):
        store.get("w")
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(lj.StoppedError):
        with lj.lock(store, "w", timeout=5, cancel=cancel):
            pass


def test_with_lock_reports_a_loss_and_ends_quietly(store):
    lost = []
    with lj.lock(store, "w", timeout=5, holder=lj.LockHolder(lease_ms=600), on_lost=lost.append) as held:
        entry = store.get("w")
        store.update("w", b'{"purpose":"another writer"}', entry.revision)
        deadline = time.monotonic() + 5
        while not lost and time.monotonic() < deadline:
            time.sleep(0.02)
        assert held.lost and [type(e) for e in lost] == [lj.ChangedError] and held.error is lost[0]
    assert store.get("w").value == b'{"purpose":"another writer"}'  # not ours: left alone


def test_closing_the_store_stops_its_heartbeats(tmp_path):
    s = lj.open_store("file:" + str(tmp_path / "l"), create=True)
    got, _ = lj.acquire_lock(s, "k", "p", holder=lj.LockHolder(lease_ms=600))
    beat = lj.start_heartbeat(got)
    s.close()
    assert not beat.running and beat.lost
    with pytest.raises(ValueError, match="store is closed"):
        got.revision


def test_bad_input_on_every_new_entry_point(store):
    nolease, _ = lj.acquire_lock(store, "none", "p", holder=lj.LockHolder(kind=lj.HolderKind.NONE, lease_ms=0))
    for bad in (None, "file:/tmp", 5):
        with pytest.raises(TypeError, match="store must be a Store"):
            lj.acquire_lock_wait(bad, "k", "p", timeout=1)
    for key in (None, 5, ["k"]):
        with pytest.raises(TypeError, match="key must be str or bytes"):
            lj.acquire_lock_wait(store, key, "p", timeout=1)
    with pytest.raises(lj.InvalidArgumentError):
        lj.acquire_lock_wait(store, "", "p", timeout=1)
    with pytest.raises(TypeError, match="purpose must be str or bytes"):
        lj.acquire_lock_wait(store, "k", None, timeout=1)
    for t in ("30", b"1", [1], True):
        with pytest.raises(TypeError, match="timeout must be a number"):
            lj.acquire_lock_wait(store, "k", "p", timeout=t)
    for t in (-1, -0.001, 86400.001, 1e300, float("inf"), float("-inf"), float("nan"), 2**80):
        with pytest.raises(lj.InvalidArgumentError):
            lj.acquire_lock_wait(store, "k", "p", timeout=t)
    for kw in ({"poll_min_ms": -1}, {"poll_max_ms": -5}, {"poll_min_ms": 100, "poll_max_ms": 10},
               {"poll_min_ms": 86400001}):
        with pytest.raises(lj.InvalidArgumentError):
            lj.acquire_lock_wait(store, "k", "p", timeout=1, **kw)
    with pytest.raises(ValueError):
        lj.acquire_lock_wait(store, "k", "p", timeout=1, poll_min_ms=2**64)
    with pytest.raises(TypeError, match="cancel must be a threading.Event"):
        lj.acquire_lock_wait(store, "k", "p", timeout=1, cancel="yes")
    with pytest.raises(TypeError, match="holder must be a LockHolder"):
        lj.acquire_lock_wait(store, "k", "p", timeout=1, holder={})
    with pytest.raises(lj.InvalidArgumentError):
        lj.acquire_lock_wait(store, "k", "p", timeout=1, holder=lj.LockHolder(lease_ms=-1))
    with pytest.raises(lj.NotFoundError):
        store.get("k")  # nothing written by any of these
    for bad in (None, "lock", nolease.id):
        with pytest.raises(TypeError, match="lock must be a Lock"):
            lj.start_heartbeat(bad)
    with pytest.raises(TypeError, match="on_lost must be callable"):
        lj.start_heartbeat(nolease, on_lost=5)
    with pytest.raises(lj.InvalidArgumentError):
        lj.start_heartbeat(nolease)  # no lease to renew
    with pytest.raises(TypeError, match="on_lost must be callable"):
        lj.lock(store, "k", 1, on_lost="x")
    with pytest.raises(TypeError, match="store must be a Store"):
        with lj.lock(None, "k", 1):
            pass
    with pytest.raises(lj.InvalidArgumentError):
        with lj.lock(store, "", 1):
            pass
    with pytest.raises(lj.InvalidArgumentError):
        with lj.lock(store, "k", -3):
            pass
    with pytest.raises(TypeError, match="timeout must be a number"):
        asyncio.run(lj.acquire_lock_async(store, "k", "p", timeout="1"))
    with pytest.raises(TypeError, match="cancel must be a threading.Event"):
        asyncio.run(lj.acquire_lock_async(store, "k", "p", timeout=1, cancel=3))
    with pytest.raises(lj.InvalidArgumentError):
        asyncio.run(lj.acquire_lock_async(store, "k", "p", timeout=-1))
    nolease.close()
    with pytest.raises(ValueError, match="lock handle is closed"):
        lj.start_heartbeat(nolease)


if __name__ == "__main__":
    python_support.run_pytest(__file__)
