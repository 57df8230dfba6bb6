#!/usr/bin/env python3
"""The leasejudge command as a contender of bench/run: `leasejudge step plan` over a
state's JSON lines, the whole process timed (start, reading the file, planning over
--threads threads, writing the lines to /dev/null), repeated for --min-time seconds or
--max-reps times; the best repetition is the figure. Prints one JSON object as the other
contenders do: keys, seconds, value_bytes (the values' bytes, from the state's summary;
else the file's), peak_rss_kb (the largest child's), reps, and the plan's end / delete /
leave from the summary the command writes on stderr."""
import argparse
import json
import re
import resource
import subprocess
import sys
import time

p = argparse.ArgumentParser()
for name in ("command", "state", "node", "owner", "now", "before", "bound"):
    p.add_argument("--" + name, required=True)
p.add_argument("--value-bytes", default="")
p.add_argument("--threads", default="1")
p.add_argument("--min-time", type=float, default=1.0)
p.add_argument("--max-reps", type=int, default=5)
a = p.parse_args()

argv = [a.command, "step", "plan", "--threads", a.threads, "--node", a.node, "--owner", a.owner, "--rule", "not-self", "--now", a.now,
        "--before", a.before, "--bound", a.bound, a.state]
best = None
reps = 0
spent = 0.0
summary = ""
while reps < a.max_reps and (reps == 0 or spent < a.min_time):
    t0 = time.perf_counter()
    with open("/dev/null", "wb") as devnull:
        r = subprocess.run(argv, stdout=devnull, stderr=subprocess.PIPE)
    took = time.perf_counter() - t0
    # 7: the state held malformed lines (the summary counts them); anything else failed.
    if r.returncode != 0 and not (r.returncode == 7 and re.search(rb" [1-9]\d* malformed lines?\n?$", r.stderr)):
        sys.stderr.write(r.stderr.decode(errors="replace"))
        sys.exit(f"{' '.join(argv)}: exit {r.returncode}")
    summary = r.stderr.decode(errors="replace").strip().splitlines()[-1]
    reps += 1
    spent += took
    best = took if best is None else min(best, took)

m = re.match(r"step plan: (\d+) keys?: (\d+) end, (\d+) delete, (\d+) leave, (\d+) no-step, (\d+) other-node, "
             r"(\d+) malformed lines?$", summary)
if not m:
    sys.exit(f"no summary line: {summary!r}")
keys, end, delete, leave, no_step, other, malformed = map(int, m.groups())
if a.value_bytes.isdigit():
    size = int(a.value_bytes)
else:
    with open(a.state, "rb") as f:
        size = f.seek(0, 2)
print(json.dumps({"keys": keys + malformed, "seconds": best, "value_bytes": size,
                  "peak_rss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "reps": reps,
                  "end": end, "delete": delete, "leave": leave + no_step + other + malformed,
                  "allocations_counted": False}, separators=(",", ":")))
