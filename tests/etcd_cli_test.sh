#!/usr/bin/env bash
# The command against a real etcd (one member started here): step import, export, plan,
# sweep (dry and applied) and the lock verbs over etcd://, each key checked against
# `step plan` of the exported state, the answer independent of the store.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"

lj=${LEASEJUDGE_BINARY_DIR:?}/leasejudge
[ -x "$lj" ] || skip_or_fail "no leasejudge command in the build"
. "$LEASEJUDGE_SOURCE_DIR/tests/etcd_server.sh"
need_etcd
command -v curl >/dev/null || skip_or_fail "curl is not installed"
command -v python3 >/dev/null || skip_or_fail "python3 is not installed"

tmp=$(mktemp -d)
cleanup() {
  exec 2>/dev/null
  stop_etcd
  rm -rf "$tmp"
}
trap cleanup EXIT

. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" == "$3" ]; then ok "$1"; else notok "$1" "expected:
$2
actual:
$3"; fi
}

start_etcd "$tmp/etcd" || exit 1
url="etcd://$ETCD_ENDPOINT/lj"
now=2024-05-01T12:00:00Z

# --- a state: 240 steps of n1 and 60 of n2 -----------------------------------------------
# n1: a third owned by pids that cannot exist on this boot (gone), a third by this test's
# own shell (alive), the rest with no owner, started long ago (ended); every fifth of
# them done already (left). The expected plan is computed here, from those rules alone.
me=$("$lj" owner $$)
boot=$(cat /proc/sys/kernel/random/boot_id)
pid_max=$(cat /proc/sys/kernel/pid_max)
python3 - "$tmp" "$me" "$boot" "$pid_max" <<'PY'
import json, sys
tmp, me, boot, pid_max = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
lines, want = [], []
for node, count in (("n1", 240), ("n2", 60)):
    for i in range(count):
        key = "%s.s%03d" % (node, i)
        v = {"id": "s%03d" % i, "tool": "build", "state": "running", "started": "2024-05-01T10:00:00Z"}
        kind = i % 3
        if kind == 0:
            v["owner"] = "%s.%d.1" % (boot, pid_max + 1 + i)
        elif kind == 1:
            v["owner"] = me
        if i % 5 == 4:
            v["state"] = "done"
        lines.append(json.dumps({"key": key, "value": v}, separators=(",", ":")))
        if node == "n1":
            act = "leave" if v["state"] != "running" or kind == 1 else "end"
            want.append("%s %s" % (key, act))
open(tmp + "/state.jsonl", "w").write("\n".join(lines) + "\n")
open(tmp + "/want.txt", "w").write("\n".join(want) + "\n")
PY

"$lj" step import --store "$url" "$tmp/state.jsonl" >"$tmp/out" 2>"$tmp/err"
check "step import into etcd: exit 0, 300 keys created" "0 1" "$? $(grep -c '300 keys created, 0 already held' "$tmp/err")"
"$lj" step import --store "$url" "$tmp/state.jsonl" >"$tmp/out" 2>"$tmp/err"
check "step import again: exit 0, every key left as it was" "0 1" "$? $(grep -c '0 keys created, 300 already held' "$tmp/err")"

