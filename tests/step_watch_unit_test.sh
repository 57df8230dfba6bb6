#!/usr/bin/env bash
# leasejudge-step-watch@.service, its ExecStart run as systemd runs a Type=notify service
# (tests/systemd_service.py: the environment file read, NOTIFY_SOCKET a datagram socket
# read here, WATCHDOG_USEC set, stderr a file JOURNAL_STREAM names), on a real
# nats-server:
#  - while the store is down, no READY=1, and STATUS= says why; once it is up, READY=1
#    after the start's sweep (every end of it written before), WATCHDOG=1 at half the
#    asked interval, and on SIGTERM STOPPING=1 and exit 0 (also while it waits for
#    its store);
#  - each line on the journal stream opens with its priority (<3>, <4>, <6>), and
#    none where JOURNAL_STREAM names another file or is malformed;
#  - bad values in the environment file are usage errors (exit 2, which the unit does
#    not restart), said at priority 3; a WATCHDOG_USEC that is no number asks no ping;
#  - systemd-analyze verify passes on the unit (a copy whose ExecStart is the build's
#    command, as the installed path does not exist on the machine that runs the tests,
#    and the man page its Documentation= names on MANPATH).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/skip.sh"
src=${LEASEJUDGE_SOURCE_DIR:?}
build=${LEASEJUDGE_BINARY_DIR:?}
bin=$build/leasejudge
[ -x "$bin" ] || skip_or_fail "no leasejudge command in the build"
. "$src/tests/nats_server.sh"
need_nats_server
command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
# The harness starts as systemd would start the service: at once (Debian's python3,
# not a shim that looks for one first).
harness_python=python3
[ -x /usr/bin/python3 ] && harness_python=/usr/bin/python3
command -v systemd-analyze >/dev/null || skip_or_fail "systemd-analyze is not installed (systemd)"

