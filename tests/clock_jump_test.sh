#!/usr/bin/env bash
# Clocks that are offset or step, with real processes: holders (lock hold, lock run) and
# judges (lock judge, lock acquire, lock show) under libfaketime, against a nats-server
# and an etcd member started here on 127.0.0.1. Only the wall clock moves
# (FAKETIME_DONT_FAKE_MONOTONIC=1), as an NTP step or a wrong clock moves it.
#
# The margin: a body's leaseUntil is its writer's now + the lease + 5 minutes of skew,
# written every third of the lease. A judge whose clock is d ahead of a live holder's
# breaks it only when d > 5m + lease - (time since the holder's last renewal), so never
# while d <= 5m + 2/3 of the lease (less a renewal's and a read's latency), always when
# d > 5m + the lease; with --lease 3s: never up to 5m02s, always past 5m03s. A judge
# behind never breaks a live holder; a holder whose clock steps back by d is a judge d
# ahead. On etcd a live holder's key is bound to a store lease that etcd counts: no
# judge's clock breaks it. The heartbeat counts on the monotonic clock.
#
# Prints a table (case, judgments, verdicts, breaks of a live holder) and asserts exact
# verdicts, reason codes and exit codes. Skips (fails under CI=true) without libfaketime,
# nats-server or etcd.
set -u
src=${LEASEJUDGE_SOURCE_DIR:?}
bin=${LEASEJUDGE_BINARY_DIR:?}
. "$src/tests/skip.sh"
lj=$bin/leasejudge
[ -x "$lj" ] || skip_or_fail "the leasejudge command is not built"
ft=""
for f in /usr/lib/*/faketime/libfaketime.so.1 /usr/lib/faketime/libfaketime.so.1; do
  [ -f "$f" ] && { ft=$f; break; }
done
[ -n "$ft" ] && [ -f "$ft" ] || skip_or_fail "libfaketime is not installed (Debian: faketime)"
. "$src/tests/nats_server.sh"
need_nats_server
. "$src/tests/etcd_server.sh"
need_etcd

work=$(mktemp -d)
bg=()
cleanup() {
  local p
  for p in "${bg[@]}"; do kill -9 "$p" 2>/dev/null; done
  stop_nats_server
  stop_etcd
  rm -rf "$work"
}
trap cleanup EXIT

. "$src/tests/tap.sh"
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then ok "$1"; else notok "$1 (expected '$2', got '$3')"; fi
}
now_ms() { date +%s%3N; }
began=$(now_ms)
mark() { echo "# $1: $((($(now_ms) - began) / 1000)) s since the start"; }

# A command under a clock offset by OFFSET: "${at[@]}" FAKETIME=OFFSET CMD..., OFFSET
# "+SECONDS" or "-SECONDS" (libfaketime reads "+5m10s" as "+5m", so every offset here
# is in seconds); or "${holder_clock[@]}" CMD... (judge_clock), its clock read from a
# file at every call (FAKETIME_NO_CACHE), so that set_clock steps it at once. env execs
# CMD: a command started with & is $!. libfaketime comes after a sanitizer's preload,
# which must be first.
at=(env FAKETIME_DONT_FAKE_MONOTONIC=1 "LD_PRELOAD=${LD_PRELOAD:+$LD_PRELOAD:}$ft")
holder_clock=("${at[@]}" FAKETIME_NO_CACHE=1 "FAKETIME_TIMESTAMP_FILE=$work/holder-clock")
judge_clock=("${at[@]}" FAKETIME_NO_CACHE=1 "FAKETIME_TIMESTAMP_FILE=$work/judge-clock")
# judge_into FILE CMD...: CMD's verdict ("<kind> <reason>") and exit status, a line of FILE.
judge_into() {
  local file=$1 rc
  shift
  "$@" >"$work/v" 2>>"$work/judge.err"
  rc=$?
  echo "$(cut -d' ' -f1,2 "$work/v") $rc" >>"$file"
}
set_clock() { # set_clock FILE OFFSET: the stepping process's clock, written whole at once
  echo "$2" >"$1.tmp" && mv "$1.tmp" "$1"
}
wait_file() { # up to 10 s for a file to hold something
  for _ in $(seq 200); do
    [ -s "$1" ] && return 0
    sleep 0.05
  done
  return 1
}
# The exit status of PID once it ends, within S seconds; 124 when it did not.
exit_within() {
  local pid=$1 s=$2
  for _ in $(seq $((s * 20))); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid"; return $?; }
    sleep 0.05
  done
  return 124
}
field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }
# A JS time (toISOString) as ms since the epoch.
ms_of() { python3 -c 'import datetime, sys; print(round(datetime.datetime.fromisoformat(sys.argv[1].replace("Z", "+00:00")).timestamp() * 1000))' "$1"; }
body_id() { "$lj" lock show --json --store "$1" "$2" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])'; }
revision() { "$lj" lock show --json --store "$1" "$2" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["revision"])'; }

# The table: one row per case.
rows=()
row() { rows+=("$(printf '%-44s %9s %6s %6s %8s %s' "$@")"); }
# tally CASE FILE: the judgments in FILE (judge_into's lines) as a row; breaks of a live
# holder are the breaks (every holder judged here is alive).
tally() {
  local total held breaks unknown
  total=$(wc -l <"$2")
  held=$(grep -c '^held ' "$2")
  breaks=$(grep -c '^break ' "$2")
  unknown=$(grep -c '^unknown ' "$2")
  row "$1" "$total" "$held" "$breaks" "$unknown" "$breaks"
}
# The verdict lines of FILE are all LINE (and there is at least one).
all_are() { [ -s "$2" ] && ! grep -qv "^$1\$" "$2"; }
# every TEST LINE FILE: ok TEST when every judgment in FILE is LINE ("<kind> <reason>
# <exit status>"), else not ok with how many times each judgment came.
every() { all_are "$2" "$3" && ok "$1" || notok "$1: $(sort "$3" | uniq -c | paste -sd,)"; }
# phase CASE FILE CMD...: four judgments by CMD, 0.2 s apart, into FILE (emptied first),
# tallied as the table's row CASE.
phase() {
  local name=$1 file=$2
  shift 2
  : >"$file"
  for _ in 1 2 3 4; do
    judge_into "$file" "$@"
    sleep 0.2
  done
  tally "$name" "$file"
}

start_nats_server "$work/nats" || exit 1
nats=nats://127.0.0.1:$NATS_PORT

# --- the library's clock calls are the ones libfaketime replaces ------------------------
# (Every wall-clock read of the library and the command is clock_gettime(CLOCK_REALTIME),
# directly or through std::chrono::system_clock; nats.c's nats_Now is too. A process's
# start, which owner tokens name, is the kernel's (/proc), which no clock step moves.)
# lock judge (LJ_TIME_DEFAULT: clock_gettime(CLOCK_REALTIME)) of a body on another host, its
# lease ending a minute from now.
until_ms=$(($(now_ms) + 60000))
until_iso=$(python3 -c 'import datetime, sys; print(datetime.datetime.fromtimestamp(int(sys.argv[1]) / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z")' "$until_ms")
printf '{"purpose":"p","host":"elsewhere","pid":4242,"leaseUntil":"%s"}' "$until_iso" >"$work/body.json"
v=$("${at[@]}" FAKETIME=+0 "$lj" lock judge "$work/body.json" | cut -d' ' -f1,2)
check "lock judge, clock as is: held lease_runs" "held lease_runs" "$v"
v=$("${at[@]}" FAKETIME=+120 "$lj" lock judge "$work/body.json" | cut -d' ' -f1,2)
check "lock judge, clock 2m ahead: its now moves with FAKETIME (break lease_ended)" "break lease_ended" "$v"
v=$("${at[@]}" FAKETIME=-3600 "$lj" lock judge "$work/body.json" | cut -d' ' -f1,2)
check "lock judge, clock 1h behind: held lease_runs" "held lease_runs" "$v"

# lock acquire (the body's writer: startedAt and leaseUntil from the clock) 10 minutes
# ahead; lock show (std::chrono::system_clock) reads its lease end as 5m03s away at
# that clock, 15m03s at the real one.
t0=$(now_ms)
"${at[@]}" FAKETIME=+600 "$lj" lock acquire --store "$nats/probe" --create-bucket --lease 3s probe >/dev/null 2>"$work/err"
check "lock acquire 10m ahead: exit 0" 0 $?
body=$("$lj" lock show --json --store "$nats/probe" probe)
started=$(ms_of "$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["body"]["startedAt"])' "$body")")
ahead=$((started - t0))
[ "$ahead" -ge 600000 ] && [ "$ahead" -lt 605000 ] && ok "the body's startedAt is 10m ahead (${ahead} ms)" ||
  notok "the body's startedAt is 10m ahead (${ahead} ms)"
check "the body's leaseUntil is startedAt + 3s + 5m" $((started + 303000)) "$(field "$body" lease_end_ms)"
shown=$("${at[@]}" FAKETIME=+600 "$lj" lock show --store "$nats/probe" probe | sed -n 's/^lease end: *[^ ]* (\(.*\))$/\1/p')
case $shown in "in 5m" | "in 5m"[0-3]s | "in 4m5"[0-9]s) ok "lock show at the writer's clock: the lease ends $shown" ;;
  *) notok "lock show at the writer's clock: the lease ends in about 5m ($shown)" ;; esac
shown=$("$lj" lock show --store "$nats/probe" probe | sed -n 's/^lease end: *[^ ]* (\(.*\))$/\1/p')
case $shown in "in 15m" | "in 15m"[0-3]s | "in 14m5"[0-9]s) ok "lock show at the real clock: the lease ends $shown" ;;
  *) notok "lock show at the real clock: the lease ends in about 15m ($shown)" ;; esac
v=$("${at[@]}" FAKETIME=+1500 "$lj" lock show --store "$nats/probe" probe | sed -n 's/^verdict: *//p')
check "lock show 25m ahead: break lease_ended" "break lease_ended" "$v"

