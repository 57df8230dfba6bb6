#!/usr/bin/env bash
# `leasejudge lock run` and `lock acquire --wait` with real processes and a real
# nats-server (JetStream, 127.0.0.1, a random port, a temporary store directory):
# the command's status passed on, the fencing token handed to it, the lock released
# after it, a SIGKILLed command, a SIGKILLed holder (its lock taken at once by the
# next run, with a larger token), a wait that runs out (exit 8, the command never
# started), signals passed on, and the server stopped past the lease (the command
# signalled, exit 9). Skips (fails under CI=true) without nats-server.
set -u
src=${LEASEJUDGE_SOURCE_DIR:?}
bin=${LEASEJUDGE_BINARY_DIR:?}
. "$src/tests/skip.sh"
lj=$bin/leasejudge
[ -x "$lj" ] || lj=$(find "$bin" -maxdepth 3 -name leasejudge -type f -perm -u+x | head -1)
[ -n "$lj" ] && [ -x "$lj" ] || skip_or_fail "the leasejudge command is not built"
. "$src/tests/nats_server.sh"
need_nats_server

work=$(mktemp -d)
bg=()
cleanup() {
  for p in "${bg[@]}"; do kill -9 "$p" 2>/dev/null; done
  stop_nats_server
  rm -rf "$work"
}
trap cleanup EXIT

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() {
  n=$((n + 1))
  failed=1
  echo "not ok $n - $1"
  [ -f "$work/err" ] && sed 's/^/# /' "$work/err"
}
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then ok "$1"; else notok "$1 (expected '$2', got '$3')"; fi
}
now_ms() { date +%s%3N; }
# Wait up to 10 s for a file to hold something.
wait_file() {
  for _ in $(seq 200); do
    [ -s "$1" ] && return 0
    sleep 0.05
  done
  return 1
}
gone() { # gone PID: the process is dead (within 3 s)
  for _ in $(seq 60); do
    kill -0 "$1" 2>/dev/null || return 0
    sleep 0.05
  done
  return 1
}

start_nats_server "$work/nats" || exit 1
port=$NATS_PORT
url="nats://127.0.0.1:$port/locks"
store=(--store "$url" --create-bucket)

# No lock at KEY: lock judge says so with exit 1.
no_lock() {
  "$lj" lock judge --store "$url" "$1" >/dev/null 2>"$work/judge.err"
  [ $? -eq 1 ] && grep -q "no lock at $1" "$work/judge.err"
}

echo "1..39"

# --- the command's status and token ----------------------------------------------------
"$lj" lock run "${store[@]}" --lease 2s job -- sh -c 'echo "$LEASEJUDGE_FENCING_TOKEN" > "$0"; exit 3' "$work/t0" \
  2>"$work/err"
check "the command's exit status is passed on" 3 $?
t0=$(cat "$work/t0")
case $t0 in '' | *[!0-9]*) notok "the command saw a fencing token ('$t0')" ;; *) ok "the command saw a fencing token ($t0)" ;; esac
no_lock job && ok "the lock is released once the command ends" || notok "the lock is released once the command ends"

# --- the command SIGKILLed: 137, the lock released -----------------------------------------
"$lj" lock run "${store[@]}" --lease 2s job -- sh -c 'echo $$ > "$0"; exec sleep 30' "$work/c1" 2>"$work/err" &
run=$!
bg+=("$run")
wait_file "$work/c1" || notok "the command started"
kill -9 "$(cat "$work/c1")"
wait "$run"
check "a SIGKILLed command: exit 137" 137 $?
no_lock job && ok "a SIGKILLed command: the lock is released" || notok "a SIGKILLed command: the lock is released"

# --- the holder SIGKILLed: taken at once by the next run, with a larger token -------------------
"$lj" lock run "${store[@]}" --lease 1m job -- \
  sh -c 'echo $$ > "$1"; echo "$LEASEJUDGE_FENCING_TOKEN" > "$0"; exec sleep 60' "$work/t2" "$work/c2" 2>"$work/err" &
run=$!
bg+=("$run")
wait_file "$work/t2" || notok "the holder's command started"
child=$(cat "$work/c2")
t2=$(cat "$work/t2")
[ "$t2" -gt "$t0" ] && ok "each acquisition has a larger token ($t0 < $t2)" || notok "each acquisition has a larger token ($t0, $t2)"
"$lj" lock judge --store "$url" job >"$work/verdict" 2>"$work/err"
check "while the holder runs: held" "held lease_runs" "$(cut -d' ' -f1,2 "$work/verdict")"
kill -9 "$run"
wait "$run" 2>/dev/null
gone "$child" && ok "the holder SIGKILLed: its command dies with it" || notok "the holder SIGKILLed: its command dies with it"
"$lj" lock judge --store "$url" job >"$work/verdict" 2>"$work/err"
check "the holder SIGKILLed: its lock stays, breakable" "break process_gone" "$(cut -d' ' -f1,2 "$work/verdict")"
start=$(now_ms)
"$lj" lock run "${store[@]}" --lease 2s job -- sh -c 'echo "$LEASEJUDGE_FENCING_TOKEN" > "$0"' "$work/t3" 2>"$work/err"
check "the next run takes a dead holder's lock" 0 $?
took=$(($(now_ms) - start))
[ "$took" -lt 3000 ] && ok "at once, without waiting for the lease (${took} ms)" || notok "at once (${took} ms)"
t3=$(cat "$work/t3")
[ "$t3" -gt "$t2" ] && ok "with a larger fencing token ($t2 < $t3)" || notok "with a larger fencing token ($t2, $t3)"
no_lock job && ok "and releases it" || notok "and releases it"

