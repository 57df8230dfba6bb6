#!/usr/bin/env python3
"""The conformance table through the Python package (bindings/python/src/leasejudge):
one answer line per scenario, "<name>\\t<JSON>" (check.py compares)."""
import datetime
import json
import os
import socket
import sys

SOURCE = os.environ.get("LEASEJUDGE_SOURCE_DIR") or os.path.join(os.path.dirname(__file__), "..", "..")
if not os.environ.get("LEASEJUDGE_LIBRARY"):
    sys.stderr.write("LEASEJUDGE_LIBRARY is not set\n")
    sys.exit(77)
sys.path.insert(0, os.path.join(SOURCE, "bindings", "python", "src"))
import leasejudge as lj  # noqa: E402
from leasejudge import errors  # noqa: E402

CLASSES = {errors.InvalidArgumentError: "invalid", errors.StoreError: "store", errors.SystemFailureError: "io",
           errors.ParseError: "parse", errors.NotFoundError: "notfound", errors.ChangedError: "changed"}


def error_of(e):
    for cls, name in CLASSES.items():
        if isinstance(e, cls):
            return {"error": name}
    return {"error": "%s: %s" % (type(e).__name__, e)}


def at(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def ms(text):
    return int(at(text).timestamp() * 1000)


class Runner:
    def __init__(self):
        self.self_token = lj.owner_token()
        self.machine = lj.machine_id() or ""
        self.host = socket.gethostname()

    def plan(self, s):
        data = "".join(l.replace("{{SELF}}", self.self_token) + "\n" for l in s["lines"])
        kw = {"node": s["node"], "now": at(s["now"]), "before": at(s["before"])}
        if "owner" in s:
            kw["owner"] = s["owner"]
        if "rule" in s:
            kw["rule"] = s["rule"]
        if "min_age_ms" in s:
            kw["rules"] = lj.Rules(min_age_ms=s["min_age_ms"])
        try:
            got = lj.plan_lines(data, **kw)
        except (errors.LeasejudgeError, ValueError) as e:
            return error_of(e) if isinstance(e, errors.LeasejudgeError) else {"error": "invalid"}
        if s["kind"] == "owner":
            return {"owner": "accepted"}
        return {"plan": [[d.get("key"), d["action"], d["reason"]] for d in got.lines()]}

    def open(self, s):
        try:
            lj.open_store(s["url"], create=s["create"]).close()
            answer = {"opened": True}
        except errors.LeasejudgeError as e:
            answer = error_of(e)
        if "probe" in s:
            answer["exists_after"] = os.path.exists(s["probe"])
        return answer

    @staticmethod
    def until(lock):
        return json.loads(lock.body)["leaseUntil"]

    def lease(self, s):
        store = lj.open_store(s["url"], create=True)
        holder = lj.LockHolder(lease_ms=s["lease_ms"])
        lock, _ = lj.acquire_lock(store, s["key"], "conformance lease", holder=holder, now=ms(s["now0"]))
        first = self.until(lock)
        if s["kind"] == "lease-reopen":  # another run renews it: only the key and the id are known
            ident = lock.id
            lock.close()
            lock = lj.open_lock(store, s["key"], ident, lease_ms=-1)  # LJ_LOCK_LEASE_AS_TAKEN
        lock.renew(now=ms(s["now1"]))
        answer = {"leaseUntil": [first, self.until(lock)]}
        lock.close()
        store.close()
        return answer

    def seed(self, store, s):
        if "holder" in s:
            body = json.dumps(s["holder"]).replace("{{HOST}}", self.host).replace("{{MACHINE}}", self.machine)
            store.create(s["key"], body)

    def lock(self, s):
        store = lj.open_store(s["url"], create=True)
        self.seed(store, s)
        lock, acq = lj.acquire_lock(store, s["key"], "conformance lock", holder=lj.LockHolder(lease_ms=s["lease_ms"]),
                                    now=ms(s["now"]))
        answer = {"outcome": acq.outcome.name.lower().replace("_", "-")}
        if lock is not None:
            answer["broke"] = acq.broke_at != 0
            lock.release()
            lock.close()
        if acq.verdict is not None:
            answer["reason"] = acq.verdict.reason.code
        store.close()
        return answer

    def wait(self, s):
        store = lj.open_store(s["url"], create=True)
        self.seed(store, s)
        lock, acq = lj.acquire_lock_wait(store, s["key"], "conformance wait", timeout=s["wait_ms"] / 1000,
                                         holder=lj.LockHolder(lease_ms=s["lease_ms"]))
        try:
            kept = lj.lock_body_id(store.get(s["key"]).value) == s["holder"]["id"]
        except lj.NotFoundError:
            kept = False
        answer = {"acquired": lock is not None, "holder_kept": kept}
        if lock is not None:
            lock.release()
            lock.close()
        store.close()
        return answer

    def judge(self, s):
        body = s["body"].replace("{{HOST}}", self.host).replace("{{MACHINE}}", self.machine)
        v = lj.judge_lock(body.replace("{{SELF}}", self.self_token).encode(), now=ms(s["now"]))
        return {"kind": v.kind.name.lower(), "reason": v.reason.code, "manual": v.manual_removal}

    def release(self, s):
        """release: our lock released while ours, after another writer took its key
        (another), or after its key was removed (gone); loss: renewed after another writer
        took its key."""
        store = lj.open_store(s["url"], create=True)
        lock, _ = lj.acquire_lock(store, s["key"], "conformance release", holder=lj.LockHolder(lease_ms=s["lease_ms"]))
        try:
            case = s.get("case", "another")
            if case == "another":
                store.update(s["key"], lj.lock_body("another writer"), lock.revision)
            elif case == "gone":
                store.delete(s["key"], lock.revision)
            if s["kind"] == "loss":
                lock.renew()
                return {"renewed": True}
            lock.release()
            return {"released": True}
        except errors.LeasejudgeError as e:
            return error_of(e)
        finally:
            lock.close()
            store.close()

    def answer(self, s):
        kind = s["kind"]
        if kind in ("plan", "plan-self", "owner"):
            return self.plan(s)
        if kind == "open":
            return self.open(s)
        if kind in ("lease", "lease-reopen"):
            return self.lease(s)
        if kind == "lock":
            return self.lock(s)
        if kind == "wait":
            return self.wait(s)
        if kind == "judge":
            return self.judge(s)
        if kind in ("release", "loss"):
            return self.release(s)
        return None


def main():
    with open(sys.argv[1]) as f:
        table = json.load(f)
    r = Runner()
    for s in table["scenarios"]:
        try:
            a = r.answer(s)
        except Exception as e:  # one scenario's failure is its answer; the others still run
            a = {"exception": "%s: %s" % (type(e).__name__, e)}
        print("%s\t%s" % (s["name"], "unsupported" if a is None else json.dumps(a)))


if __name__ == "__main__":
    main()