mark "offsets: a judge's clock against a live holder's, on NATS"
# --- offsets: a judge's clock against a live holder's, on NATS ---------------------------
"$lj" lock hold --store "$nats/locks" --create-bucket --lease 3s live >"$work/live.out" 2>"$work/live.err" &
holder=$!
bg+=("$holder")
wait_file "$work/live.out" || notok "the holder took its lock"
live_id=$(body_id "$nats/locks" live)
# label seconds expectation (held, break, or either: the window between 5m02s and 5m03s)
offsets=("-1h -3600 held" "-10m -600 held" "-4m -240 held" "-1m -60 held" "+1m 60 held" "+4m 240 held"
  "+4m45s 285 held" "+5m 300 held" "+5m02.5s 302.5 either" "+5m10s 310 break" "+10m 600 break"
  "+1h 3600 break")
rounds=4
for ((r = 1; r <= rounds; r++)); do
  for spec in "${offsets[@]}"; do
    read -r label secs _ <<<"$spec"
    [ "${secs#-}" = "$secs" ] && secs=+$secs
    judge_into "$work/off$label" "${at[@]}" FAKETIME="$secs" "$lj" lock judge --store "$nats/locks" live
  done
  sleep 0.23  # the rounds fall at different points of the holder's 1 s renewal cycle
