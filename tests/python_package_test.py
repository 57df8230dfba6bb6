"""The Python package leasejudge (bindings/python) over the real library: identity,
lock verdicts, bodies and the lock's life on stores, step plans over bytes, sweeps,
lease directories; every exception class raised by a real call; bad input answered
with a clear exception, never a crash. Expected values are computed here from the
kernel's /proc, the C headers and the rules by hand."""
import calendar
import ctypes
import datetime
import gc
import json
from dataclasses import replace
import os
import re
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_support  # noqa: E402

python_support.bootstrap()

import pytest  # noqa: E402

import leasejudge as lj  # noqa: E402
from leasejudge import _lib  # noqa: E402

LIBRARY = os.environ["LEASEJUDGE_LIBRARY"]


def header_text():
    inc = os.path.join(python_support.SOURCE, "capi", "include")
    parts = [os.path.join(inc, "leasejudge.h")]
    parts += sorted(os.path.join(inc, "leasejudge", f) for f in os.listdir(os.path.join(inc, "leasejudge")))
    return "\n".join(open(p, encoding="utf-8").read() for p in parts)


HEADER = header_text()


def constant(name):
    """The value of `#define NAME (value)` or of an enum's `NAME = value` in the headers."""
    m = re.search(r"(?m)^\s*#define\s+" + name + r"\s+\(?\s*(-?\d+)\s*\)?", HEADER)
    if m is None:
        m = re.search(r"(?m)^\s*" + name + r"\s*=\s*\(?\s*(-?\d+)", HEADER)
    assert m is not None, name
    return int(m.group(1))


def ms(iso):
    """Milliseconds since the epoch of `YYYY-MM-DDTHH:MM:SS.mmmZ`, computed here."""
    base, frac = iso.rstrip("Z").split(".")
    return calendar.timegm(time.strptime(base, "%Y-%m-%dT%H:%M:%S")) * 1000 + int(frac)


def base36(n):
    digits, out = "0123456789abcdefghijklmnopqrstuvwxyz", ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def kernel_start(pid):
    """(start ms since the epoch, start ticks) of pid from /proc (USER_HZ 100)."""
    stat = open("/proc/%d/stat" % pid).read()
    ticks = int(stat[stat.rindex(")") + 1:].split()[19])
    btime = int(re.search(r"(?m)^btime (\d+)$", open("/proc/stat").read()).group(1))
    return btime * 1000 + ticks * 10, ticks


BOOT = open("/proc/sys/kernel/random/boot_id").read().strip() or "no-boot-id"


# --- loading ---------------------------------------------------------------------------

def test_load_explicit_path_and_version():
    cdll = lj.load(LIBRARY)
    assert cdll._name == LIBRARY
    major, minor, patch = (constant("LJ_VERSION_" + p) for p in ("MAJOR", "MINOR", "PATCH"))
    assert lj.library_version() == "%d.%d.%d" % (major, minor, patch)
    assert lj.strerror(constant("LJ_ECHANGED")) == "changed"
    assert lj.candidates() == [LIBRARY]  # LEASEJUDGE_LIBRARY alone when set


def test_load_refuses_what_is_no_library(tmp_path):
    with pytest.raises(OSError, match="could not be loaded"):
        lj.load(str(tmp_path / "missing.so"))
    not_ours = ctypes.util.find_library("c")
    with pytest.raises(OSError, match="not libleasejudge"):
        lj.load(not_ours)
    assert _lib.lib()._name == LIBRARY  # a failed load keeps the library loaded before


# --- identity --------------------------------------------------------------------------

def test_identity():
    start_ms, ticks = kernel_start(os.getpid())
    token = "%s.%d.%s" % (BOOT, os.getpid(), base36(start_ms))
    assert lj.boot_id() == BOOT
    assert lj.owner_token() == token
    assert lj.owner_token(os.getpid()) == token
    assert lj.parse_owner_token(token) == lj.OwnerToken(BOOT, os.getpid(), start_ms)
    assert lj.lease_identity() == "linux %s %d" % (BOOT, ticks)
    mid = lj.machine_id()
    assert mid is None or re.fullmatch(r"[0-9a-f]{32}", mid)
    v = lj.judge_owner(token)
    assert v.state is lj.HolderState.ALIVE and str(os.getpid()) in v.why
    earlier = "%s.%d.%s" % (BOOT, os.getpid(), base36(start_ms - 3600000))
    assert lj.judge_owner(earlier).state is lj.HolderState.RECYCLED
    assert lj.judge_owner(b"\xff\xfe.1.1").state is lj.HolderState.UNKNOWN
    assert lj.judge_owner("").state is lj.HolderState.UNKNOWN
    assert lj.judge_lease_identity(os.getpid(), "", 120).state is lj.HolderState.RECYCLED
    assert lj.judge_lease_identity(os.getpid(), lj.lease_identity(), 1).state is lj.HolderState.ALIVE


def test_identity_bad_input():
    with pytest.raises(lj.InvalidArgumentError) as e:
        lj.owner_token(-1)
    assert e.value.code == constant("LJ_EINVAL") and e.value.message
    with pytest.raises(lj.NotFoundError):
        lj.owner_token(2**31 - 1)
    with pytest.raises(lj.ParseError):
        lj.parse_owner_token("a.b")
    with pytest.raises(lj.ParseError):
        lj.parse_owner_token(b"boot\x00.1.abc")
    with pytest.raises(ValueError, match="pid must be in"):
        lj.owner_token(2**31)
    for bad in (None, "1", 1.0, True):
        with pytest.raises(TypeError):
            lj.owner_token(bad)
    for bad in (None, 12, ["x"]):
        with pytest.raises(TypeError, match="token must be str or bytes"):
            lj.judge_owner(bad)


# --- lock verdicts ---------------------------------------------------------------------

WHO = "deploy (on build-1, pid 4242, started 2024-05-01T10:00:00.000Z)"
PROCESS_BODY = ('{"purpose":"deploy","id":"b2","host":"build-1","machine":"m1","pid":4242,'
                '"startedAt":"2024-05-01T10:00:00.000Z","leaseUntil":"2024-05-01T10:15:00.000Z"}')
EXECUTION_BODY = ('{"purpose":"caelo upgrader job","id":"a1","host":"localhost","machine":null,"pid":1,'
                  '"startedAt":"2024-05-01T10:00:00.000Z","execution":{"projectId":"proj","region":"europe-west1",'
                  '"name":"upgrader-x7"},"leaseUntil":"2024-05-01T11:05:00.000Z"}')


