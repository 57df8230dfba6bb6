#!/usr/bin/env python3
"""The conformance checker: runs one door's runner over the scenario table and compares
each answer with the table's, printing TAP.

    check.py --door NAME --scenarios FILE -- RUNNER [ARGS...]

The runner gets the table with the checker's placeholders filled in (its path as the
last argument) and prints one line per scenario: "<name>\\t<JSON answer>", or
"<name>\\tunsupported" for a kind its door has no entry point for. The door may answer
exactly the kinds the table's "doors" lists for it, and must answer those.

Placeholders filled here, computed from /proc (not by the code under test):
LIVE (this checker's owner token), LIVE2 (a sleeping child's), DEAD (this boot, a pid
above pid_max), OTHERBOOT (another boot's), BOOT, TMP (a fresh directory holding
existing/ and the regular file afile), LIVEPID, DEADPID. The runner fills SELF (its
door's own token), HOST and MACHINE.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

DEAD_PID = 2147480000  # above any pid_max (at most 2^22)


def base36(n):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if n == 0:
            return out


def boot_id():
    with open("/proc/sys/kernel/random/boot_id") as f:
        return f.read().strip()


def owner_token(pid):
    """<boot id>.<pid>.<start ms, base 36>: the start as the kernel recorded it."""
    with open("/proc/stat") as f:
        btime = next(int(l.split()[1]) for l in f if l.startswith("btime "))
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[19])  # field 22, starttime
    start_ms = btime * 1000 + ticks * 1000 // os.sysconf("SC_CLK_TCK")
    return "%s.%d.%s" % (boot_id(), pid, base36(start_ms))


def fill(value, subst):
    if isinstance(value, str):
        for k, v in subst.items():
            value = value.replace("{{%s}}" % k, v)
        return value
    if isinstance(value, list):
        return [fill(v, subst) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, subst) for k, v in value.items()}
    return value


def numeric_pids(value):
    """A holder's "pid" placeholder becomes a JSON number."""
    if isinstance(value, dict):
        return {k: (int(v) if k == "pid" and isinstance(v, str) and v.isdigit() else numeric_pids(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [numeric_pids(v) for v in value]
    return value


def cannot_run(why):
    if os.environ.get("CI") == "true":
        print("Bail out! %s (CI=true: a door that cannot run fails)" % why)
        sys.exit(1)
    print("1..0 # SKIP %s" % why)
    sys.exit(77)


def main(argv):
    sep = argv.index("--")
    opts = dict(zip(argv[1:sep:2], argv[2:sep:2]))
    runner = argv[sep + 1:]
    door, table_path = opts["--door"], opts["--scenarios"]
    with open(table_path) as f:
        table = json.load(f)
    supported = set(table["doors"][door])
    with open("/proc/sys/kernel/pid_max") as f:
        assert DEAD_PID > int(f.read())
    tmp = tempfile.mkdtemp(prefix="lj-conformance-%s-" % door)
    sleeper = subprocess.Popen(["sleep", "300"])
    try:
        os.mkdir(os.path.join(tmp, "existing"))
        with open(os.path.join(tmp, "afile"), "w") as f:
            f.write("not a directory\n")
        subst = {"LIVE": owner_token(os.getpid()), "LIVE2": owner_token(sleeper.pid),
                 "DEAD": "%s.%d.%s" % (boot_id(), DEAD_PID, "lk2x8q0"),
                 "OTHERBOOT": "00000000-0000-4000-8000-000000000000.1.lk2x8q0", "BOOT": boot_id(),
                 "TMP": tmp, "LIVEPID": str(os.getpid()), "DEADPID": str(DEAD_PID)}
        scenarios = numeric_pids(fill(table["scenarios"], subst))
        filled = os.path.join(tmp, "scenarios.json")
        with open(filled, "w") as f:
            json.dump({"doors": table["doors"], "scenarios": scenarios}, f)
        try:
            run = subprocess.run(runner + [filled], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 timeout=int(os.environ.get("LEASEJUDGE_CONFORMANCE_TIMEOUT", "120")))
        except (OSError, subprocess.TimeoutExpired) as e:
            print("not ok 1 - the %s runner ran: %s" % (door, e))
            return 1
        if run.returncode == 77:
            cannot_run("the %s door cannot run here: %s" % (door, run.stderr.decode(errors="replace").strip()))
        return compare(door, supported, table.get("findings", {}).get(door, {}), scenarios, run)
    finally:
        sleeper.kill()
        sleeper.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def compare(door, supported, findings, scenarios, run):
    answers = {}
    for line in run.stdout.decode(errors="replace").splitlines():
        name, _, text = line.partition("\t")
        answers[name] = text
    print("1..%d" % (len(scenarios) + 1))
    failed = []
    ok = run.returncode == 0
    print("%s 1 - the %s runner exits 0 (exit %d)" % ("ok" if ok else "not ok", door, run.returncode))
    if not ok:
        failed.append("(runner exit)")
        sys.stderr.write(run.stderr.decode(errors="replace"))
    for i, s in enumerate(scenarios, 2):
        name, kind = s["name"], s["kind"]
        got = answers.get(name)
        if kind not in supported:
            good = got == "unsupported"
            want = "unsupported"
        else:
            want = s["expect"]
            try:
                good = got is not None and json.loads(got) == want
            except ValueError:
                good = False
        finding = findings.get(name)
        if finding is not None and not good:
            # A door known to answer against the policy: reported, never taken for right.
            print("not ok %d - %s: %s # TODO finding: %s" % (i, door, name, finding))
            print("#   expected %s\n#   got      %s" % (json.dumps(want), got))
            continue
        if finding is not None:
            print("not ok %d - %s: %s answers as the table says: remove its finding" % (i, door, name))
            failed.append(name)
            continue
        print("%s %d - %s: %s" % ("ok" if good else "not ok", i, door, name))
        if not good:
            failed.append(name)
            print("#   kind %s\n#   expected %s\n#   got      %s" % (kind, json.dumps(want), got))
    extra = set(answers) - {s["name"] for s in scenarios}
    if extra:
        print("# answers for no scenario: %s" % ", ".join(sorted(extra)))
    if failed:
        print("# %s: %d mismatches: %s" % (door, len(failed), ", ".join(failed)))
        return 1
    if findings:
        print("# %s: %d findings (the door answers against the policy): %s"
              % (door, len(findings), ", ".join(sorted(findings))))
    print("# %s: every other scenario of %d as the table says" % (door, len(scenarios)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