done
for spec in "${offsets[@]}"; do
  read -r label secs expect <<<"$spec"
  tally "nats: judge $label (lease 3s)" "$work/off$label"
  case $expect in
    held) every "judge $label: held lease_runs, exit 1, every time" "held lease_runs 1" "$work/off$label" ;;
    break) every "judge $label: break lease_ended, exit 0, every time" "break lease_ended 0" "$work/off$label" ;;
    either) grep -qv '^held lease_runs 1$\|^break lease_ended 0$' "$work/off$label" &&
      notok "judge $label: held lease_runs or break lease_ended: $(sort "$work/off$label" | uniq -c | paste -sd,)" ||
      ok "judge $label: held lease_runs or break lease_ended, by where in the renewal cycle it falls" ;;
  esac
done
"${at[@]}" FAKETIME=+285 "$lj" lock acquire --store "$nats/locks" live >"$work/out" 2>"$work/err"
check "lock acquire 4m45s ahead of a live holder: exit 1 (held)" 1 $?
kill -0 "$holder" 2>/dev/null && ok "the holder still holds its lock after every judgment" || notok "the holder still holds its lock"
check "its body is the one it wrote (its acquisition id)" "$live_id" "$(body_id "$nats/locks" live)"
kill -TERM "$holder"
exit_within "$holder" 5
check "the holder, SIGTERMed: exit 0 (released)" 0 $?