def here(alive):
    return lj.Here("build-1", lj.MachineKind.ID, "m1", alive=alive)


def test_judge_process_holder():
    asked = []

    def alive(pid):
        asked.append(pid)
        return pid != 4242

    v = lj.judge_lock(PROCESS_BODY, ms("2024-05-01T10:01:00.000Z"), here=here(alive),
                      describe=lambda e: asked.append("describe"))
    assert v == lj.LockVerdict(lj.LockKind.BREAK, lj.LockReason.PROCESS_GONE, False,
                               WHO + " has ended (its process is gone on this machine)")
    assert asked == [4242.0]
    assert v.kind == constant("LJ_LOCK_BREAK") and v.reason == constant("LJ_LOCK_PROCESS_GONE")
    assert v.reason.code == "process_gone" and v.kind.label == "break"
    # Every reason of the header, by number and code (the store lease's two included).
    assert [(r.name, int(r), r.code) for r in lj.LockReason][-3:] == [
        ("PID_REUSED", 14, "pid_reused"), ("STORE_LEASE_ENDED", 15, "store_lease_ended"),
        ("STORE_LEASE_UNKNOWN", 16, "store_lease_unknown")]
    assert all(int(r) == constant("LJ_LOCK_" + r.name) for r in lj.LockReason)
    at_end = datetime.datetime(2024, 5, 1, 10, 15, tzinfo=datetime.timezone.utc)
    v = lj.judge_lock(PROCESS_BODY.encode(), at_end, here=here(lambda pid: True))
    assert v == lj.LockVerdict(lj.LockKind.HELD, lj.LockReason.LEASE_RUNS, False,
                               "held by " + WHO + "; its lease runs until 2024-05-01T10:15:00.000Z unless renewed")
    assert v.text() == "held lease_runs " + v.why
    assert json.loads(v.json()) == {"kind": "held", "reason": "lease_runs", "manualRemoval": False, "why": v.why}


def test_judge_execution_holder():
    seen = []

    def describe(e):
        seen.append(e)
        return lj.ExecutionState(lj.ExecutionKind.FINISHED, "cancelled")

    v = lj.judge_lock(EXECUTION_BODY, ms("2024-05-01T10:30:00.000Z"), describe=describe)
    assert v == lj.LockVerdict(lj.LockKind.BREAK, lj.LockReason.EXECUTION_FINISHED, False,
                               "caelo upgrader job (run upgrader-x7, started 2024-05-01T10:00:00.000Z) has cancelled, "
                               "but its lock was left behind")
    assert seen == [lj.Execution("proj", "europe-west1", "upgrader-x7")]
    v = lj.judge_lock(EXECUTION_BODY, ms("2024-05-01T10:30:00.000Z"),
                      describe=lambda e: lj.ExecutionState(lj.ExecutionKind.RUNNING))
    assert (v.kind, v.reason) == (lj.LockKind.HELD, lj.LockReason.EXECUTION_RUNNING)


def test_gcloud_environment_without_path_is_unknown():
    v = lj.judge_lock(EXECUTION_BODY, ms("2024-05-01T10:30:00.000Z"), gcloud_env={"HOME": "/nonexistent"})
    assert (v.kind, v.reason) == (lj.LockKind.UNKNOWN, lj.LockReason.EXECUTION_UNKNOWN)


def test_callbacks_that_raise_or_answer_junk():
    class Boom(Exception):
        pass

    def raising(e):
        raise Boom("describe failed")

    with pytest.raises(Boom, match="describe failed"):
        lj.judge_lock(EXECUTION_BODY, ms("2024-05-01T10:30:00.000Z"), describe=raising)
    with pytest.raises(TypeError, match="describe must return an ExecutionState"):
        lj.judge_lock(EXECUTION_BODY, ms("2024-05-01T10:30:00.000Z"), describe=lambda e: "finished")
    with pytest.raises(ValueError):
        lj.judge_lock(EXECUTION_BODY, ms("2024-05-01T10:30:00.000Z"), describe=lambda e: lj.ExecutionState(99))
    with pytest.raises(TypeError, match="alive must return a bool"):
        lj.judge_lock(PROCESS_BODY, ms("2024-05-01T10:01:00.000Z"), here=here(lambda pid: None))
    with pytest.raises(ZeroDivisionError):
        lj.judge_lock(PROCESS_BODY, ms("2024-05-01T10:01:00.000Z"), here=here(lambda pid: 1 / 0))
    with pytest.raises(TypeError, match="describe must be callable"):
        lj.judge_lock(EXECUTION_BODY, describe="gcloud")


def test_judge_bad_bodies_are_held_verdicts():
    not_readable = (lj.LockKind.HELD, lj.LockReason.NOT_READABLE, True)
    for body, quoted in (("[1,2]", "[1,2]"), (b"\xff\x00x", "\ufffd\ufffdx"), ("", "")):
        v = lj.judge_lock(body, ms("2024-05-01T10:30:00.000Z"))
        assert (v.kind, v.reason, v.manual_removal) == not_readable
        if quoted:
            assert v.why == "the lock's holder is not readable (%s)" % quoted
    huge = b"{" + b" " * (64 << 20)
    v = lj.judge_lock(huge, ms("2024-05-01T10:30:00.000Z"))
    assert (v.kind, v.reason, v.manual_removal) == not_readable
    assert len(v.why.encode()) < 16384  # the why quotes a bounded part of the body


def test_judge_bad_arguments():
    for bad in (None, 42, {"purpose": "x"}):
        with pytest.raises(TypeError, match="body must be str or bytes"):
            lj.judge_lock(bad)
    with pytest.raises(ValueError, match="not encodable as UTF-8"):
        lj.judge_lock("\ud800")
    with pytest.raises(ValueError, match="aware datetime"):
        lj.judge_lock("{}", datetime.datetime(2024, 5, 1))
    with pytest.raises(lj.InvalidArgumentError):
        lj.judge_lock("{}", 9 * 10**15)  # outside JavaScript's Date range
    with pytest.raises(lj.InvalidArgumentError):
        lj.judge_lock(EXECUTION_BODY, gcloud_timeout_ms=86400001)
    with pytest.raises(TypeError, match="here must be a Here"):
        lj.judge_lock("{}", here="build-1")
    with pytest.raises(ValueError):
        lj.judge_lock("{}", here=lj.Here("h", machine_kind=7))
    with pytest.raises(TypeError, match="gcloud_env must be a mapping"):
        lj.judge_lock("{}", gcloud_env=["PATH=/bin"])
    with pytest.raises(ValueError, match="holds a NUL"):
        lj.judge_lock("{}", gcloud_env={"PATH": "/bin\0/usr/bin"})


