"""The Python package on a real NATS JetStream bucket: a nats-server this test starts
on 127.0.0.1 with its own store directory; store operations at revisions, the lock's
life, a sweep, and a server gone answered with StoreError."""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_support  # noqa: E402

python_support.bootstrap()


def nats_server_path():
    """LEASEJUDGE_NATS_SERVER, then PATH, then /usr/sbin and /usr/local/sbin."""
    env = os.environ.get("LEASEJUDGE_NATS_SERVER")
    if env and os.access(env, os.X_OK):
        return env
    found = shutil.which("nats-server")
    if found:
        return found
    for d in ("/usr/sbin", "/usr/local/sbin", "/usr/local/bin"):
        if os.access(os.path.join(d, "nats-server"), os.X_OK):
            return os.path.join(d, "nats-server")
    return None


if nats_server_path() is None:
    python_support.skip_or_fail("nats-server is not installed")

import pytest  # noqa: E402

import leasejudge as lj  # noqa: E402

ME = "0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6.4242.lxb2k3a0"
THEM = "0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6.4243.lxb2k3a0"
STEP = '{"id":"%s","tool":"go test","state":"running","owner":"%s","started":"2024-06-01T11:00:00Z"}'


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def accepts(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


@pytest.fixture()
def server():
    """A nats-server with JetStream on a free port; its URL while it runs."""
    port, store_dir = free_port(), tempfile.mkdtemp(prefix="lj-py-nats-")
    proc = subprocess.Popen([nats_server_path(), "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", store_dir],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 15
        while not accepts(port):
            assert proc.poll() is None, "nats-server exited with %s" % proc.returncode
            assert time.monotonic() < deadline, "nats-server did not open its port"
            time.sleep(0.05)
        yield proc, "nats://127.0.0.1:%d" % port
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)
        shutil.rmtree(store_dir, ignore_errors=True)


def open_bucket(url, bucket="py", **kw):
    """JetStream may take a moment after the port opens: retry the open for a while."""
    deadline = time.monotonic() + 15
    while True:
        try:
            return lj.nats_store(url, bucket, create_bucket=True, **kw)
        except lj.StoreError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_store_at_revisions(server):
    _, url = server
    with open_bucket(url) as store:
        r1 = store.create("k.a", b"one")
        assert store.get("k.a") == lj.Entry(b"k.a", b"one", r1)
        with pytest.raises(lj.ExistsError):
            store.create("k.a", b"again")
        r2 = store.update("k.a", b"two", r1)
        assert r2 > r1
        with pytest.raises(lj.ChangedError):
            store.update("k.a", b"three", r1)
        with pytest.raises(lj.ChangedError):
            store.delete("k.a", r1)
        store.create("k.b", b"bee")
        assert sorted(store.keys()) == [b"k.a", b"k.b"]
        assert sorted((e.key, e.value, e.revision) for e in store.scan("k.")) == [(b"k.a", b"two", r2),
                                                                                 (b"k.b", b"bee", r2 + 1)]
        store.delete("k.a", r2)
        with pytest.raises(lj.NotFoundError):
            store.get("k.a")
        for bad in ("", "a b", ".lead", "a..b", b"k\x00", b"\xff"):
            with pytest.raises(lj.InvalidArgumentError):
                store.create(bad, b"v")


def test_lock_life_and_sweep(server):
    _, url = server
    with open_bucket(url, "locks") as store:
        lock, acq = lj.acquire_lock(store, "lock.deploy", "deploy")
        assert acq.outcome is lj.AcquireOutcome.ACQUIRED and acq.revision == lock.revision > 0
        none, held = lj.acquire_lock(store, "lock.deploy", "deploy again")
        assert none is None and held.outcome is lj.AcquireOutcome.HELD
        assert held.verdict.reason is lj.LockReason.LEASE_RUNS
        lock.renew()
        assert json.loads(store.get("lock.deploy").value)["id"] == lock.id
        lock.release()
        lock.close()
        with pytest.raises(lj.NotFoundError):
            store.get("lock.deploy")
        r = store.create("node1.s", STEP % ("s", THEM))
        store.create("node1.m", STEP % ("m", ME))
        report = lj.sweep(store, "node1", owner=ME, before=1717242600 * 10**9, now=1717243200 * 10**9)
        assert report.ended == ["s"] and report.counts == lj.SweepCounts(ends=1, leaves=1)
        assert [(w.key, w.outcome, w.revision) for w in report.writes] == [(b"node1.s", lj.SweepOutcome.DONE, r)]
        ended = json.loads(store.get("node1.s").value)
        assert (ended["state"], ended["ended"]) == ("failed", "2024-06-01T12:00:00Z")


def test_open_store_by_url(server):
    _, url = server
    open_bucket(url, "byurl").close()
    with lj.open_store(url + "/byurl") as store:
        rev = store.create("k", b"v")
        assert store.get("k").revision == rev


def test_server_gone_is_a_store_error(server):
    proc, url = server
    store = open_bucket(url, "gone", request_timeout_ms=500, reconnect_wait_ms=100)
    store.create("k", b"v")
    proc.terminate()
    proc.wait(10)
    with pytest.raises(lj.StoreError):
        store.get("k")
    store.close()
    with pytest.raises(lj.StoreError):
        lj.nats_store(url, "gone", connect_timeout_ms=300)


def test_bad_options(server):
    _, url = server
    with pytest.raises(lj.InvalidArgumentError):
        lj.nats_store(url, "")
    with pytest.raises(lj.InvalidArgumentError):
        lj.nats_store(url, "bad bucket!")
    with pytest.raises(lj.InvalidArgumentError):
        lj.nats_store(url, "b", connect_timeout_ms=-1)
    with pytest.raises(lj.InvalidArgumentError):
        lj.nats_store(url, "b", history=65, create_bucket=True)
    with pytest.raises(TypeError, match="bucket must be str or bytes"):
        lj.nats_store(url, None)
    with pytest.raises(lj.StoreError):
        lj.nats_store(url, "missing_bucket")  # not created, not there


if __name__ == "__main__":
    python_support.run_pytest(__file__)