# --- a wait that runs out: exit 8, the command never started --------------------------------
"$lj" lock run "${store[@]}" --lease 2s job -- sh -c 'echo $$ > "$0"; exec sleep 30' "$work/c4" 2>"$work/holder.err" &
holder=$!
bg+=("$holder")
wait_file "$work/c4" || notok "the holder's command started"
start=$(now_ms)
"$lj" lock run "${store[@]}" --wait 1500ms job -- touch "$work/marker" 2>"$work/err"
check "--wait ran out: exit 8" 8 $?
took=$(($(now_ms) - start))
[ "$took" -ge 1500 ] && [ "$took" -lt 6000 ] && ok "it waited the whole --wait (${took} ms)" \
  || notok "it waited the whole --wait (${took} ms)"
[ -e "$work/marker" ] && notok "the command never started" || ok "the command never started"
grep -q "ended without the lock" "$work/err" && ok "it says why" || notok "it says why"
"$lj" lock run "${store[@]}" job -- touch "$work/marker" 2>"$work/err"
check "no --wait: one try, exit 8" 8 $?
[ -e "$work/marker" ] && notok "the command never started (no --wait)" || ok "the command never started (no --wait)"
"$lj" lock acquire "${store[@]}" --wait 500ms job >"$work/out" 2>"$work/err"
check "lock acquire --wait ran out: exit 8" 8 $?
grep -q "^held job: .*the wait of 500ms ended" "$work/out" && ok "lock acquire --wait says who holds it" \
  || notok "lock acquire --wait says who holds it: $(cat "$work/out")"
"$lj" lock acquire "${store[@]}" --wait 500ms --now 2024-01-01T00:00:00Z job >/dev/null 2>"$work/err"
check "--wait with --now: a usage error" 2 $?
bad=0
for args in "--wait 5x job -- true" "--wait -1 job -- true" "--wait 25h job -- true" "--wait= job -- true" \
  "--wait 1.5s job -- true" "--wait 99999999999999999999 job -- true" "--lease 0 job -- true" \
  "--grace -1 job -- true" "--grace 2d job -- true" "job" "job --" "--wait"; do
  # shellcheck disable=SC2086
  "$lj" lock run "${store[@]}" $args >/dev/null 2>"$work/err"
  rc=$?
  lines=$(wc -l <"$work/err")
  if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q "(see leasejudge lock run --help)$" "$work/err"; then
    bad=1
    echo "# lock run $args: exit $rc, $(cat "$work/err")"
  fi
done
check "bad --wait, --lease, --grace, no command: one usage line each, exit 2" 0 $bad
"$lj" lock run "${store[@]}" job -- "" 2>"$work/err"
check "an empty command: a usage error" 2 $?
"$lj" lock acquire "${store[@]}" --wait 5x job 2>"$work/err"
check "lock acquire --wait 5x: a usage error" 2 $?
[ -e "$work/marker" ] && notok "no bad invocation ran a command" || ok "no bad invocation ran a command"

# A wait stopped by SIGTERM: 128 + 15, the command never started.
"$lj" lock run "${store[@]}" --wait 30s job -- touch "$work/marker" 2>"$work/err" &
waiter=$!
bg+=("$waiter")
sleep 0.5
start=$(now_ms)
kill -TERM "$waiter"
wait "$waiter"
check "a wait stopped by SIGTERM: exit 143" 143 $?
took=$(($(now_ms) - start))
[ "$took" -lt 2000 ] && ok "at once (${took} ms)" || notok "at once (${took} ms)"
[ -e "$work/marker" ] && notok "the command never started (SIGTERM)" || ok "the command never started (SIGTERM)"

# SIGTERM to the holder is passed on to its command: it ends, 128 + 15.
kill -TERM "$holder"
wait "$holder"
check "SIGTERM is passed on to the command: exit 143" 143 $?
no_lock job && ok "the lock is released after it" || notok "the lock is released after it"

# A wait that a release ends: the waiter runs once the holder is done.
"$lj" lock run "${store[@]}" --lease 2s job -- sh -c 'echo $$ > "$0"; sleep 1' "$work/c5" 2>"$work/holder.err" &
holder=$!
bg+=("$holder")
wait_file "$work/c5" || notok "the holder's command started"
"$lj" lock run "${store[@]}" --wait 20s job -- sh -c 'echo ran > "$0"' "$work/marker5" 2>"$work/err"
check "a waiter runs once the holder releases" 0 $?
check "its command ran" ran "$(cat "$work/marker5" 2>/dev/null)"
wait "$holder"
check "the holder's command ended well" 0 $?

# --- the server stopped past the lease: the command signalled, exit 9 ------------------------------
start=$(now_ms)
"$lj" lock run "${store[@]}" --lease 2s --grace 1s job -- \
  sh -c 'trap "echo term >> \"$1\"" TERM; echo $$ > "$0"; while :; do sleep 0.1; done' "$work/c6" "$work/term6" \
  2>"$work/err" &
run=$!
bg+=("$run")
wait_file "$work/c6" || notok "the command started"
child=$(cat "$work/c6")
sleep 1
stop_nats_server
wait "$run"
check "the lease lost: exit 9" 9 $?
took=$(($(now_ms) - start))
[ "$took" -lt 20000 ] && ok "within the lease, the grace and a store timeout (${took} ms)" || notok "in time (${took} ms)"
check "the command got SIGTERM" term "$(head -1 "$work/term6" 2>/dev/null)"
gone "$child" && ok "the command that ignored it was SIGKILLed after the grace" || notok "the command was SIGKILLed"
grep -q "lost the lock" "$work/err" && ok "it says the lock was lost" || notok "it says the lock was lost"
sed "s/^/# /" "$work/err"

exit $failed