def test_verdict_text_refuses_what_no_judge_gives():
    bad = lj.LockVerdict(lj.LockKind.BREAK, lj.LockReason.LEASE_RUNS, False, "x")
    with pytest.raises(lj.InvalidArgumentError):
        bad.text()
    v = lj.LockVerdict(lj.LockKind.HELD, lj.LockReason.LEASE_RUNS, False, b"a\x00\xffb".decode("latin-1"))
    assert json.loads(v.json())["why"] == "a\u0000\u00ffb"


# --- bodies ----------------------------------------------------------------------------

def test_lock_body_and_renew():
    now = ms("2024-05-01T10:00:00.000Z")
    body = lj.lock_body("deploy", now, id="fixed-id")
    fields = json.loads(body)
    start_ms, _ = kernel_start(os.getpid())
    assert list(fields) == ["purpose", "id", "host", "machine", "pid", "startedAt", "leaseUntil", "owner", "leaseMs"]
    assert fields["leaseMs"] == 600000  # the lease it was taken with, for a renewal by another run
    assert fields["purpose"] == "deploy" and fields["id"] == "fixed-id" and fields["pid"] == os.getpid()
    assert fields["host"] == socket.gethostname()
    assert fields["startedAt"] == "2024-05-01T10:00:00.000Z"
    assert fields["leaseUntil"] == "2024-05-01T10:15:00.000Z"  # 10 min lease + 5 min skew
    assert fields["owner"] == "%s.%d.%s" % (BOOT, os.getpid(), base36(start_ms))
    assert lj.lock_body_id(body) == "fixed-id"
    renewed = json.loads(lj.renew_lock_body(body, ms("2024-05-01T10:05:00.000Z")))
    assert renewed["leaseUntil"] == "2024-05-01T10:20:00.000Z" and renewed["id"] == "fixed-id"
    assert renewed["leaseMs"] == 600000
    assert lj.parse_lock_body(body)["purpose"] == "deploy"
    holder = lj.LockHolder(lj.HolderKind.EXECUTION, 3600000, lj.Execution("p", "r", "job-1"))
    fields = json.loads(lj.lock_body("job", now, holder, "e1"))
    assert fields["execution"] == {"projectId": "p", "region": "r", "name": "job-1"}
    assert fields["leaseUntil"] == "2024-05-01T11:05:00.000Z"
    assert lj.format_lock_time(now) == "2024-05-01T10:00:00.000Z"
    assert lj.parse_lock_time("2024-05-01T10:00:00.000Z") == now
    assert lj.PROCESS_LEASE_MS == constant("LJ_LOCK_PROCESS_LEASE_MS")
    assert lj.LEASE_SKEW_MS == constant("LJ_LOCK_LEASE_SKEW_MS")


def test_bodies_bad_input():
    with pytest.raises(lj.ParseError):
        lj.renew_lock_body("[1]")
    with pytest.raises(lj.ParseError):
        lj.parse_lock_body(b"\xff")
    with pytest.raises(lj.NotFoundError):
        lj.lock_body_id('{"purpose":"x","host":"h","pid":1,"startedAt":"2024-05-01T10:00:00.000Z"}')
    with pytest.raises(lj.InvalidArgumentError):
        lj.lock_body(b"\xffpurpose")  # text that is not UTF-8
    with pytest.raises(lj.InvalidArgumentError):
        lj.renew_lock_body(lj.lock_body("x"), lease_ms=-1)
    with pytest.raises(lj.InvalidArgumentError):
        lj.lock_body("x", holder=lj.LockHolder(lj.HolderKind.EXECUTION, 1, lj.Execution("", "r", "n")))
    with pytest.raises(TypeError, match="holder must be a LockHolder"):
        lj.lock_body("x", holder={"kind": 1})
    with pytest.raises(TypeError, match="execution must be an Execution"):
        lj.lock_body("x", holder=lj.LockHolder(lj.HolderKind.EXECUTION, 1, ("p", "r", "n")))
    with pytest.raises(lj.ParseError):
        lj.parse_lock_time("yesterday")


def test_execution_state_and_args():
    got = lj.parse_execution_state(0, '{"status":{"completionTime":"x","succeededCount":1}}', "")
    assert got.kind in (lj.ExecutionKind.FINISHED, lj.ExecutionKind.RUNNING)
    got = lj.parse_execution_state(1, "", "ERROR: (gcloud.run.jobs.executions.describe) NOT_FOUND: nope")
    assert got.kind is lj.ExecutionKind.NOT_FOUND
    assert lj.describe_execution_args(lj.Execution("p", "r", "x1")) == [
        "run", "jobs", "executions", "describe", "x1", "--region=r", "--project=p", "--format=json"]
    assert lj.process_alive(os.getpid()) is True
    assert lj.process_alive(-3.5) is True  # no process to prove gone
    with pytest.raises(TypeError):
        lj.process_alive("1")


# --- stores and the lock's life --------------------------------------------------------

def test_store_operations(tmp_path):
    for store in (lj.memory_store(), lj.file_store(str(tmp_path / "locks"))):
        with store:
            r1 = store.create("k.a", b"one")
            assert store.get("k.a") == lj.Entry(b"k.a", b"one", r1)
            with pytest.raises(lj.ExistsError):
                store.create("k.a", b"again")
            r2 = store.update("k.a", b"two\x00bytes", r1)
            assert r2 > r1 and store.get(b"k.a").value == b"two\x00bytes"
            with pytest.raises(lj.ChangedError):
                store.update("k.a", b"three", r1)
            with pytest.raises(lj.ChangedError):
                store.delete("k.a", r1)
            store.create("k.b", "bee")
            store.create("other", "o")
            assert sorted(store.keys()) == [b"k.a", b"k.b", b"other"]
            assert sorted((e.key, e.value) for e in store.scan("k.")) == [(b"k.a", b"two\x00bytes"),
                                                                           (b"k.b", b"bee")]
            store.delete("k.a", r2)
            with pytest.raises(lj.NotFoundError):
                store.get("k.a")
        with pytest.raises(ValueError, match="the store is closed"):
            store.get("k.b")
        store.close()  # twice: nothing
    assert os.path.isdir(tmp_path / "locks")