mark "beyond the margin: a judge 5m10s ahead breaks a live lock run"
# --- beyond the margin: a judge 5m10s ahead breaks a live lock run ---------------------------
# The command writes its fencing token and the time, 20 times a second.
cat >"$work/child.sh" <<'EOF'
trap 'echo "$(date +%s%3N)" >"$1.term"; exit 143' TERM
while :; do echo "$LEASEJUDGE_FENCING_TOKEN $(date +%s%3N)" >>"$1"; sleep 0.05; done
EOF
"$lj" lock run --store "$nats/locks" --lease 3s --grace 2s run -- bash "$work/child.sh" "$work/writes" \
  2>"$work/run.err" &
runner=$!
bg+=("$runner")
wait_file "$work/writes" || notok "lock run started its command"
old_token=$(head -1 "$work/writes" | cut -d' ' -f1)
sleep 0.5
"${at[@]}" FAKETIME=+310 "$lj" lock acquire --json --store "$nats/locks" run >"$work/out" 2>"$work/err"
check "lock acquire 5m10s ahead of a live lock run: exit 0 (it broke the lock)" 0 $?
broke_ms=$(now_ms)
exit_within "$runner" 6
check "lock run finds its lock gone at its next renewal: exit 9" 9 $?
lost_ms=$(($(now_ms) - broke_ms))
term_ms=$(($(cat "$work/writes.term" 2>/dev/null || echo 0) - broke_ms))
grep -q "lost the lock (changed: the lock run is no longer ours" "$work/run.err" && ok "lock run says it lost the lock" ||
  notok "lock run says it lost the lock: $(cat "$work/run.err")"
[ "$term_ms" -ge 0 ] && [ "$term_ms" -lt 3000 ] && ok "its command got SIGTERM ${term_ms} ms after the break" ||
  notok "its command got SIGTERM within the lease of the break (${term_ms} ms)"
new_token=$(field "$(cat "$work/out")" revision)
broke_at=$(field "$(cat "$work/out")" broke_at)
[ "$broke_at" -ge "$old_token" ] && ok "it broke the holder's body (at revision $broke_at)" ||
  notok "it broke the holder's body (at revision $broke_at, token $old_token)"
late=$(awk -v t="$broke_ms" '$2 > t' "$work/writes" | wc -l)
check "every write of the broken holder carries its old token" "$old_token" \
  "$(cut -d' ' -f1 "$work/writes" | sort -u | paste -sd,)"
[ "$new_token" -gt "$old_token" ] && ok "the new holder's token is larger ($old_token < $new_token)" ||
  notok "the new holder's token is larger ($old_token, $new_token)"
"$lj" lock release --store "$nats/locks" --id "$(field "$(cat "$work/out")" id)" run >/dev/null 2>"$work/err"
check "the new holder releases its lock: exit 0" 0 $?
row "nats: lock acquire +5m10s of a live lock run" 1 0 1 0 \
  "1 (SIGTERM ${term_ms} ms, exit 9 ${lost_ms} ms after; ${late} writes with token $old_token after it)"

mark "a holder's clock stepping while it renews, on NATS"
# --- a holder's clock stepping while it renews, on NATS ----------------------------------------
# Each phase: step the holder's clock, wait for its next renewal (the body then carries
# the stepped clock), judge at the real clock for about a second.
set_clock "$work/holder-clock" "+0"
jb="$nats/jumps"
"${holder_clock[@]}" "$lj" lock hold --store "$jb" --create-bucket --lease 3s jumpy \
  >"$work/jumpy.out" 2>"$work/jumpy.err" &
