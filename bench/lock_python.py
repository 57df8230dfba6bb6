"""The Python row of the lock-judge benchmark (bench/lock_rows.sh runs it):

    python3 lock_python.py MIX.tsv MIN_SECONDS

The package's judge_lock (bindings/python, on PYTHONPATH; the library in
LEASEJUDGE_LIBRARY) over the whole body mix leasejudge-bench-lock writes (this
process's pid where it says @SELF@), on this machine's evidence with an in-process
describer, as the C++ and Node rows judge. Each verdict is checked first (the mix's
break flags). The rate is per second of this process's CPU time, as the Node row's.
Prints one JSON object."""
import calendar
import json
import os
import sys
import time

import leasejudge as lj

mix_path, min_seconds = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 1.0
NOW = calendar.timegm((2024, 6, 1, 12, 0, 0)) * 1000
RUNNING = lj.ExecutionState(lj.ExecutionKind.RUNNING)
SUCCEEDED = lj.ExecutionState(lj.ExecutionKind.FINISHED, "succeeded")


def cloud_run(execution):
    return SUCCEEDED if execution.name.endswith("done1") else RUNNING


mix = []
for line in open(mix_path, encoding="utf-8").read().strip().split("\n"):
    name, breaks, body = line.split("\t")
    mix.append((name, breaks == "1", body.replace("@SELF@", str(os.getpid())).encode()))
for name, breaks, body in mix:
    v = lj.judge_lock(body, NOW, describe=cloud_run)
    if (v.kind is lj.LockKind.BREAK) != breaks:
        sys.exit("%s is judged %s: %s" % (name, v.kind.label, v.why))


def rate(seconds):
    bodies = [b for _, _, b in mix]
    judged, start = 0, time.process_time()
    while True:
        for body in bodies:
            lj.judge_lock(body, NOW, describe=cloud_run)
        judged += len(bodies)
        elapsed = time.process_time() - start
        if elapsed >= seconds:
            return judged / elapsed


rate(min(0.2, min_seconds))  # warm-up
print(json.dumps({"row": "python", "bodies": "mix", "judgments_per_s": round(rate(min_seconds))}))