def test_open_store_by_url(tmp_path):
    with lj.open_store("mem:") as store:
        store.create("k", "v")
        assert store.keys() == [b"k"]
    # A mistyped directory is refused, and nothing is made, unless creation is asked.
    with pytest.raises(lj.StoreError, match="does not exist"):
        lj.open_store("file:" + str(tmp_path / "by-url"))
    assert not os.path.exists(tmp_path / "by-url")
    with lj.open_store("file:" + str(tmp_path / "by-url"), create=True) as store:
        store.create("k", "v")
    assert os.path.isdir(tmp_path / "by-url")
    for bad in ("", "memory", "nats://127.0.0.1:4222", "redis://x/y", "mem:\0", "\udcff", "x" * (1 << 20)):
        with pytest.raises(ValueError):  # InvalidArgumentError, or the text's own encoding
            lj.open_store(bad)
    for bad_type in (b"mem:", None, 5):
        with pytest.raises(TypeError):
            lj.open_store(bad_type)
    with pytest.raises(TypeError):
        lj.open_store("mem:", tls_ca_file=5)
    with pytest.raises(TypeError):
        lj.open_store("mem:", connect_timeout_ms=300)
    with pytest.raises(lj.StoreError):
        lj.open_store("nats://127.0.0.1:1/bucket")


def test_file_store_on_a_file_is_a_system_failure(tmp_path):
    (tmp_path / "plain").write_text("x")
    with pytest.raises(lj.SystemFailureError) as e:
        lj.file_store(tmp_path / "plain")
    assert e.value.code == constant("LJ_EIO")


def test_lock_life():
    store = lj.memory_store()
    lock, acq = lj.acquire_lock(store, "lock.deploy", "deploy", now=ms("2024-05-01T10:00:00.000Z"))
    assert acq == lj.Acquisition(lj.AcquireOutcome.ACQUIRED, None, 0, lock.revision)
    assert lock.renew_interval_ms == lj.PROCESS_LEASE_MS // 3
    assert json.loads(store.get("lock.deploy").value)["id"] == lock.id
    body = lock.body
    assert json.loads(body)["leaseUntil"] == "2024-05-01T10:15:00.000Z"
    none, acq = lj.acquire_lock(store, "lock.deploy", "deploy again", now=ms("2024-05-01T10:01:00.000Z"))
    assert none is None and acq.outcome is lj.AcquireOutcome.HELD
    assert (acq.verdict.kind, acq.verdict.reason) == (lj.LockKind.HELD, lj.LockReason.LEASE_RUNS)
    lock.renew(ms("2024-05-01T10:05:00.000Z"))
    assert json.loads(store.get("lock.deploy").value)["leaseUntil"] == "2024-05-01T10:20:00.000Z"
    again = lj.open_lock(store, "lock.deploy", lock.id, lj.PROCESS_LEASE_MS)
    assert again.revision == store.get("lock.deploy").revision
    again.close()
    with lock:
        pass  # released at the end of the block
    with pytest.raises(lj.NotFoundError):
        store.get("lock.deploy")
    with pytest.raises(ValueError, match="lock handle is closed"):
        lock.renew()
    with pytest.raises(lj.NotFoundError):
        lj.open_lock(store, "lock.deploy", "nobody")


def test_lock_broken_from_a_dead_holder_and_lost_to_another():
    store = lj.memory_store()
    rev = store.create("lock.x", PROCESS_BODY)
    lock, acq = lj.acquire_lock(store, "lock.x", "mine", now=ms("2024-05-01T10:01:00.000Z"),
                                here=here(lambda pid: False))
    assert acq.outcome is lj.AcquireOutcome.ACQUIRED and acq.broke_at == rev
    assert acq.verdict == lj.LockVerdict(lj.LockKind.BREAK, lj.LockReason.PROCESS_GONE, False,
                                         WHO + " has ended (its process is gone on this machine)")
    entry = store.get("lock.x")
    store.update("lock.x", b'{"someone":"else"}', entry.revision)
    with pytest.raises(lj.ChangedError):
        lock.renew()
    with pytest.raises(lj.ChangedError):
        lock.release()
    lock.close()
    with pytest.raises(lj.ChangedError):
        lj.open_lock(store, "lock.x", lj.lock_body_id(entry.value))


def test_lock_bad_input():
    store = lj.memory_store()
    with pytest.raises(TypeError, match="store must be a Store"):
        lj.acquire_lock("memory", "k", "p")
    with pytest.raises(TypeError, match="key must be str or bytes"):
        lj.acquire_lock(store, None, "p")
    with pytest.raises(lj.InvalidArgumentError):
        lj.acquire_lock(store, "k", b"\xff")
    lock, _ = lj.acquire_lock(store, "k", "p")
    store.close()
    with pytest.raises(ValueError, match="the store is closed"):
        lock.renew()
    lock.close()
    with pytest.raises(ValueError, match="the store is closed"):
        lj.acquire_lock(store, "k", "p")


class DictBackend:
    """A store in a dict, with revisions of its own, failing on demand."""

    def __init__(self):
        self.values, self.revision, self.fail = {}, 0, None

    def _maybe_fail(self):
        if self.fail is not None:
            raise self.fail

    def keys(self):
        self._maybe_fail()
        return list(self.values)

    def get(self, key):
        self._maybe_fail()
        return self.values.get(key)

    def create(self, key, value):
        self._maybe_fail()
        if key in self.values:
            raise lj.ExistsError(-11, "exists")
        self.revision += 1
        self.values[key] = (value, self.revision)
        return self.revision

    def update(self, key, value, revision):
        self._maybe_fail()
        if key not in self.values or self.values[key][1] != revision:
            raise lj.ChangedError(-4, "moved")
        self.revision += 1
        self.values[key] = (value, self.revision)
        return self.revision

    def delete(self, key, revision):
        self._maybe_fail()
        if key not in self.values or self.values[key][1] != revision:
            raise lj.ChangedError(-4, "moved")
        del self.values[key]


