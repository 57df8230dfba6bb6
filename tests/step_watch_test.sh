#!/usr/bin/env bash
# leasejudge step watch on a real nats-server, with real processes and signals:
#  - a step left running by a SIGKILLed process (a dead pid of this boot) is ended at
#    the start and, written later, within one interval of its write;
#  - an ask a gone owner held is deleted; the watch's own steps, a live owner's and
#    another node's are left;
#  - a nats-server restart is survived: the loss logged, the watch resumed, a step
#    written after it ended; no key is ended twice;
#  - its metrics, read with curl, equal what the bucket shows;
#  - SIGTERM stops it cleanly (exit 0, a last line of counts), every key whole.
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"

bin=${LEASEJUDGE_BINARY_DIR:?}/leasejudge
[ -x "$bin" ] || bin=$(find "${LEASEJUDGE_BINARY_DIR}" -name leasejudge -type f -perm -u+x | head -n 1)
[ -x "$bin" ] || skip_or_fail "no leasejudge command in the build"
. "$LEASEJUDGE_SOURCE_DIR/tests/nats_server.sh"
need_nats_server
command -v curl >/dev/null || skip_or_fail "curl is not installed"
# A real HTTP client, never left waiting, and without the sanitizer runtime the test's
# environment preloads for our programs (curl is not one: under it, it can hang).
http() { env -u LD_PRELOAD curl -s --max-time 10 "$@"; }
command -v python3 >/dev/null || skip_or_fail "python3 is not installed"

tmp=$(mktemp -d)
pids=()
cleanup() {
  exec 2>/dev/null  # the killed jobs are not news
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  stop_nats_server
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
[ -n "${LEASEJUDGE_KEEP:-}" ] && trap "cp -r $tmp/. $LEASEJUDGE_KEEP; cleanup" EXIT

. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then ok "$1"; else notok "$1" "expected: $2"$'\n'"actual:   $3"; fi
}

INTERVAL_S=3
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
store=nats://127.0.0.1:$port/steps

start_server() {
  NATS_PORT=$port
  start_nats_server "$tmp/nats" || exit 1
  for _ in $(seq 100); do
    "$bin" step export --store "$store" --create-bucket >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "# the bucket could not be made"; cat "$tmp/nats/server.log"; exit 1
}
start_server

# A step value as JSON, and its import line.
step() { # step KEY ID TOOL OWNER
  python3 -c '
import json, sys
key, sid, tool, owner = sys.argv[1:5]
v = {"id": sid, "tool": tool, "state": "running", "owner": owner, "started": "2024-05-01T10:00:00Z"}
print(json.dumps({"key": key, "revision": 0, "value": v}))' "$@"
}
put() { step "$@" | "$bin" step import --store "$store" 2>>"$tmp/import.err" >/dev/null; }
# What the bucket holds of KEY: its state ("absent" for none) and its reason.
state() {
  "$bin" step export --store "$store" 2>/dev/null | python3 -c '
import json, sys
key = sys.argv[1]
for line in sys.stdin:
    e = json.loads(line)
    if e["key"] == key:
        v = e["value"]
        print(v.get("state", "?") if isinstance(v, dict) else "no-step")
        break
else:
    print("absent")' "$1"
}
# Seconds (to 0.1) until KEY's state is WANT, or "never" within LIMIT seconds.
wait_state() { # wait_state KEY WANT LIMIT
  local t0=$EPOCHREALTIME
  while :; do
    [ "$(state "$1")" = "$2" ] && { python3 -c "print(round($EPOCHREALTIME - $t0, 1))"; return 0; }
    python3 -c "import sys; sys.exit(0 if $EPOCHREALTIME - $t0 < $3 else 1)" || { echo never; return 1; }
    sleep 0.1
  done
}
within() { python3 -c "import sys; sys.exit(0 if '$1' != 'never' and float('$1') <= $2 else 1)"; }

# Owners: a SIGKILLed process (its pid dead, this boot), a live one, this shell (the
# watch's own: the command speaks for its parent).
sleep 300 &
dead_pid=$!
dead=$("$bin" owner "$dead_pid")
{ kill -9 "$dead_pid" && wait "$dead_pid"; } 2>/dev/null  # the shell's "Killed" is no news
sleep 300 &
live_pid=$!
pids+=("$live_pid")
live=$("$bin" owner "$live_pid")
self=$("$bin" owner $$)
ask=3f2a9c1e-7b4d-4e8a-9c2b-1d0e5f6a7b8c

put n1.left0 left0 "go build" "$dead"
put n1.own own "go build" "$self"
put n1.live live "go build" "$live"
put n2.other other "go build" "$dead"

"$bin" step watch --store "$store" --node n1 --interval ${INTERVAL_S}s --metrics 127.0.0.1:0 \
  >"$tmp/watch.out" 2>"$tmp/watch.err" &
watch=$!
pids+=("$watch")