# Export: the values imported, key by key (every key of the bucket, then one node's).
norm() { python3 -c 'import json,sys
for l in sys.stdin:
    d = json.loads(l); v = d["value"]
    print(d["key"], json.dumps(json.loads(v) if isinstance(v, str) else v, sort_keys=True))' | sort; }
"$lj" step export --store "$url" >"$tmp/export.jsonl" 2>"$tmp/err"
rc=$?
check "step export of the whole prefix: exit 0, the imported values" "0 same" \
  "$rc $(cmp -s <(norm <"$tmp/export.jsonl") <(norm <"$tmp/state.jsonl") && echo same || echo differ)"
"$lj" step export --store "$url" --node n1 >"$tmp/export-n1.jsonl" 2>"$tmp/err"
check "step export --node n1: exit 0, its 240 keys" "0 240" "$? $(wc -l <"$tmp/export-n1.jsonl")"

# The plan of the exported state, and the dry sweep of the store, key by key.
"$lj" step plan --node n1 --now "$now" "$tmp/export.jsonl" 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    d = json.loads(l)
    if d["key"] and d["key"].startswith("n1."): print(d["key"], d["action"])' | sort >"$tmp/plan.txt"
check "step plan of the exported state: the rules' answer for every key" "$(sort "$tmp/want.txt")" "$(cat "$tmp/plan.txt")"
"$lj" step sweep --store "$url" --node n1 --now "$now" --dry-run --json >"$tmp/dry.jsonl" 2>"$tmp/err"
rc=$?
check "step sweep --dry-run on etcd: exit 0, the plan's action for every key" "0
$(cat "$tmp/plan.txt")" "$rc
$(python3 -c 'import json,sys
for l in sys.stdin: d = json.loads(l); print(d["key"], d["action"])' <"$tmp/dry.jsonl" | sort)"
check "... nothing written" "same" \
  "$("$lj" step export --store "$url" 2>/dev/null | norm | cmp -s - <(norm <"$tmp/state.jsonl") && echo same || echo differ)"

# Applied: every end done, each written at the revision read; the rest untouched.
"$lj" step sweep --store "$url" --node n1 --now "$now" --json >"$tmp/swept.jsonl" 2>"$tmp/err"
rc=$?
ends=$(grep -c ' end$' "$tmp/plan.txt")
check "step sweep on etcd: exit 0, every end done" "0 $ends" \
  "$rc $(python3 -c 'import json,sys
print(sum(1 for l in sys.stdin if json.loads(l)["action"] == "end" and json.loads(l)["outcome"] == "done"))' <"$tmp/swept.jsonl")"
"$lj" step export --store "$url" >"$tmp/after.jsonl" 2>/dev/null
check "... the store: the planned ends failed, every other key as imported" "ok" "$(python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
plan = dict(l.split() for l in open(tmp + "/plan.txt"))
before = {json.loads(l)["key"]: json.loads(l)["value"] for l in open(tmp + "/state.jsonl")}
after = {}
for l in open(tmp + "/after.jsonl"):
    d = json.loads(l); v = d["value"]
    after[d["key"]] = json.loads(v) if isinstance(v, str) else v
bad = []
for k, v in before.items():
    a = after.get(k)
    if plan.get(k) == "end":
        if not a or a.get("state") != "failed" or a.get("id") != v["id"]: bad.append(k)
    elif a != v:
        bad.append(k)
print("ok" if not bad and len(after) == len(before) else "differ: %s" % bad[:5])
PY
)"
"$lj" step sweep --store "$url" --node n1 --now "$now" --json >"$tmp/again.jsonl" 2>"$tmp/err"
check "a second sweep: exit 0, nothing left to end" "0 0" \
  "$? $(python3 -c 'import json,sys
print(sum(1 for l in sys.stdin if json.loads(l)["action"] != "leave"))' <"$tmp/again.jsonl")"

# --- locks over etcd ------------------------------------------------------------------
lurl="etcd://$ETCD_ENDPOINT/locks"
out=$("$lj" lock run --store "$lurl" deploy -- sh -c 'echo ran' 2>"$tmp/err")
check "lock run on etcd: exit 0, the command ran" "0 ran" "$? $out"
"$lj" lock acquire --store "$lurl" job --pid $$ --json >"$tmp/acq" 2>"$tmp/err"
check "lock acquire on etcd for this shell: exit 0" 0 $?
token=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["revision"])' "$tmp/acq")
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$tmp/acq")
"$lj" lock acquire --store "$lurl" job >/dev/null 2>&1
check "lock acquire by another process while this shell lives: held, exit 1" 1 $?
"$lj" lock judge --store "$lurl" job >/dev/null 2>&1
check "lock judge on etcd: held, exit 1" 1 $?
"$lj" lock release --store "$lurl" job --id "$id" >/dev/null 2>&1
check "lock release with its id: exit 0" 0 $?
"$lj" lock acquire --store "$lurl" job --json >"$tmp/acq2" 2>"$tmp/err"
rc=$?
token2=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["revision"])' "$tmp/acq2" 2>/dev/null)
check "the next acquire: exit 0, a larger fencing token" "0 yes" "$rc $([ "${token2:-0}" -gt "$token" ] && echo yes || echo "no: $token / $token2")"

echo "1..$n"
[ "$failed" -eq 0 ]