jumper=$!
bg+=("$jumper")
wait_file "$work/jumpy.out" || notok "the stepping holder took its lock"
# The time counted spans both reads of the revision whole (each a process that may take
# a while under a sanitizer): no renewal is counted that fell outside it.
t_start=$(now_ms)
rev0=$(revision "$jb" jumpy)
phases=("+0 +0 held" "-4m -240 held" "+1h +3600 held" "-10m -600 break" "+0 +0 held")
for spec in "${phases[@]}"; do
  read -r label secs expect <<<"$spec"
  set_clock "$work/holder-clock" "$secs"
  rev=$(revision "$jb" jumpy)
  for _ in $(seq 60); do
    [ "$(revision "$jb" jumpy)" -gt "$rev" ] && break
    sleep 0.05
  done
  phase "nats: holder's clock steps to $label" "$work/phase" "$lj" lock judge --store "$jb" jumpy
  if [ "$expect" = held ]; then
    every "holder stepped to $label: held lease_runs every time" "held lease_runs 1" "$work/phase"
  else
    every "holder stepped back to $label: break lease_ended every time" "break lease_ended 0" "$work/phase"
  fi
done
renewals=$(($(revision "$jb" jumpy) - rev0))
elapsed=$(($(now_ms) - t_start))
expected=$((elapsed / 1000))
# The heartbeat renews every second of the monotonic clock, whatever the wall clock did:
# no burst when it stepped forward an hour, no stall when it stepped back (a loaded
# machine may wake it late: three quarters of the renewals at least).
[ "$renewals" -ge $((expected * 3 / 4)) ] && [ "$renewals" -le $((expected + 1)) ] &&
  ok "the stepping holder renewed on time: $renewals renewals in $elapsed ms" ||
  notok "the stepping holder renewed on time: $renewals renewals in $elapsed ms"
kill -0 "$jumper" 2>/dev/null && ok "the stepping holder never lost its lock" || notok "the stepping holder never lost its lock"
kill -TERM "$jumper"
exit_within "$jumper" 5
check "the stepping holder, SIGTERMed: exit 0" 0 $?
row "nats: stepping holder, renewals (every 1 s)" "-" "-" "-" "-" "$renewals renewals in $elapsed ms"

mark "a judge's clock stepping while it waits, on NATS"
# --- a judge's clock stepping while it waits, on NATS ----------------------------------------
# lock acquire --wait against a live holder, its clock 4m ahead, then 10m ahead.
"$lj" lock hold --store "$nats/locks" --lease 3s waited >"$work/waited.out" 2>"$work/waited.err" &
holder=$!
bg+=("$holder")
wait_file "$work/waited.out" || notok "the waited-on holder took its lock"
waited_token=$(head -1 "$work/waited.out")
set_clock "$work/judge-clock" "+240"
"${judge_clock[@]}" "$lj" lock acquire --json --store "$nats/locks" --wait 8s waited \
  >"$work/out" 2>"$work/wait.err" &
waiter=$!
bg+=("$waiter")
sleep 2
tries_before=$(($(grep -c "trying again" "$work/wait.err") + 1))
kill -0 "$waiter" 2>/dev/null && ok "the waiter 4m ahead keeps waiting on the live holder ($tries_before tries)" ||
  notok "the waiter 4m ahead keeps waiting on the live holder"
set_clock "$work/judge-clock" "+600"
exit_within "$waiter" 4
check "the waiter stepped to 10m ahead breaks the live holder: exit 0" 0 $?
tries=$(($(grep -c "trying again" "$work/wait.err") + 1))
check "its outcome: acquired" acquired "$(field "$(cat "$work/out")" outcome)"
exit_within "$holder" 4
check "the broken holder reports the loss: exit 9" 9 $?
wtoken=$(field "$(cat "$work/out")" revision)
[ "$wtoken" -gt "$waited_token" ] && ok "with a larger token ($waited_token < $wtoken)" || notok "with a larger token"
"$lj" lock release --store "$nats/locks" --id "$(field "$(cat "$work/out")" id)" waited >/dev/null 2>&1
row "nats: waiting judge +4m, then steps to +10m" "$tries" $((tries - 1)) 1 0 "1 (at the first try after the step)"