t=$(wait_state n1.left0 failed 10)
within "$t" 10 && ok "the step a dead owner left before the start is ended at the start (${t}s)" ||
  notok "the start's sweep ended n1.left0" "$(cat "$tmp/watch.err")"

put n1.dead1 dead1 "go build" "$dead"
t=$(wait_state n1.dead1 failed $INTERVAL_S)
within "$t" $INTERVAL_S && ok "a step of a SIGKILLed process written now is ended within one interval (${t}s)" ||
  notok "n1.dead1 ended within ${INTERVAL_S}s ($t)" "$(cat "$tmp/watch.err")"

put "n1.$ask" "$ask" "check ask" "$dead"
t=$(wait_state "n1.$ask" absent $INTERVAL_S)
within "$t" $INTERVAL_S && ok "an ask a gone owner held is deleted within one interval (${t}s)" ||
  notok "the ask deleted ($t)" "$(cat "$tmp/watch.err")"

# A round passes: the live, own and other node's steps are still running.
sleep $((INTERVAL_S + 1))
check "its own step is left" running "$(state n1.own)"
check "a live owner's step is left" running "$(state n1.live)"
check "another node's step is left" running "$(state n2.other)"
port_m=$(sed -n 's/.*metrics on port \([0-9]*\).*/\1/p' "$tmp/watch.err" | head -n 1)
rounds=$(http "http://127.0.0.1:$port_m/metrics" | sed -n 's/^leasejudge_rounds_total{node="n1"} //p')
[ "${rounds:-0}" -ge 1 ] && ok "a round ran within the interval ($rounds)" || notok "a round ran" "rounds: $rounds"

# nats-server restarts: the watch says so, comes back, and judges what is written after.
stop_nats_server
for _ in $(seq 50); do grep -q "connection to the server was lost\|no server answers" "$tmp/watch.err" && break; sleep 0.1; done
grep -q "connection to the server was lost\|no server answers" "$tmp/watch.err" &&
  ok "the lost connection is logged" || notok "the lost connection is logged" "$(cat "$tmp/watch.err")"
start_server
for _ in $(seq 200); do grep -q "watching the keys of n1 again" "$tmp/watch.err" && break; sleep 0.1; done
grep -q "watching the keys of n1 again" "$tmp/watch.err" && ok "the watch resumes after the restart" ||
  notok "the watch resumes" "$(cat "$tmp/watch.err")"
put n1.dead2 dead2 "go build" "$dead"
t=$(wait_state n1.dead2 failed $INTERVAL_S)
within "$t" $INTERVAL_S && ok "after the restart, a step of a dead owner is ended within one interval (${t}s)" ||
  notok "n1.dead2 ended after the restart ($t)" "$(cat "$tmp/watch.err")"

# Metrics against the bucket.
metrics=$(http -w '\n%{http_code} %{content_type}' "http://127.0.0.1:$port_m/metrics")
check "GET /metrics answers 200 in the text format" "200 text/plain; version=0.0.4; charset=utf-8" \
  "$(tail -n 1 <<<"$metrics")"
check "another path is 404" 404 "$(http -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port_m/other")"
check "POST is 405" 405 "$(http -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port_m/metrics")"
metric() { sed -n "s/^$1{node=\"n1\"} //p" <<<"$metrics"; }
bucket_ended=$("$bin" step export --store "$store" --node n1 2>/dev/null | python3 -c '
import json, sys
print(sum(1 for l in sys.stdin if (v := json.loads(l)["value"]).get("state") == "failed"
          and v.get("reason") == "the build module restarted while it ran"))')
check "leasejudge_ends_total equals the steps the bucket shows ended" "$bucket_ended" "$(metric leasejudge_ends_total)"
check "the bucket shows the three steps of the dead owner ended" 3 "$bucket_ended"
check "leasejudge_deletes_total equals the asks gone from the bucket" \
  "$([ "$(state "n1.$ask")" = absent ] && echo 1 || echo 0)" "$(metric leasejudge_deletes_total)"
check "leasejudge_changed_total is 0 (no other writer)" 0 "$(metric leasejudge_changed_total)"
gone=$(sed -n 's/^leasejudge_keys_judged_total{node="n1",reason="owner-gone"} //p' <<<"$metrics")
check "keys judged owner-gone: the four the dead owner left" 4 "$gone"
grep -q '^# TYPE leasejudge_last_sweep_duration_seconds gauge$' <<<"$metrics" &&
  ok "the last sweep's duration is a gauge" || notok "the last sweep's duration gauge"
[ "$(metric leasejudge_store_errors_total)" -ge 1 ] && ok "the restart's failures are counted as store errors" ||
  notok "store errors counted" "$(metric leasejudge_store_errors_total)"

# Each line as it comes: the four actions are there while it runs.
check "one action line per end and delete, written as it happened" 4 "$(grep -c '^the step ' "$tmp/watch.out")"

# SIGHUP: the store opened again, the watch goes on.
kill -HUP "$watch"
for _ in $(seq 50); do grep -q "hangup: opening the store again" "$tmp/watch.err" && break; sleep 0.1; done
grep -q "hangup: opening the store again" "$tmp/watch.err" && ok "SIGHUP opens the store again" ||
  notok "SIGHUP opens the store again" "$(cat "$tmp/watch.err")"
put n1.dead3 dead3 "go build" "$dead"
t=$(wait_state n1.dead3 failed $INTERVAL_S)
within "$t" $INTERVAL_S && ok "after SIGHUP, a step of a dead owner is ended within one interval (${t}s)" ||
  notok "n1.dead3 ended after SIGHUP ($t)" "$(cat "$tmp/watch.err")"

# SIGTERM: a clean stop between writes, with its last line.
kill -TERM "$watch"
wait "$watch"
check "SIGTERM stops the watch with exit 0" 0 $?
last=$(tail -n 1 "$tmp/watch.err")
case "$last" in
  *"stopped: "*" 4 ended, 1 deleted, 0 changed, 0 unknown"*) ok "its last line says what it did" ;;
  *) notok "its last line says what it did" "$last" ;;
