"""The Python package on a real etcd (one member this test starts on 127.0.0.1, free
ports, its own data directory): open_store of an etcd:// URL, a lock acquired, judged
and released there; bad etcd:// URLs answered with InvalidArgumentError."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_support  # noqa: E402

python_support.bootstrap()

ETCD = os.environ.get("LEASEJUDGE_ETCD") or shutil.which("etcd")
if not ETCD:
    python_support.skip_or_fail("etcd is not installed (Debian: etcd-server)")

import pytest  # noqa: E402

import leasejudge as lj  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def endpoint():
    """host:port of a one-member etcd, stopped and removed when the module ends."""
    root = tempfile.mkdtemp(prefix="lj-py-etcd-")
    client, peer = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}  # etcd is no program of ours
    log = open(os.path.join(root, "etcd.log"), "wb")
    proc = subprocess.Popen([
        ETCD, "--name", "m0", "--data-dir", os.path.join(root, "m0"),
        "--listen-client-urls", "http://127.0.0.1:%d" % client, "--advertise-client-urls",
        "http://127.0.0.1:%d" % client, "--listen-peer-urls", "http://127.0.0.1:%d" % peer,
        "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % peer, "--initial-cluster",
        "m0=http://127.0.0.1:%d" % peer, "--initial-cluster-state", "new"], stdout=log, stderr=log, env=env)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                req = urllib.request.Request("http://127.0.0.1:%d/v3/kv/range" % client, data=b'{"key":"cHJvYmU="}')
                if b'"header"' in urllib.request.urlopen(req, timeout=1).read():
                    break
            except OSError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, open(os.path.join(root, "etcd.log")).read()
            time.sleep(0.1)
        yield "127.0.0.1:%d" % client
    finally:
        proc.kill()
        proc.wait()
        log.close()
        shutil.rmtree(root, ignore_errors=True)


def test_a_lock_acquired_judged_and_released_on_etcd(endpoint):
    store = lj.open_store("etcd://%s/py-doors" % endpoint)
    try:
        lock, acq = lj.acquire_lock(store, "locks/deploy", "deploy")
        assert acq.outcome == lj.AcquireOutcome.ACQUIRED and lock is not None
        entry = store.get("locks/deploy")
        assert entry.revision == acq.revision > 0
        # Ours: this process is alive and its lease has ten minutes to run.
        v = lj.judge_lock(entry.value)
        assert (v.kind.name, v.reason.code, v.manual_removal) == ("HELD", "lease_runs", False)
        _, again = lj.acquire_lock(store, "locks/deploy", "deploy")
        assert again.outcome == lj.AcquireOutcome.HELD and again.verdict.reason.code == "lease_runs"
        lock.release()
        with pytest.raises(lj.NotFoundError):
            store.get("locks/deploy")
    finally:
        store.close()


@pytest.mark.parametrize("url", ["etcd://%s", "etcd://%s/", "etcd://127.0.0.1:99999/p", "etcd://127.0.0.1:abc/p",
                                 "etcd:///p", "etcd://:2379/p"])
def test_a_bad_etcd_url_is_an_invalid_argument(endpoint, url):
    with pytest.raises(lj.InvalidArgumentError) as e:
        lj.open_store(url % endpoint if "%s" in url else url)
    assert "is not etcd://[user:pass@]host:port[,host:port...]/PREFIX" in str(e.value)


if __name__ == "__main__":
    python_support.run_pytest(__file__)