mark "a waiter whose clock steps back an hour ends its wait on time"
# --- a waiter whose clock steps back an hour ends its wait on time ----------------------------
# The store's own deadlines count on the monotonic clock (nats.c's nats_Now reads the
# wall clock: a watch slice measured on it waited out the hour).
"$lj" lock hold --store "$nats/locks" --lease 1h quiet >"$work/quiet.out" 2>"$work/quiet.err" &
holder=$!
bg+=("$holder")
wait_file "$work/quiet.out" || notok "the quiet holder took its lock"
set_clock "$work/judge-clock" "+0"
t0=$(now_ms)
"${judge_clock[@]}" "$lj" lock acquire --store "$nats/locks" --wait 2s quiet >"$work/out" 2>"$work/err" &
waiter=$!
bg+=("$waiter")
sleep 0.7
set_clock "$work/judge-clock" "-3600"
exit_within "$waiter" 8
check "a waiter whose clock stepped back 1h: exit 8 (its wait of 2s ended)" 8 $?
took=$(($(now_ms) - t0))
[ "$took" -lt 5000 ] && ok "on time (${took} ms)" || notok "on time (${took} ms)"
row "nats: --wait 2s, its clock steps back 1h" 1 1 0 0 "0 (exit 8 after ${took} ms)"
kill -TERM "$holder"
exit_within "$holder" 5
check "the quiet holder, SIGTERMed: exit 0" 0 $?

mark "etcd: the store lease is counted on the cluster's clock"
# --- etcd: the store lease is counted on the cluster's clock --------------------------------
start_etcd "$work/etcd" || exit 1
etcd=etcd://$ETCD_ENDPOINT/clock
"$lj" lock hold --store "$etcd" --lease 3s held >"$work/etcd.out" 2>"$work/etcd.err" &
holder=$!
bg+=("$holder")
wait_file "$work/etcd.out" || notok "the etcd holder took its lock"
etcd_token=$(head -1 "$work/etcd.out")
: >"$work/ahead"
: >"$work/behind"
for _ in 1 2 3 4; do
  judge_into "$work/ahead" "${at[@]}" FAKETIME=+3600 "$lj" lock judge --store "$etcd" held
  judge_into "$work/behind" "${at[@]}" FAKETIME=-3600 "$lj" lock judge --store "$etcd" held
  sleep 0.2
done
tally "etcd: judge +1h (lease 3s)" "$work/ahead"
tally "etcd: judge -1h (lease 3s)" "$work/behind"
every "etcd, a judge 1h ahead: held lease_runs, exit 1, every time" "held lease_runs 1" "$work/ahead"
every "etcd, a judge 1h behind: held lease_runs, exit 1, every time" "held lease_runs 1" "$work/behind"
"${at[@]}" FAKETIME=+3600 "$lj" lock judge --store "$etcd" held >"$work/v" 2>&1
grep -q "says its lease ended, by this machine's clock, but its store lease [0-9a-f]* still runs" "$work/v" &&
  ok "the why: the body's lease ended by this clock, the store lease still runs" ||
  notok "the why: the body's lease ended by this clock, the store lease still runs: $(cat "$work/v")"
"${at[@]}" FAKETIME=+3600 "$lj" lock acquire --store "$etcd" held >"$work/out" 2>"$work/err"
check "etcd, lock acquire 1h ahead of a live holder: exit 1 (held)" 1 $?
kill -0 "$holder" 2>/dev/null && ok "the etcd holder still holds its lock" || notok "the etcd holder still holds its lock"
kill -TERM "$holder"
exit_within "$holder" 5
check "the etcd holder, SIGTERMed: exit 0 (released)" 0 $?
# A holder whose clock is 10m behind (a NATS body would be judged ended: above).
"${at[@]}" FAKETIME=-600 "$lj" lock hold --store "$etcd" --lease 3s behind >"$work/behind.out" 2>"$work/behind.err" &
holder=$!
bg+=("$holder")
wait_file "$work/behind.out" || notok "the etcd holder 10m behind took its lock"
sleep 1.2  # a renewal, written at its clock
phase "etcd: holder's clock -10m, judge as is" "$work/phase" "$lj" lock judge --store "$etcd" behind
every "etcd, a holder 10m behind: held lease_runs every time" "held lease_runs 1" "$work/phase"
kill -TERM "$holder"
exit_within "$holder" 5
check "the etcd holder 10m behind, SIGTERMed: exit 0" 0 $?

mark "done"
echo "# Clock offsets and steps (judgments of a live holder; every break here breaks a live holder)"
echo "# $(printf '%-44s %9s %6s %6s %8s %s' case judgments held break unknown "breaks of a live holder")"
for r in "${rows[@]}"; do echo "# $r"; done
echo "1..$n"
[ "$failed" -eq 0 ]