esac
twice=$(grep -o '^the step [^ ]*' "$tmp/watch.out" | sort | uniq -d)
check "no key is ended or deleted twice" "" "$twice"
plan=$("$bin" step plan --store "$store" --node n1 --owner "$self" 2>/dev/null)
check "every key of n1 is whole after the stop (none is no-step)" 0 "$(grep -c '"reason":"no-step"' <<<"$plan")"
check "the own and live steps still run" "running running" "$(state n1.own) $(state n1.live)"

# SIGTERM in the middle of a start's sweep of 500 steps (one write in flight at a time):
# it stops between writes; every key is whole, and what it says it ended is what is ended.
python3 -c '
import json, sys
for i in range(1, 501):
    v = {"id": f"s{i}", "tool": "go build", "state": "running", "owner": sys.argv[1], "started": "2024-05-01T10:00:00Z"}
    print(json.dumps({"key": f"n3.s{i}", "revision": 0, "value": v}))' "$dead" | "$bin" step import --store "$store" 2>/dev/null
: >"$tmp/n3.out"
"$bin" step watch --store "$store" --node n3 --window 1 >"$tmp/n3.out" 2>"$tmp/n3.err" &
w3=$!
pids+=("$w3")
for _ in $(seq 200); do grep -q '^the step ' "$tmp/n3.out" && break; sleep 0.01; done
kill -TERM "$w3"
wait "$w3"
check "SIGTERM during a sweep: exit 0" 0 $?
read -r n3_failed n3_running n3_other < <("$bin" step export --store "$store" --node n3 2>/dev/null | python3 -c '
import json, sys
c = {"failed": 0, "running": 0}
other = 0
for l in sys.stdin:
    v = json.loads(l)["value"]
    if isinstance(v, dict) and v.get("state") in c and (v["state"] == "running" or v.get("reason")):
        c[v["state"]] += 1
    else:
        other += 1
print(c["failed"], c["running"], other)')
said=$(sed -n 's/.*stopped: .*keys judged, \([0-9]*\) ended.*/\1/p' "$tmp/n3.err")
check "every key of the stopped sweep is whole: failed or running, nothing else" "500 0" \
  "$((n3_failed + n3_running)) $n3_other"
check "its last line's ends are the keys ended in the bucket" "$n3_failed" "$said"
[ "$n3_failed" -ge 1 ] && [ "$n3_failed" -lt 500 ] && ok "it stopped in the middle ($n3_failed of 500 ended)" ||
  notok "it stopped in the middle" "$n3_failed of 500 ended"

# Bad input: a usage error (2), a metrics address too (a port that cannot be bound: 7), said.
bad() { # bad EXIT WHAT ARGS...
  local want=$1 what=$2
  shift 2
  timeout 10 "$bin" step watch "$@" >/dev/null 2>"$tmp/bad.err"
  local rc=$?
  if [ "$rc" = "$want" ] && [ -s "$tmp/bad.err" ]; then ok "$what: exit $want, said"; else
    notok "$what: exit $want" "exit $rc: $(cat "$tmp/bad.err")"; fi
}
bad 2 "no --node" --store "$store"
bad 2 "a node with a dot" --store "$store" --node a.b
bad 2 "an empty node" --store "$store" --node ""
bad 2 "an interval of 0" --store "$store" --node n1 --interval 0
bad 2 "an interval that is no duration" --store "$store" --node n1 --interval 5x
bad 2 "an operand" --store "$store" --node n1 extra
bad 2 "no --store" --node n1
bad 2 "a metrics address that is no HOST:PORT" --store "$store" --node n1 --metrics nonsense
bad 2 "a metrics port past 65535" --store "$store" --node n1 --metrics 127.0.0.1:99999
bad 2 "a metrics address that is no UTF-8" --store "$store" --node n1 --metrics $'\xff:1'
bad 4 "a store with no server" --store "nats://127.0.0.1:1/steps" --node n1

echo "1..$n"
[ "$failed" -eq 0 ]