def test_callback_store_runs_locks_and_sweeps():
    backend = DictBackend()
    store = lj.callback_store(backend)
    lock, acq = lj.acquire_lock(store, "lock.cb", "p")
    assert acq.outcome is lj.AcquireOutcome.ACQUIRED and backend.values[b"lock.cb"][1] == lock.revision
    lock.renew()
    lock.release()
    assert backend.values == {}
    store.create("n.s", STEP % ("s", "running", THEM))
    report = lj.sweep(store, "n", owner=ME, before=BEFORE, now=NOW)
    assert report.ended == ["s"] and json.loads(backend.values[b"n.s"][0])["state"] == "failed"
    backend.fail = KeyError("backend broke")
    with pytest.raises(KeyError, match="backend broke"):
        store.keys()
    with pytest.raises(KeyError, match="backend broke"):
        lj.acquire_lock(store, "lock.cb", "p")
    with pytest.raises(TypeError, match="the backend has no keys method"):
        lj.callback_store(object())


# --- steps -----------------------------------------------------------------------------

NODE = "build-eu-1"
ME = "0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6.4242.lxb2k3a0"
THEM = "0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6.4243.lxb2k3a0"
ASK = "6f1c0a52-3b7e-4d0a-9c11-2f5e8d7b6a01"
STEP = '{"id":"%s","tool":"go test","state":"%s","owner":"%s","started":"2024-06-01T11:00:00Z"}'
BEFORE = 1717242600 * 10**9  # 2024-06-01T11:50:00Z
NOW = 1717243200 * 10**9     # 2024-06-01T12:00:00Z
PLAN = dict(node=NODE, owner=ME, before=BEFORE, now=NOW)


def test_plan_step():
    v = lj.plan_step(NODE + ".mine", STEP % ("mine", "running", ME), **PLAN)
    assert (v.action, v.reason, v.why) == (lj.StepAction.LEAVE, lj.StepReason.OWNED_BY_SELF, "")
    v = lj.plan_step(NODE + ".theirs", STEP % ("theirs", "running", THEM), **PLAN)
    assert (v.action, v.reason, v.why) == (lj.StepAction.END, lj.StepReason.OWNER_NOT_SELF, lj.RESTART_REASON)
    assert v.said == "its owner %s is not this process %s" % (THEM, ME)
    v = lj.plan_step(NODE + "." + ASK, STEP.replace("go test", "check ask") % (ASK, "running", THEM), **PLAN)
    assert (v.action, v.reason) == (lj.StepAction.DELETE, lj.StepReason.OWNER_NOT_SELF)
    v = lj.plan_step(NODE + ".old", '{"id":"old","tool":"lint","state":"running","started":"2024-06-01T10:00:00Z"}',
                     **PLAN)
    assert (v.action, v.reason) == (lj.StepAction.END, lj.StepReason.STARTED_BEFORE)
    v = lj.plan_step("build-eu-2.x", STEP % ("x", "running", THEM), **PLAN)
    assert (v.action, v.reason) == (lj.StepAction.LEAVE, lj.StepReason.OTHER_NODE)
    assert lj.plan_step(NODE + ".none", None, **PLAN).reason is lj.StepReason.NO_VALUE
    assert lj.plan_step(NODE + ".bad", b"\xff\x00", **PLAN).reason is lj.StepReason.NO_STEP
    assert lj.StepReason.OWNER_NOT_SELF.code == "owner-not-self" and lj.StepAction.DELETE.label == "delete"
    assert lj.StepReason.STARTED_BEFORE == constant("LJ_STEP_STARTED_BEFORE")
    judged = []
    v = lj.plan_step(NODE + ".theirs", STEP % ("theirs", "running", THEM), rule=lj.StepRule.PROVABLY_DEAD,
                     owner_state=lambda t: judged.append(t) or lj.HolderState.DEAD, **PLAN)
    assert (v.action, v.reason, judged) == (lj.StepAction.END, lj.StepReason.OWNER_GONE, [THEM])


def test_plan_lines_over_bytes():
    lines = [
        {"key": NODE + ".mine", "revision": 1, "value": json.loads(STEP % ("mine", "running", ME))},
        {"key": NODE + ".theirs", "revision": 2, "value": json.loads(STEP % ("theirs", "running", THEM))},
        {"key": NODE + ".done", "value": json.loads(STEP % ("done", "succeeded", THEM))},
        {"key": "build-eu-2.x", "value": json.loads(STEP % ("x", "running", THEM))},
    ]
    data = "".join(json.dumps(line) + "\n" for line in lines).encode() + b"\nnot json\n"
    plan = lj.plan_lines(data, **PLAN)
    got = plan.lines()
    assert [(g["key"], g["action"], g["reason"]) for g in got] == [
        (NODE + ".mine", "leave", "owned-by-self"), (NODE + ".theirs", "end", "owner-not-self"),
        (NODE + ".done", "leave", "not-running"), ("build-eu-2.x", "leave", "other-node"),
        (None, "leave", "malformed")]
    assert got[1]["why"] == lj.RESTART_REASON
    assert plan.summary == lj.PlanSummary(ends=1, leaves=2, other_node=1, malformed=1)
    assert plan.summary.text() == ("step plan: 4 keys: 1 end, 0 delete, 2 leave, 0 no-step, 1 other-node, "
                                   "1 malformed line")
    assert lj.plan_lines(data, threads=2, **PLAN) == plan
    assert lj.plan_lines(b"", **PLAN) == lj.LinesPlan(b"", lj.PlanSummary())


