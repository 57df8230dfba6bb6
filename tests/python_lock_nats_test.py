"""The Python package holding a lock on a real NATS JetStream bucket (a nats-server this
test starts on 127.0.0.1, stopped also on failure): a wait that times out, a wait
cancelled, a renewal that fails while the server is stopped (SIGSTOP, shorter than
the lease) and recovers once it runs again, and a lease lost while the server stays
stopped past it, reported once with LJ_ETIMEOUT; a lock taken by another writer
reported once with LJ_ECHANGED."""
import json
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from python_nats_test import open_bucket, server  # noqa: E402,F401 - the fixture

import pytest  # noqa: E402

import leasejudge as lj  # noqa: E402

LJ_EUSER, LJ_ECHANGED, LJ_ETIMEOUT = -8, -4, -9  # capi/include/leasejudge.h


def bucket(url, name):
    return open_bucket(url, name, request_timeout_ms=300, reconnect_wait_ms=100)


def stopped(proc, seconds):
    """The server frozen (SIGSTOP) for seconds, then running again (SIGCONT)."""
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        time.sleep(seconds)
    finally:
        os.kill(proc.pid, signal.SIGCONT)


def test_wait_times_out_and_is_cancelled(server):
    _, url = server
    with bucket(url, "wait") as store:
        first, _ = lj.acquire_lock(store, "lock.w", "first")
        body = store.get("lock.w")
        start = time.monotonic()
        none, acq = lj.acquire_lock_wait(store, "lock.w", "second", timeout=0.5)
        assert none is None and 0.5 <= time.monotonic() - start < 5
        assert (acq.outcome, acq.verdict.reason) == (lj.AcquireOutcome.HELD, lj.LockReason.LEASE_RUNS)
        cancel = threading.Event()
        threading.Timer(0.3, cancel.set).start()
        with pytest.raises(lj.StoppedError) as e:
            lj.acquire_lock_wait(store, "lock.w", "second", timeout=60, cancel=cancel)
        assert e.value.code == LJ_EUSER
        assert store.get("lock.w") == body
        threading.Timer(0.3, first.release).start()
        got, acq = lj.acquire_lock_wait(store, "lock.w", "third", timeout=10)
        assert acq.outcome is lj.AcquireOutcome.ACQUIRED and got.revision == store.get("lock.w").revision
        got.release()


def test_a_renewal_failing_within_the_lease_recovers(server):
    proc, url = server
    lost = []
    with bucket(url, "renew") as store:
        with lj.lock(store, "lock.r", timeout=5, holder=lj.LockHolder(lease_ms=4000), on_lost=lost.append) as held:
            deadline = time.monotonic() + 5
            while held.heartbeat.renewals < 1 and time.monotonic() < deadline:
                time.sleep(0.02)  # one renewal (every 1333 ms)
            before = held.heartbeat.renewals
            assert before >= 1
            stopped(proc, 2.0)  # shorter than the lease: at least one renewal fails
            time.sleep(2.0)
            beat = held.heartbeat
            assert (beat.retries >= 1, beat.renewals > before, beat.lost, lost) == (True, True, False, [])
            entry = None
            for _ in range(100):  # at a moment no renewal lands between the reads
                before = held.token
                entry = store.get("lock.r")
                if held.token == before == entry.revision:
                    break
                time.sleep(0.005)
            assert held.token == entry.revision
            assert json.loads(entry.value)["id"] == held.lock.id
        with pytest.raises(lj.NotFoundError):
            store.get("lock.r")


def test_a_lease_ended_while_the_server_stops_is_reported_once(server):
    proc, url = server
    lost = []
    fired = threading.Event()

    def on_lost(err):
        lost.append((type(err), err.code))
        fired.set()
    with bucket(url, "lost") as store:
        got, _ = lj.acquire_lock(store, "lock.l", "short", holder=lj.LockHolder(lease_ms=1500))
        beat = lj.start_heartbeat(got, on_lost)
        stopped(proc, 3.5)  # past the lease
        assert fired.wait(5)
        time.sleep(1.0)
        assert lost == [(lj.TimedOutError, LJ_ETIMEOUT)] and beat.lost
        beat.stop()
        got.close()


def test_a_lock_taken_by_another_writer_is_reported_once(server):
    _, url = server
    lost = []
    with bucket(url, "other") as store:
        with lj.lock(store, "lock.o", timeout=5, holder=lj.LockHolder(lease_ms=3000), on_lost=lost.append) as held:
            entry = store.get("lock.o")
            store.update("lock.o", b'{"purpose":"another writer"}', entry.revision)
            deadline = time.monotonic() + 8
            while not lost and time.monotonic() < deadline:
                time.sleep(0.02)  # the next renewal, within 1 s
            time.sleep(0.6)
            assert [(type(e), e.code) for e in lost] == [(lj.ChangedError, LJ_ECHANGED)] and held.lost
        assert store.get("lock.o").value == b'{"purpose":"another writer"}'


if __name__ == "__main__":
    import python_support
    python_support.run_pytest(__file__)