tmp=$(mktemp -d)
cleanup() {
  exec 2>/dev/null
  for f in "$tmp"/*/pid; do [ -f "$f" ] && kill -9 "$(cat "$f")"; done
  stop_nats_server
  wait
  rm -rf "$tmp"
}
trap cleanup EXIT

. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
check() { if [ "$2" = "$3" ]; then ok "$1"; else notok "$1" "expected: $2"$'\n'"actual:   $3"; fi; }

# The unit as installed, its ExecStart the build's command.
unit=$tmp/leasejudge-step-watch@.service
sed "s|@LEASEJUDGE_UNIT_BINDIR@|$build|" "$src/bindings/cli/leasejudge-step-watch@.service.in" >"$unit"
check "the unit reads /etc/leasejudge/step-watch-%i.env and runs step watch for the instance" \
  "EnvironmentFile=/etc/leasejudge/step-watch-%i.env|ExecStart=$bin step watch --node %i --wait-for-store \$LEASEJUDGE_WATCH_OPTIONS|Type=notify" \
  "$(grep -E '^(EnvironmentFile|ExecStart|Type)=' "$unit" | sort | paste -sd'|')"
# Its Documentation= is checked with man(1): the man page as it is installed.
mkdir -p "$tmp/man/man1" && cp "$src/bindings/cli/leasejudge.1" "$tmp/man/man1/"
verify=$(cd "$tmp" && env -u LD_PRELOAD MANPATH="$tmp/man" systemd-analyze verify "./leasejudge-step-watch@n1.service" 2>&1)
check "systemd-analyze verify passes, saying nothing (its man page and commands found)" "0 " "$? $verify"

# run NAME ENVFILE INSTANCE [WATCHDOG_USEC]: the service in the background, in $tmp/NAME.
run() {
  mkdir -p "$tmp/$1"
  "$harness_python" "$src/tests/systemd_service.py" "$unit" "$3" "$2" "$tmp/$1" ${4:+"$4"} &
  for _ in $(seq 100); do [ -f "$tmp/$1/pid" ] && break; sleep 0.05; done
}
# until NAME PATTERN SECONDS: a notification matching PATTERN came within SECONDS.
until_said() {
  local limit=$(($3 * 10))
  for _ in $(seq "$limit"); do grep -q "$2" "$tmp/$1/notify" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

# A bucket with 200 steps a SIGKILLed process left running, then the server stopped.
sleep 300 &
dead_pid=$!
dead=$("$bin" owner "$dead_pid")
{ kill -9 "$dead_pid" && wait "$dead_pid"; } 2>/dev/null
start_nats_server "$tmp/nats" || exit 1
port=$NATS_PORT
python3 -c '
import json, sys
for i in range(200):
    v = {"id": f"s{i}", "tool": "go build", "state": "running", "owner": sys.argv[1], "started": "2024-05-01T10:00:00Z"}
    print(json.dumps({"key": f"n1.s{i}", "value": v}))' "$dead" |
  "$bin" step import --store "nats://127.0.0.1:$port/steps" --create-bucket >/dev/null 2>&1
stop_nats_server

cat >"$tmp/n1.env" <<EOF
# as an operator writes it
LEASEJUDGE_STORE=nats://127.0.0.1:$port/steps
LEASEJUDGE_WATCH_OPTIONS="--interval 2s --window 1"
EOF
run main "$tmp/n1.env" n1 600000
svc=$(cat "$tmp/main/pid")
until_said main "STATUS=.*trying again in 1s" 10
sleep 0.3
check "while the store is down: no READY=1" "" "$(grep 'READY=1' "$tmp/main/notify")"
status=$(grep -m1 'STATUS=' "$tmp/main/notify" | cut -d' ' -f2-)
case "$status" in
  "STATUS=opening nats://127.0.0.1:$port/steps: connecting to NATS at nats://127.0.0.1:$port: no server answers: "*"; trying again in 500ms")
    ok "STATUS= says why: no server answers; when it tries again" ;;
  *) notok "STATUS= says why" "$(cat "$tmp/main/notify")" ;;
esac
check "... and so does the journal, at priority 4" yes \
  "$(grep -q "^<4>leasejudge step watch: opening nats://127.0.0.1:$port/steps: .*no server answers.*; trying again in 500ms$" "$tmp/main/stderr" && echo yes)"

NATS_PORT=$port
start_nats_server "$tmp/nats" || exit 1
if until_said main "READY=1" 20; then ok "READY=1 once the store is up"; else notok "READY=1" "$(cat "$tmp/main/notify")"; fi
check "READY=1 after the start's sweep: its 200 ends written before it" "READY=1 lines=200" \
  "$(grep -o 'READY=1.*' "$tmp/main/notify")"
check "... with its status" "STATUS=watching the steps of n1, a round every 2s" \
  "$(grep -A1 'READY=1' "$tmp/main/notify" | tail -n 1 | cut -d' ' -f2-)"
sleep 1.6
# WATCHDOG_USEC 600000: a ping every 300 ms (half the interval), never 600 ms apart.
gaps=$(python3 -c '
import sys
t = [float(l.split()[0]) for l in open(sys.argv[1]) if l.split()[1:2] == ["WATCHDOG=1"]]
g = [b - a for a, b in zip(t, t[1:])]
print(len(t) >= 4, bool(g) and min(g) >= 0.29, bool(g) and max(g) < 0.6)' "$tmp/main/notify")
check "WATCHDOG=1 at half the asked interval (0.3 s), never as far apart as the interval" "True True True" "$gaps"
check "no WATCHDOG=1 before READY=1" "READY=1" \
  "$(grep -m1 -o 'READY=1\|WATCHDOG=1' "$tmp/main/notify")"
kill -TERM "$svc"
until_said main "^exit" 10
check "SIGTERM: STOPPING=1, then exit 0" "STOPPING=1|exit 0" \
  "$(grep -o 'STOPPING=1$\|^exit .*' "$tmp/main/notify" | paste -sd'|')"
check "the journal's lines each open with a priority" "" \
  "$(grep -v '^<[346]>leasejudge step watch: ' "$tmp/main/stderr")"
check "... the notes at 6, the store's failures at 4, the last line at 6" "<6>|<4>|<6>" \
  "$(grep -m1 -o '^<.>leasejudge step watch: rule' "$tmp/main/stderr" | cut -c1-3)|$(grep -m1 -o '^<.>.*trying again' "$tmp/main/stderr" | cut -c1-3)|$(tail -n 1 "$tmp/main/stderr" | cut -c1-3)"
check "the last line says what it did: the 200 ends" yes \
  "$(tail -n 1 "$tmp/main/stderr" | grep -q 'stopped: .* 200 ended' && echo yes)"

# A file: store, WATCHDOG_USEC that is no number: ready, no ping asked.
mkdir -p "$tmp/fs"
printf 'LEASEJUDGE_STORE=file:%s\n' "$tmp/fs" >"$tmp/fs.env"
run fs "$tmp/fs.env" n2 "not-a-number"
until_said fs "READY=1" 10 && sleep 0.5
kill -TERM "$(cat "$tmp/fs/pid")"
until_said fs "^exit" 10
check "a file: store, WATCHDOG_USEC no number: READY=1, no WATCHDOG=1, STOPPING=1, exit 0" \
  "READY=1 lines=0|STOPPING=1|exit 0" "$(grep -o 'READY=1.*\|WATCHDOG=1\|STOPPING=1$\|^exit .*' "$tmp/fs/notify" | paste -sd'|')"

# SIGTERM while the store is still down: it stops waiting, never ready.
printf 'LEASEJUDGE_STORE=nats://127.0.0.1:1/steps\n' >"$tmp/down.env"
run down "$tmp/down.env" n3
until_said down "STATUS=.*trying again" 10
kill -TERM "$(cat "$tmp/down/pid")"
until_said down "^exit" 10
check "SIGTERM while the store is down: STOPPING=1, exit 0, said; never ready" "STOPPING=1|exit 0 1" \
  "$(grep -o 'READY=1\|STOPPING=1$\|^exit .*' "$tmp/down/notify" | paste -sd'|') $(grep -c '^<6>leasejudge step watch: stopped before the store could be opened$' "$tmp/down/stderr")"

# Bad values in the environment file: usage errors, exit 2, said at priority 3.
bad() { # bad WHAT INSTANCE EXPECTED-LINE-PART ENV-LINES...
  local what=$1 instance=$2 want=$3 name=bad$n
  shift 3
  printf '%s\n' "$@" >"$tmp/$name.env"
  run "$name" "$tmp/$name.env" "$instance" 600000
  until_said "$name" "^exit" 10
  local got
  got="$(grep -v '^[0-9.]* STATUS=' "$tmp/$name/notify" | paste -sd'|') $(grep -c "^<3>leasejudge step watch: .*$want" "$tmp/$name/stderr")"
  check "$what: exit 2, said at priority 3, never ready" "exit 2 1" "$got"
}
bad "no LEASEJUDGE_STORE" n1 "--store URL is required" "LEASEJUDGE_WATCH_OPTIONS=--interval 5s"
bad "LEASEJUDGE_STORE empty" n1 "--store URL is required" "LEASEJUDGE_STORE="
bad "LEASEJUDGE_STORE no URL" n1 "not a store URL" "LEASEJUDGE_STORE=bogus:x"
bad "an interval that is no duration" n1 "--interval 5x is no duration" "LEASEJUDGE_STORE=file:$tmp/fs" \
  "LEASEJUDGE_WATCH_OPTIONS=--interval 5x"
bad "an option the watch does not take" n1 "unknown option --bogus" "LEASEJUDGE_STORE=file:$tmp/fs" \
  "LEASEJUDGE_WATCH_OPTIONS=--bogus"
bad "an instance that is no node (a dot)" a.b "the node a.b holds a '.'" "LEASEJUDGE_STORE=file:$tmp/fs"
check "the unit does not restart a usage error" "RestartPreventExitStatus=2" \
  "$(grep '^RestartPreventExitStatus=' "$unit")"

# JOURNAL_STREAM that names another file, or is no device:inode: no priorities.
printf 'x' >"$tmp/other"
other=$(stat -c '%d:%i' "$tmp/other")
plain=""
for js in "$other" "" "abc" "1:" ":1" "1:2:3" "99999999999999999999999:1" "-1:5" "$(stat -c '%d' "$tmp/other"):x"; do
  JOURNAL_STREAM=$js "$bin" step watch --node n1 --interval 5x 2>"$tmp/js.err"
  rc=$?
  { [ "$rc" = 2 ] && ! grep -q '^<' "$tmp/js.err"; } || plain="$plain [$js: exit $rc, $(head -c 80 "$tmp/js.err")]"
done
check "JOURNAL_STREAM naming another file, empty or malformed: lines without a priority" "" "$plain"
exec 3>"$tmp/js.err"
JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/js.err") "$bin" step watch --node n1 --interval 5x 2>&3
exec 3>&-
check "JOURNAL_STREAM naming stderr: the usage error at priority 3" "<3>leasejudge step watch: --interval 5x" \
  "$(cut -c1-39 "$tmp/js.err")"

echo "1..$n"
[ "$failed" -eq 0 ]