def test_rules_built_once_for_plan_and_sweep():
    # One Rules for a plan and a sweep alike: the same verdicts as the fields named one by one.
    rules = lj.Rules(owner=ME, before=BEFORE, now=NOW)
    theirs = STEP % ("theirs", "running", THEM)
    assert lj.plan_step(NODE + ".theirs", theirs, node=NODE, rules=rules) == \
        lj.plan_step(NODE + ".theirs", theirs, **PLAN)
    # A field named beside the rules stands for theirs.
    v = lj.plan_step(NODE + ".theirs", theirs, node=NODE, rules=rules, rule="provably-dead",
                     owner_state=lambda t: lj.HolderState.ALIVE)
    assert (v.action, v.reason) == (lj.StepAction.LEAVE, lj.StepReason.OWNER_ALIVE)
    # Left None, the library's defaults: no owner named, so the rule by-owner is provably-dead.
    v = lj.plan_step(NODE + ".theirs", theirs, node=NODE, rules=lj.Rules(now=NOW, owner_state=lambda t: lj.HolderState.ALIVE))
    assert v.reason is lj.StepReason.OWNER_ALIVE
    store = lj.callback_store(DictBackend())
    store.create(NODE + ".theirs", theirs)
    report = lj.sweep(store, NODE, rules=rules)
    assert report.ended == ["theirs"]
    # min_age_ms: a step another owner started a minute ago is left under two minutes.
    young = STEP.replace("11:00:00Z", "11:59:00Z") % ("young", "running", THEM)
    v = lj.plan_step(NODE + ".young", young, node=NODE, rules=lj.Rules(owner=ME, before=BEFORE, now=NOW,
                                                                       min_age_ms=120000))
    assert (v.action, v.reason, v.reason.code) == (lj.StepAction.LEAVE, lj.StepReason.UNDER_MIN_AGE, "under-min-age")
    plan = lj.plan_lines(json.dumps({"key": NODE + ".young", "value": json.loads(young)}) + "\n", node=NODE,
                         rules=replace(rules, min_age_ms=30000))
    assert plan.lines()[0]["reason"] == "owner-not-self"
    with pytest.raises(TypeError, match="rules must be Rules"):
        lj.plan_step(NODE + ".x", theirs, node=NODE, rules=PLAN)
    # The node in the rules: a plan takes it, a sweep of the same node too.
    with_node = replace(rules, node=NODE)
    assert lj.plan_step(NODE + ".theirs", theirs, rules=with_node) == lj.plan_step(NODE + ".theirs", theirs, **PLAN)
    store.create(NODE + ".again", theirs.replace("theirs", "again"))
    assert lj.sweep(store, NODE, rules=with_node).ended == ["again"]
    with pytest.raises(lj.InvalidArgumentError, match="the rules name the node build-eu-1, the sweep node other"):
        lj.sweep(store, "other", rules=with_node)


def test_rules_resolve():
    gone = "only owners proven gone (dead, recycled, rebooted) are ended"
    assert lj.Rules(node=NODE).resolve() == lj.ResolvedRules(
        lj.StepRule.PROVABLY_DEAD, lj.owner_token(),
        "rule provably-dead (no owner named): %s, never a step whose owner is alive on this node" % gone)
    assert lj.Rules(node=NODE, owner=ME).resolve() == lj.ResolvedRules(
        lj.StepRule.NOT_SELF, ME, "rule not-self: every owner but %s is taken for gone" % ME)
    assert lj.Rules(node=NODE, owner=ME, rule="provably-dead").resolve().why == "rule provably-dead: " + gone
    assert lj.Rules(node=NODE, self_pid=os.getpid()).resolve().owner == lj.owner_token()
    for bad in (lj.Rules(), lj.Rules(node="a.b"), lj.Rules(node=NODE, rule="not-self"),
                lj.Rules(node=NODE, owner="garbage"), lj.Rules(node=NODE, bound_ms=-1),
                lj.Rules(node=NODE, min_age_ms=-1), lj.Rules(node=NODE, self_pid=-1),
                lj.Rules(node=NODE, self_pid=2**40)):
        with pytest.raises(lj.InvalidArgumentError):
            bad.resolve()
    with pytest.raises(lj.NotFoundError):
        lj.Rules(node=NODE, self_pid=2**31 - 2).resolve()
    with pytest.raises(ValueError):
        lj.Rules(node=NODE, rule=7).resolve()


def test_plan_bad_input():
    junk = b"\xff\x00{\n" * (4 << 20)  # 16 MiB of lines that are no entry
    plan = lj.plan_lines(junk, **PLAN)
    assert plan.summary == lj.PlanSummary(malformed=4 << 20)
    with pytest.raises(lj.InvalidArgumentError):
        lj.plan_lines(b"", node="")
    with pytest.raises(TypeError, match="data must be str or bytes"):
        lj.plan_lines(None, **PLAN)
    with pytest.raises(TypeError, match="node must be str or bytes"):
        lj.plan_step("k", "v", node=5)
    with pytest.raises(lj.InvalidArgumentError, match="the rules name no node"):
        lj.plan_step("k", "v", node=None)
    with pytest.raises(ValueError):
        lj.plan_lines(b"", rule=9, **PLAN)
    with pytest.raises(ValueError, match="threads must be in"):
        lj.plan_lines(b"", threads=-1, **PLAN)
    with pytest.raises(RuntimeError, match="judge failed"):
        lj.plan_step(NODE + ".t", STEP % ("t", "running", THEM), rule=lj.StepRule.PROVABLY_DEAD,
                     owner_state=lambda t: (_ for _ in ()).throw(RuntimeError("judge failed")), **PLAN)
    with pytest.raises(lj.InvalidArgumentError):
        lj.step_key("node.with.dot", "id")
    assert lj.step_key("n", "i") == "n.i"


def test_end_value_keeps_every_other_byte():
    value = '{"id":"t", "tool":"x","state":"running","result":{"a":1},"extra":[1, 2]}'
    ended = json.loads(lj.end_value(value, "gone", 1717243200 * 10**9))
    assert ended == {"id": "t", "tool": "x", "state": "failed", "reason": "gone", "ended": "2024-06-01T12:00:00Z",
                     "extra": [1, 2]}
    with pytest.raises(lj.ParseError):
        lj.end_value("[1]", "gone")


# --- sweeps ----------------------------------------------------------------------------

def test_sweep_and_end_one():
    store = lj.memory_store()
    r_theirs = store.create(NODE + ".theirs", STEP % ("theirs", "running", THEM))
    store.create(NODE + ".mine", STEP % ("mine", "running", ME))
    store.create(NODE + ".done", STEP % ("done", "succeeded", THEM))
    store.create(NODE + ".bad", "[1]")
    store.create("build-eu-2.x", STEP % ("x", "running", THEM))
    dry = lj.sweep(store, NODE, dry_run=True, **{k: v for k, v in PLAN.items() if k != "node"})
    assert (dry.ended, dry.writes, dry.counts.ends) == ([], [], 1)  # planned, nothing sent
    seen = []
    lj.sweep(store, NODE, owner=ME, before=BEFORE, now=NOW, dry_run=True, on_key=seen.append)
    by_key = {k.key: k for k in seen}
    assert sorted(by_key) == sorted(k.encode() for k in (NODE + ".theirs", NODE + ".mine", NODE + ".done",
                                                         NODE + ".bad"))
    theirs = by_key[(NODE + ".theirs").encode()]
    assert theirs == lj.SweepKey((NODE + ".theirs").encode(), "theirs", "go test", THEM, lj.RESTART_REASON,
                                 "its owner %s is not this process %s" % (THEM, ME), "", lj.StepAction.END,
                                 lj.StepReason.OWNER_NOT_SELF, r_theirs, lj.SweepOutcome.PLANNED)
    bad = by_key[(NODE + ".bad").encode()]
    assert (bad.id, bad.action, bad.reason, bad.outcome) == ("", lj.StepAction.LEAVE, lj.StepReason.NO_STEP,
                                                             lj.SweepOutcome.LEFT)
    assert store.get(NODE + ".theirs").revision == r_theirs  # nothing written
    logs = []
    report = lj.sweep(store, NODE, owner=ME, before=BEFORE, now=NOW, log=logs.append)
    assert report.ended == ["theirs"] and report.code == 0 and report.message == ""
    assert report.counts == lj.SweepCounts(ends=1, leaves=2, no_step=1)  # the scan reads the node's keys only
    assert report.writes == [lj.SweepWrite((NODE + ".theirs").encode(), lj.StepAction.END, lj.SweepOutcome.DONE,
                                           r_theirs)]
    assert logs == ["the step %s.theirs (go test, started 2024-06-01T11:00:00Z) was left running and is ended: %s; "
                    "its owner %s is not this process %s" % (NODE, lj.RESTART_REASON, THEM, ME)]
    ended = json.loads(store.get(NODE + ".theirs").value)
    assert (ended["state"], ended["reason"], ended["ended"]) == ("failed", lj.RESTART_REASON, "2024-06-01T12:00:00Z")

    store.create(NODE + ".other", STEP % ("other", "running", THEM))
    written = json.loads(lj.end_one(store, NODE, "other", "cancelled by hand", owner=ME))
    assert (written["state"], written["reason"]) == ("failed", "cancelled by hand")
    with pytest.raises(lj.RefusedError):
        lj.end_one(store, NODE, "other", "again", owner=ME)
    with pytest.raises(lj.RefusedError):
        lj.end_one(store, NODE, "mine", "mine", owner=ME)
    store.create(NODE + ".live", STEP % ("live", "running", THEM))
    with pytest.raises(lj.RefusedError):
        lj.end_one(store, NODE, "live", "x", owner=ME, live=lambda id: id == "live")
    with pytest.raises(lj.NotFoundError):
        lj.end_one(store, NODE, "nothing", "x")
    with pytest.raises(lj.ParseError):
        lj.end_one(store, NODE, "bad", "x")
    with pytest.raises(lj.InvalidArgumentError):
        lj.end_one(store, NODE, "live", "")
    with pytest.raises(TypeError, match="live must return a bool"):
        lj.end_one(store, NODE, "live", "x", owner=ME, live=lambda id: "yes")


def test_sweep_stopped_by_its_log_keeps_its_report():
    store = lj.memory_store()
    ra = store.create(NODE + ".a", STEP % ("a", "running", THEM))
    rb = store.create(NODE + ".b", STEP % ("b", "running", THEM))
    with pytest.raises(lj.StoppedError) as e:
        lj.sweep(store, NODE, owner=ME, before=BEFORE, now=NOW, write_window=1, log=lambda line: False)
    assert e.value.code == constant("LJ_EUSER")
    report = e.value.report  # the first end landed and was logged; the log stopped the second
    assert report.code == constant("LJ_EUSER") and report.message == e.value.message
    assert report.ended == ["a"]
    assert [(w.key, w.outcome, w.revision) for w in report.writes] == [
        ((NODE + ".a").encode(), lj.SweepOutcome.DONE, ra), ((NODE + ".b").encode(), lj.SweepOutcome.FAILED, rb)]
    assert json.loads(store.get(NODE + ".a").value)["state"] == "failed"
    assert json.loads(store.get(NODE + ".b").value)["state"] == "running"
    with pytest.raises(lj.StoppedError):
        lj.sweep(store, NODE, owner=ME, on_key=lambda key: False)
    with pytest.raises(AttributeError):
        lj.sweep(store, NODE, owner=ME, on_key=lambda key: key.nothing)
    with pytest.raises(TypeError, match="store must be a Store"):
        lj.sweep(None, NODE)
    with pytest.raises(lj.InvalidArgumentError):
        lj.sweep(store, "")


# --- lease directories -----------------------------------------------------------------

def test_lease_directory(tmp_path):
    repo = tmp_path / "checkout"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.endswith("LEASE_DIR")}
    opts = lj.LeaseOptions(environment=env)
    path = lj.lease_dir_path(repo, opts)
    assert path == str(repo / ".git" / "gstack-leases")
    d = lj.LeaseDir.of(str(repo), opts)
    assert d.path == path
    assert d.touch(os.getpid()).exit_code == 0
    assert open(os.path.join(path, str(os.getpid()))).read().split("\n")[0] == lj.lease_identity()
    listed = d.list()
    assert listed.exit_code == 0 and listed.stdout == ["%d 0m alive" % os.getpid()]
    assert d.live().exit_code == 0
    assert lj.lease_state(str(os.getpid()), lj.lease_identity(), 0) is lj.LeaseState.ALIVE
    assert lj.lease_state("999999999", "linux x 1", 0) is lj.LeaseState.DEAD
    out = lj.run_lease_command(["list", "--root", str(repo)], options=opts)
    assert out == listed
    usage = lj.run_lease_command(["bogus"])
    assert usage.exit_code == 2 and usage.stderr
    with pytest.raises(lj.NotFoundError):
        lj.lease_dir_path(tmp_path, opts)
    with pytest.raises(lj.InvalidArgumentError):
        lj.lease_dir_path("", opts)
    with pytest.raises(ValueError, match="holds a NUL"):
        lj.run_lease_command(["list", "--root", "a\0b"])
    with pytest.raises(TypeError, match="sequence of str or bytes"):
        lj.run_lease_command("list")
    with pytest.raises(TypeError):
        lj.run_lease_command([None])
    with pytest.raises(TypeError, match="options must be LeaseOptions"):
        lj.lease_state("1", "r", 0, options={})


# --- every exception class from a real call --------------------------------------------

def raised_by_backend(exc):
    backend = DictBackend()
    store = lj.callback_store(backend)
    backend.fail = exc
    with pytest.raises(lj.LeasejudgeError) as e:
        store.get("k")
    return e.value


def c_version_error():
    opts = _lib.OwnerOptions()
    with pytest.raises(lj.LeasejudgeError) as e:
        _lib.call_plain("lj_owner_options_init", ctypes.byref(opts), 999)
    return e.value


def c_store_error():
    with pytest.raises(lj.LeasejudgeError) as e:
        lj.nats_store("nats://127.0.0.1:1", "bucket", connect_timeout_ms=300)
    return e.value


def c_stopped():
    store = lj.memory_store()
    store.create(NODE + ".a", STEP % ("a", "running", THEM))
    with pytest.raises(lj.LeasejudgeError) as e:
        lj.sweep(store, NODE, owner=ME, log=lambda line: False)
    return e.value


def raised(call):
    with pytest.raises(lj.LeasejudgeError) as e:
        call()
    return e.value


def test_every_exception_class_from_a_real_call(tmp_path):
    (tmp_path / "file").write_text("")
    mem = lj.memory_store()
    rev = mem.create("k", "v")
    mem.create("n.done", STEP % ("done", "succeeded", THEM))
    cases = {
        "LJ_EINVAL": (lj.InvalidArgumentError, lambda: raised(lambda: lj.owner_token(-1))),
        "LJ_ENOMEM": (lj.OutOfMemoryError, lambda: raised_by_backend(MemoryError())),
        "LJ_EPARSE": (lj.ParseError, lambda: raised(lambda: lj.renew_lock_body("[1]"))),
        "LJ_ECHANGED": (lj.ChangedError, lambda: raised(lambda: mem.update("k", "w", rev + 1))),
        "LJ_ENOTFOUND": (lj.NotFoundError, lambda: raised(lambda: mem.get("missing"))),
        "LJ_EIO": (lj.SystemFailureError, lambda: raised(lambda: lj.file_store(str(tmp_path / "file")))),
        "LJ_EVERSION": (lj.VersionError, c_version_error),
        "LJ_EUSER": (lj.StoppedError, c_stopped),
        "LJ_ETIMEOUT": (lj.TimedOutError, lambda: raised_by_backend(lj.TimedOutError(-9, "slow"))),
        "LJ_EUNSUPPORTED": (lj.UnsupportedError, lambda: raised_by_backend(lj.UnsupportedError(-10, "no"))),
        "LJ_EEXISTS": (lj.ExistsError, lambda: raised(lambda: mem.create("k", "again"))),
        "LJ_EREFUSED": (lj.RefusedError, lambda: raised(lambda: lj.end_one(mem, "n", "done", "why"))),
        "LJ_ESTORE": (lj.StoreError, c_store_error),
        "LJ_EBUSY": (lj.BusyError, lambda: raised_by_backend(lj.BusyError(-14, "held"))),
        "LJ_EINTERNAL": (lj.InternalError, lambda: raised_by_backend(lj.InternalError(-15, "bug"))),
        "LJ_EUNKNOWN": (lj.OutcomeUnknownError, lambda: raised_by_backend(lj.OutcomeUnknownError(-16, "no answer"))),
    }
    codes = re.findall(r"(?m)^#define (LJ_E[A-Z]+) \(", HEADER)
    assert sorted(codes) == sorted(cases)  # one class for each code the header defines
    for name, (cls, make) in cases.items():
        exc = make()
        assert type(exc) is cls, (name, exc)
        assert exc.code == constant(name) == cls.code, name
        assert isinstance(exc, lj.LeasejudgeError) and str(exc) == exc.message and exc.message, name
    assert len({cls for cls, _ in cases.values()}) == len(cases)
    assert isinstance(lj.InvalidArgumentError(-1, "x"), ValueError)
    assert isinstance(lj.NotFoundError(-5, "x"), LookupError)
    assert isinstance(lj.TimedOutError(-9, "x"), TimeoutError)


@pytest.mark.skipif(os.environ.get("LEASEJUDGE_SANITIZE", "").upper() in ("ON", "1", "TRUE", "YES"),
                    reason="the sanitizer's quarantine holds freed memory: leaks are checked by the C tests")
def test_no_leak_or_crash_over_many_calls():
    """Repeated calls with bad and good input leave the process's size flat."""
    def rss_kb():
        return int(re.search(r"(?m)^VmRSS:\s+(\d+)", open("/proc/self/status").read()).group(1))

    def round_():
        for _ in range(2000):
            lj.judge_lock(PROCESS_BODY, ms("2024-05-01T10:01:00.000Z"), here=here(lambda pid: False))
            lj.judge_lock(b"\xff" * 100)
            try:
                lj.renew_lock_body("[1]")
            except lj.ParseError:
                pass
    round_()
    gc.collect()
    before = rss_kb()
    for _ in range(3):
        round_()
    gc.collect()
    assert rss_kb() - before < 8192, (before, rss_kb())


if __name__ == "__main__":
    python_support.run_pytest(__file__)


def test_the_default_rule_never_ends_a_live_owners_step():
    # A step whose owner is a process running now on this node (this test's parent):
    # a sweep naming no owner judges by provably-dead, the library's default, and
    # leaves it; only a caller naming its own token gets not-self.
    live = lj.owner_token(os.getppid())
    store = lj.memory_store()
    store.create("node-a.l0", STEP % ("l0", "running", live))
    report = lj.sweep(store, "node-a")
    assert report.counts.ends == 0 and report.counts.leaves == 1
    assert json.loads(store.get("node-a.l0").value)["state"] == "running"
    plan = lj.plan_lines(b'{"key":"node-a.l0","revision":1,"value":' + json.dumps(
        json.loads(STEP % ("l0", "running", live))).encode() + b'}\n', node="node-a")
    assert plan.summary.ends == 0
    with pytest.raises(lj.InvalidArgumentError, match="not-self"):
        lj.sweep(store, "node-a", rule="not-self")
    report = lj.sweep(store, "node-a", owner=ME, rule="not-self", before=BEFORE, now=NOW)
    assert report.counts.ends == 1
    assert lj.StepRule("provably-dead") is lj.StepRule.PROVABLY_DEAD
    with pytest.raises(ValueError):
        lj.StepRule("nobody")
