#!/usr/bin/env bash
# Every verb of the leasejudge command by one table: --help exits 0 and lists the exit
# codes the verb gives; --json writes lines python3's json reads as objects; each exit
# code a verb's help lists is triggered here once, with that exact code (the codes no
# case here can bring about are named in $untriggered, and the test fails when the
# help lists another one without a case). The lock verbs show, list and hold against
# a real nats-server and a file store; lock judge text on bodies with ESC, NUL,
# invalid UTF-8 and a 1 MiB purpose; the store from the environment; the man page
# and the completion cover every verb and option the help lists.
. "${LEASEJUDGE_SOURCE_DIR:?}/tests/nats_script.sh"
command -v python3 >/dev/null || skip_or_fail "python3 is not installed"
lj=$build/leasejudge
[ -x "$lj" ] || skip_or_fail "$lj is not built"
run() { "$lj" "$@" >"$w/out" 2>"$w/err" </dev/null; echo $?; }

start_nats_server "$w/nats" || exit 1
nats=nats://127.0.0.1:$NATS_PORT
fs=file:$w/fs
"$lj" step export --store "$fs" --create-bucket >/dev/null 2>&1
"$lj" step export --store "$nats/locks" --create-bucket >/dev/null 2>&1
"$lj" step export --store "$nats/steps" --create-bucket >/dev/null 2>&1

verbs=("step plan" "step sweep" "step end" "step export" "step import" "step watch" "lock judge" "lock acquire"
  "lock renew" "lock release" "lock show" "lock list" "lock hold" "lock run" "lease" "identity" "owner"
  "machine-id" "version" "bench")

# --- the cases: VERB CODE ARGS... ------------------------------------------------------
declare -A triggered
# The codes a verb's help lists that no case here brings about: lock run's 7 is a
# wait for its command that fails (waitpid), and its loss (9) is lock_run_test.sh's;
# lease's 3 a live lock holder of the script's; machine-id's 1 a machine without one.
untriggered_list="lock run:7 lock run:9 lease:3 machine-id:1"
head -c 4096 /dev/urandom | tr -d '\n' >"$w/garbage"
printf '\n' >>"$w/garbage"
echo '{"key":"n1.a","revision":1,"value":{"id":"a","tool":"t","state":"succeeded"}}' >"$w/good.jsonl"
sleep 600 &
live=$!
pids+=("$live")
live_tok=$("$lj" owner $live)
echo "{\"key\":\"n1.live\",\"value\":{\"id\":\"live\",\"tool\":\"t\",\"state\":\"running\",\"owner\":\"$live_tok\"}}" |
  "$lj" step import --store "$fs" >/dev/null 2>&1
# A lock body naming a Cloud Run execution, with no gcloud to ask: unknown.
exec_body='{"purpose":"p","id":"x","execution":{"projectId":"p","region":"r","name":"e"},"leaseUntil":"2999-01-01T00:00:00.000Z"}'
printf '%s' "$exec_body" >"$w/exec.json"
# A held lock (for conflicts) and its id.
"$lj" lock acquire --store "$fs" held --pid $live --json >"$w/held.json" 2>/dev/null
held_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$w/held.json")

case_() {  # VERB CODE ARGS...
  local verb=$1 want=$2
  shift 2
  local rc
  rc=$(env -u LEASEJUDGE_STORE PATH=/usr/bin:/bin "$lj" "$@" >"$w/out" 2>"$w/err" </dev/null; echo $?)
  if [ "$rc" = "$want" ]; then
    ok "$verb: exit $want ($*)"
    triggered["$verb $want"]=1
  else
    notok "$verb: exit $want ($*): got $rc"
    sed 's/^/# /' "$w/err" | head -5
  fi
}
# interrupt_case VERB ARGS...: SIGINT while it waits on stdin (a fifo) or a lock: 130.
interrupt_case() {
  local verb=$1
  shift
  rm -f "$w/fifo" && mkfifo "$w/fifo"
  "$lj" "$@" <"$w/fifo" >"$w/out" 2>"$w/err" &
  local p=$!
  exec 7>"$w/fifo"
  sleep 0.5
  kill -INT $p
  wait $p
  local rc=$?
  exec 7>&-
  if [ "$rc" = 130 ]; then ok "$verb: exit 130 on SIGINT"; triggered["$verb 130"]=1; else
    notok "$verb: exit 130 on SIGINT: got $rc"; sed 's/^/# /' "$w/err" | head -5; fi
}

case_ "step plan" 0 step plan --node n1 "$w/good.jsonl"
case_ "step plan" 2 step plan --node n1 --threads 0 "$w/good.jsonl"
case_ "step plan" 2 step plan --node n1 --min-age soon "$w/good.jsonl"
# --min-age: a step another owner started a minute before --now is left, whoever owns it.
echo '{"key":"n1.y","value":{"id":"y","tool":"t","state":"running","owner":"no-boot-id.7.z","started":"2024-05-01T11:59:00Z"}}' >"$w/young.jsonl"
young=$("$lj" step plan --node n1 --owner no-boot-id.1.1 --rule not-self --now 2024-05-01T12:00:00Z --min-age 2m \
  "$w/young.jsonl" 2>/dev/null)
if [ "$young" = '{"key":"n1.y","action":"leave","reason":"under-min-age","why":"it started less than the minimum age (--min-age) ago"}' ]
then ok "step plan --min-age 2m leaves a step started a minute ago"; else notok "step plan --min-age: got $young"; fi
case_ "step plan" 4 step plan --node n1 --store "nats://127.0.0.1:1/x"
case_ "step plan" 7 step plan --node n1 "$w/garbage"
case_ "step plan" 7 step plan --node n1 "$w/nonexistent"
interrupt_case "step plan" step plan --node n1 -
case_ "step sweep" 0 step sweep --store "$fs" --node n1
case_ "step sweep" 2 step sweep --store "$fs"
case_ "step sweep" 4 step sweep --store "file:$w/typo" --node n1
"$lj" step import --store "$fs" >/dev/null 2>&1 <<<"{\"key\":\"n1.gone0\",\"value\":{\"id\":\"gone0\",\"tool\":\"t\",\"state\":\"running\",\"owner\":\"00000000-0000-4000-8000-000000000000.1.1\"}}"
case_ "step end" 0 step end --store "$fs" n1.gone0 --why "by hand"
case_ "step end" 1 step end --store "$fs" n1.live --why manual
case_ "step end" 2 step end --store "$fs" nodot --why manual
case_ "step end" 4 step end --store "file:$w/typo" n1.live --why manual
case_ "step export" 0 step export --store "$fs"
case_ "step export" 2 step export --store bogus:x
case_ "step export" 4 step export --store "nats://127.0.0.1:1/x"
same "step export into a full disk: exit 7" 7 "$("$lj" step export --store "$fs" >/dev/full 2>/dev/null; echo $?)"
triggered["step export 7"]=1
case_ "step import" 0 step import --store "$fs" "$w/good.jsonl"
case_ "step import" 2 step import --store "$fs" a b
case_ "step import" 4 step import --store "nats://127.0.0.1:1/x" "$w/good.jsonl"
case_ "step import" 7 step import --store "$fs" "$w/garbage"
case_ "step import" 7 step import --store "$fs" "$w/nonexistent"
interrupt_case "step import" step import --store "$fs" -
"$lj" step watch --store "$fs" --node n1 >/dev/null 2>"$w/watch.err" &
p=$!
sleep 1
kill -TERM $p
wait $p
same "step watch: SIGTERM ends it, exit 0" 0 "$?"
triggered["step watch 0"]=1
case_ "step watch" 2 step watch --store "$fs" --node n1 --metrics localhost
case_ "step watch" 4 step watch --store "file:$w/typo" --node n1
case_ "step watch" 7 step watch --store "$fs" --node n1 --metrics 203.0.113.1:1
sleep 600 &
dying=$!
"$lj" lock acquire --store "$fs" gone --pid $dying >/dev/null 2>&1
kill $dying
wait $dying 2>/dev/null
case_ "lock judge" 0 lock judge --store "$fs" gone
case_ "lock judge" 1 lock judge --store "$fs" held
case_ "lock judge" 2 lock judge --now 2024-05-01 "$w/exec.json"
case_ "lock judge" 3 lock judge "$w/exec.json"
case_ "lock judge" 4 lock judge --store "nats://127.0.0.1:1/x" held
case_ "lock judge" 7 lock judge /nonexistent
interrupt_case "lock judge" lock judge -
case_ "lock acquire" 1 lock acquire --store "$fs" held
case_ "lock acquire" 2 lock acquire --store "$fs" held --lease 0
case_ "lock acquire" 4 lock acquire --store "file:$w/typo" k
case_ "lock acquire" 8 lock acquire --store "$fs" held --wait 300ms
case_ "lock acquire" 42 lock acquire --store "$fs" held --conflict-exit-code 42
case_ "lock run" 42 lock run --store "$fs" held --conflict-exit-code 42 -- true
case_ "lock hold" 42 lock hold --store "$fs" held --conflict-exit-code 42
case_ "lock acquire" 2 lock acquire --store "$fs" held --conflict-exit-code 0
"$lj" step import --store "$fs" >/dev/null 2>&1 <<<"{\"key\":\"execlock\",\"value\":$exec_body}"
case_ "lock acquire" 3 lock acquire --store "$fs" execlock
case_ "lock acquire" 0 lock acquire --store "$fs" free1 --json
free_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$w/out")
case_ "lock renew" 0 lock renew --store "$fs" free1 --id "$free_id"
case_ "lock renew" 1 lock renew --store "$fs" nolock --id "$free_id"
case_ "lock renew" 2 lock renew --store "$fs" free1
case_ "lock renew" 4 lock renew --store "file:$w/typo" free1 --id "$free_id"
case_ "lock renew" 5 lock renew --store "$fs" held --id "$free_id"
case_ "lock release" 5 lock release --store "$fs" held --id "$free_id"
case_ "lock release" 0 lock release --store "$fs" free1 --id "$free_id"
case_ "lock release" 1 lock release --store "$fs" free1 --id "$free_id"
case_ "lock release" 2 lock release --store "$fs" free1
case_ "lock release" 4 lock release --store "file:$w/typo" free1 --id "$free_id"
case_ "lock show" 0 lock show --store "$fs" held
case_ "lock show" 1 lock show --store "$fs" nolock
case_ "lock show" 2 lock show --store "$fs"
case_ "lock show" 4 lock show --store "file:$w/typo" held
case_ "lock list" 0 lock list --store "$fs"
case_ "lock list" 2 lock list --store "$fs" a b
case_ "lock list" 4 lock list --store "file:$w/typo"
case_ "lock hold" 1 lock hold --store "$fs" held
case_ "lock hold" 2 lock hold --store "$fs"
case_ "lock hold" 3 lock hold --store "$fs" execlock
case_ "lock hold" 4 lock hold --store "file:$w/typo" k
case_ "lock hold" 8 lock hold --store "$fs" held --wait 300ms
interrupt_case "lock hold" lock hold --store "$fs" held --wait 1m
interrupt_case "lock acquire" lock acquire --store "$fs" held --wait 1m
case_ "lock run" 2 lock run --store "$fs" k
case_ "lock run" 4 lock run --store "file:$w/typo" k -- true
case_ "lock run" 8 lock run --store "$fs" held -- true
interrupt_case "lock run" lock run --store "$fs" held --wait 1m -- true
# lock run -c CMD, as flock(1)'s -c: CMD one command line run by sh -c, its exit passed
# through, its quoting the shell's, the lock held (by this command) while it runs.
same "lock run -c: the command line's exit passed through" 23 \
  "$("$lj" lock run --store "$fs" c1 -c 'exit 23' >/dev/null 2>&1; echo $?)"
cat >"$w/show-c1" <<'SH'
#!/bin/sh
"$LJ" lock show --store "$FS" c1 --json |
  python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["verdict"]["kind"], d["body"]["pid"] == int(sys.argv[1]))' "$1"
SH
chmod +x "$w/show-c1"
cat >"$w/cmd-c1" <<'SH'
printf '[%s] ' 'a  b' "c\"d'e" $x; "$W/show-c1" $PPID
SH
same "lock run -c: quoting as for sh; the lock held by the command while it runs; released after" \
  "[a  b] [c\"d'e] [1] [2] held True 1" \
  "$(LJ=$lj FS=$fs W=$w x='1 2' "$lj" lock run --store "$fs" c1 -c "$(cat "$w/cmd-c1")" 2>/dev/null) $("$lj" lock show --store "$fs" c1 >/dev/null 2>&1; echo $?)"
same "lock run -c with a command after -- as well: a usage error, exit 2" 2 \
  "$("$lj" lock run --store "$fs" c1 -c true -- true >/dev/null 2>&1; echo $?)"
# A write whose answer is lost: exit 6. Through a proxy that drops every key/value
# write on its way to the server (tests/nats_lost_answers.py), each verb's write is
# unanswered for the store's request timeout (5 s); the six run at once.
python3 "$src/tests/nats_lost_answers.py" "$NATS_PORT" "$w/lost.port" &
pids+=($!)
for _ in $(seq 50); do [ -s "$w/lost.port" ] && break; sleep 0.1; done
lost=nats://127.0.0.1:$(cat "$w/lost.port")
"$lj" step import --store "$nats/steps" >/dev/null 2>&1 <<<"{\"key\":\"n1.gone6\",\"value\":{\"id\":\"gone6\",\"tool\":\"t\",\"state\":\"running\",\"owner\":\"00000000-0000-4000-8000-000000000000.1.1\"}}"
"$lj" lock acquire --store "$nats/locks" held6 --pid $live --json >"$w/held6.json" 2>/dev/null
held6=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$w/held6.json")
lost_case() {  # VERB ARGS...: in the background, its exit code into $w/lost.<n>
  local verb=$1
  shift
  (env -u LEASEJUDGE_STORE "$lj" "$@" >/dev/null 2>"$w/lost.$verb.err" </dev/null; echo $? >"$w/lost.${verb// /_}")
}
lost_pids=()
lost_case "step import" step import --store "$lost/steps" "$w/good.jsonl" & lost_pids+=($!)
lost_case "step end" step end --store "$lost/steps" n1.gone6 --why "by hand" & lost_pids+=($!)
lost_case "step sweep" step sweep --store "$lost/steps" --node n1 & lost_pids+=($!)
lost_case "lock acquire" lock acquire --store "$lost/locks" free6 & lost_pids+=($!)
lost_case "lock renew" lock renew --store "$lost/locks" held6 --id "$held6" & lost_pids+=($!)
lost_case "lock release" lock release --store "$lost/locks" held6 --id "$held6" & lost_pids+=($!)
wait "${lost_pids[@]}"
for v in "step import" "step end" "step sweep" "lock acquire" "lock renew" "lock release"; do
  rc=$(cat "$w/lost.${v// /_}" 2>/dev/null)
  if [ "$rc" = 6 ]; then ok "$v: exit 6 when the write's answer is lost"; triggered["$v 6"]=1; else
    notok "$v: exit 6 when the write's answer is lost: got $rc"; sed 's/^/# /' "$w/lost.$v.err" | head -3; fi
done
# step import of a line with bytes that are no UTF-8: imported, and said, as step export
# says it of a key.
printf '{"key":"n1.u8","value":{"id":"u8","tool":"t\xff\xfe","state":"succeeded"}}\n' >"$w/u8.jsonl"
same "step import of bytes that are no UTF-8: exit 0, the U+FFFD note, the summary" \
  "0|leasejudge step import: 1 line holds bytes that are no UTF-8: written with U+FFFD, they do not export back the same|leasejudge step import: 1 key created, 0 already held a value (left as they are), 0 lines malformed" \
  "$("$lj" step import --store "file:$w/u8" --create-bucket "$w/u8.jsonl" >/dev/null 2>"$w/u8.err"; echo $?)|$(paste -sd'|' "$w/u8.err")"

# A lost race: step end's write held back 1.5 s by the proxy while another writer ends
# the step first: exit 5.
python3 "$src/tests/nats_lost_answers.py" "$NATS_PORT" "$w/slow.port" 1500 &
pids+=($!)
for _ in $(seq 50); do [ -s "$w/slow.port" ] && break; sleep 0.1; done
"$lj" step import --store "$nats/steps" >/dev/null 2>&1 <<<"{\"key\":\"n1.race5\",\"value\":{\"id\":\"race5\",\"tool\":\"t\",\"state\":\"running\",\"owner\":\"00000000-0000-4000-8000-000000000000.1.1\"}}"
(env -u LEASEJUDGE_STORE "$lj" step end --store "nats://127.0.0.1:$(cat "$w/slow.port")/steps" n1.race5 --why slow \
  >/dev/null 2>"$w/race5.err"; echo $? >"$w/race5.rc") &
p=$!
sleep 0.6
"$lj" step end --store "$nats/steps" n1.race5 --why first >/dev/null 2>&1
wait $p
same "step end: exit 5 when another writer ended the step between its read and its write" \
  "5 first" "$(cat "$w/race5.rc") $("$lj" step export --store "$nats/steps" 2>/dev/null | python3 -c 'import json,sys
for l in sys.stdin:
    d = json.loads(l)
    if d["key"] == "n1.race5": print(d["value"]["reason"])')"
triggered["step end 5"]=1
# A lost race of lock acquire: a gone holder's lock, judged broken by an acquire whose
# writes the proxy holds back 2.5 s; meanwhile another acquire breaks it first and
# takes the lock, so the held-back removal finds the key moved: exit 5, and the other
# acquire's lock stands.
python3 "$src/tests/nats_lost_answers.py" "$NATS_PORT" "$w/slower.port" 2500 &
pids+=($!)
for _ in $(seq 50); do [ -s "$w/slower.port" ] && break; sleep 0.1; done
sleep 600 &
gone_pid=$!
"$lj" lock acquire --store "$nats/locks" race5l --pid "$gone_pid" >/dev/null 2>&1
kill "$gone_pid"
wait "$gone_pid" 2>/dev/null
(env -u LEASEJUDGE_STORE "$lj" lock acquire --store "nats://127.0.0.1:$(cat "$w/slower.port")/locks" race5l \
  --pid "$live" >/dev/null 2>"$w/race5l.err"; echo $? >"$w/race5l.rc") &
p=$!
sleep 3.6
"$lj" lock acquire --store "$nats/locks" race5l --pid "$live" --json >"$w/race5l.json" 2>/dev/null
wait $p
same "lock acquire: exit 5 when another acquire broke the gone holder's lock between its read and its write" \
  "5 acquired $live" "$(cat "$w/race5l.rc") $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["outcome"])' \
  "$w/race5l.json") $("$lj" lock show --store "$nats/locks" race5l --json 2>/dev/null | python3 -c 'import json,sys
print(json.load(sys.stdin)["body"]["pid"])')"
triggered["lock acquire 5"]=1

# SIGINT to a verb blocked writing its output (a pipe nobody reads yet): 130 once it
# can write again. 3000 steps of a gone owner, more than a pipe holds in lines.
python3 -c '
import json
for i in range(3000):
    print(json.dumps({"key": "n1.s%d" % i, "value": {"id": "s%d" % i, "tool": "t", "state": "running",
                      "owner": "00000000-0000-4000-8000-000000000000.1.1"}}))' >"$w/many.jsonl"
"$lj" step import --store "$nats/many" --create-bucket "$w/many.jsonl" >/dev/null 2>&1
blocked_case() {  # VERB ARGS...
  local verb=$1
  shift
  rm -f "$w/outfifo" && mkfifo "$w/outfifo"
  exec 8<>"$w/outfifo"
  "$lj" "$@" >"$w/outfifo" 2>"$w/err" </dev/null &
  local p=$!
  sleep 1
  kill -INT $p
  timeout 10 cat "$w/outfifo" >/dev/null &
  local drain=$!
  wait $p
  local rc=$?
  exec 8>&-
  wait $drain
  if [ "$rc" = 130 ]; then ok "$verb: exit 130 on SIGINT"; triggered["$verb 130"]=1; else
    notok "$verb: exit 130 on SIGINT: got $rc"; sed 's/^/# /' "$w/err" | head -5; fi
}
blocked_case "step export" step export --store "$nats/many"
blocked_case "step sweep" step sweep --store "$nats/many" --node n1 --dry-run
git init -q "$w/repo" && git init -q "$w/empty"
case_ "lease" 0 lease touch --root "$w/repo" --pid $live
case_ "lease" 2 lease list --root "$w"
case_ "lease" 1 lease live --root "$w/empty" --exclude-ancestry-of $$
case_ "identity" 0 identity
case_ "identity" 1 identity 999999
case_ "identity" 2 identity x
case_ "owner" 0 owner
case_ "owner" 1 owner 999999
case_ "owner" 2 owner x
case_ "machine-id" 0 machine-id
case_ "machine-id" 2 machine-id x
case_ "version" 0 version
case_ "version" 2 version x

# lock hold: the fencing token printed, renewed until SIGTERM, released, exit 0; a
# lock lost under it (its file rewritten by another writer) exit 9.
hold_case() {  # STORE KEY
  "$lj" lock hold --store "$1" "$2" --lease 1s >"$w/hold.out" 2>"$w/hold.err" &
  local p=$!
  for _ in $(seq 50); do [ -s "$w/hold.out" ] && break; sleep 0.1; done
  sleep 1.5  # past the 1 s lease: kept only by its renewals
  "$lj" lock show --store "$1" "$2" --json >"$w/show.json" 2>/dev/null
  kill -TERM $p
  wait $p
  local rc=$?
  same "lock hold on ${1%%:*}: the token printed, renewed past its lease, released on SIGTERM, exit 0" \
    "0 yes held released" \
    "$rc $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); t=open(sys.argv[2]).readline().strip(); print("yes" if int(t) < d["fencing_token"] else f"no {t} {d}", d["verdict"]["kind"])' "$w/show.json" "$w/hold.out") $(tail -1 "$w/hold.out" | cut -d' ' -f1)"
  case_ "lock show" 1 lock show --store "$1" "$2"
}
hold_case "$fs" hk
hold_case "$nats/locks" hk
"$lj" lock hold --store "$fs" lost --lease 1s >"$w/hold.out" 2>"$w/hold.err" &
p=$!
for _ in $(seq 50); do [ -s "$w/hold.out" ] && break; sleep 0.1; done
f=$(grep -l '"purpose":"leasejudge lock hold lost"' "$w"/fs/* 2>/dev/null | head -1)
python3 - "$f" <<'PY'
import sys
p = sys.argv[1]
head, body = open(p, "rb").read().split(b"\n", 1)
open(p, "wb").write(b"lj1 999999\n" + body.replace(b'"id":"', b'"id":"other-'))
PY
wait $p
rc=$?
same "lock hold: the lock rewritten by another writer: exit 9, said" "9 yes" \
  "$rc $(grep -q 'lost the lock' "$w/hold.err" && echo yes)"
triggered["lock hold 9"]=1
"$lj" lock release --store "$fs" lost --id x >/dev/null 2>&1

# lock hold --wait, woken once the holder releases it: exit 0 after SIGTERM.
"$lj" lock acquire --store "$nats/locks" wk --pid $live --json >"$w/wk.json" 2>/dev/null
wk_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$w/wk.json")
"$lj" lock hold --store "$nats/locks" wk --wait 30s >"$w/wait.out" 2>"$w/wait.err" &
p=$!
sleep 0.5
same "lock hold --wait: nothing printed while another holds it" "" "$(cat "$w/wait.out")"
"$lj" lock release --store "$nats/locks" wk --id "$wk_id" >/dev/null 2>&1
for _ in $(seq 50); do [ -s "$w/wait.out" ] && break; sleep 0.1; done
kill -TERM $p
wait $p
rc=$?
same "... then the token, once released by its holder; exit 0" "0 yes" \
  "$rc $(head -1 "$w/wait.out" | grep -qx '[0-9]\+' && echo yes)"
triggered["lock hold 0"]=1

# lock acquire --wait on NATS: woken by the watch's event of the holder's release, not
# by its poll. Released in the middle of its 1 s sleep (300 ms after the 800 ms one
# ended): it has the lock well before its next poll (700 ms later), and says so.
"$lj" lock acquire --store "$nats/locks" ww --pid $live --json >"$w/ww.json" 2>/dev/null
ww_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$w/ww.json")
"$lj" lock acquire --store "$nats/locks" ww --wait 20s >/dev/null 2>"$w/ww.err" &
p=$!
for _ in $(seq 100); do grep -q 'woken by its poll after 8[0-9][0-9] ms' "$w/ww.err" && break; sleep 0.05; done
sleep 0.3
t0=$(date +%s%N)
"$lj" lock release --store "$nats/locks" ww --id "$ww_id" >/dev/null 2>&1
wait $p
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
same "lock acquire --wait: the lock taken within 500 ms of the release (its poll due 700 ms later), exit 0" \
  "0 yes" "$rc $([ "$ms" -lt 500 ] && echo yes || echo "no: $ms ms")"
same "... its log: the watch it waits on, the polls, then the watch's event" \
  "waiting on a watch of ww: a release wakes the wait (its poll, 50 ms to 1000 ms, the fallback)|woken by its poll after|woken by a watch event (ww gone) after" \
  "$(sed -n 's/^leasejudge lock acquire: //p' "$w/ww.err" | sed -n '1p;2p;$p' | sed 's/after [0-9]* ms.*/after/' | paste -sd'|')"
same "lock acquire --wait on a file store: no watch of its own, said; the poll wakes it" \
  "8 no watch of held (the store has no watch of its own for the key held): the wait polls, 50 ms to 1000 ms apart|woken by its poll after" \
  "$("$lj" lock acquire --store "$fs" held --wait 200ms >/dev/null 2>"$w/wf.err"; echo $?) $(sed -n 's/^leasejudge lock acquire: //p' "$w/wf.err" | sed -n '1p;2p' | sed 's/after [0-9]* ms.*/after/' | paste -sd'|')"

# --- --help and --json on every verb ---------------------------------------------------
for v in "${verbs[@]}"; do
  # shellcheck disable=SC2086
  rc=$(run $v --help)
  if [ "$v" = bench ] || [ "$v" = lease ]; then
    same "$v --help: exit 0" 0 "$rc"
    continue
  fi
  same "$v --help: exit 0, its usage, its exit codes" "0 usage: leasejudge $v yes" \
    "$rc $(head -1 "$w/out" | cut -c1-$((18 + ${#v}))) $(grep -q '^exit codes:' "$w/out" && echo yes)"
  codes=$(sed -n '/^exit codes:/,$p' "$w/out" | sed -n 's/^ *\([0-9]\+\)  .*/\1/p' | paste -sd' ')
  for c in $codes; do
    [ -n "${triggered["$v $c"]:-}" ] && continue
    case " $(tr -s ' \n' '  ' <<<"$untriggered_list") " in *" $v:$c "*) continue ;; esac
    notok "$v: exit $c is in its help, and no case here triggers it"
  done
  if grep -q -- '--store' "$w/out"; then
    grep -q '^  LEASEJUDGE_STORE ' "$w/out" && ok "$v --help names LEASEJUDGE_STORE" ||
      notok "$v --help names LEASEJUDGE_STORE"
  fi
done
for v in "lease touch" "lease live" "lease list"; do
  # shellcheck disable=SC2086
  rc=$(run $v --help)
  same "$v --help: exit 0, the script's usage and the additions" "0 yes" \
    "$rc $(grep -q 'leasejudge adds, after the verb' "$w/out" && echo yes)"
done

json_case() {  # CODES ARGS...: exit in CODES, stdout lines JSON objects (at least one)
  local codes=$1
  shift
  local rc
  local args=() a seen=""
  for a in "$@"; do  # --json before a command's --, else last
    [ "$a" = -- ] && [ -z "$seen" ] && args+=(--json) && seen=1
    args+=("$a")
  done
  [ -z "$seen" ] && args+=(--json)
  rc=$("$lj" "${args[@]}" >"$w/out" 2>"$w/err" </dev/null; echo $?)
  local parsed
  parsed=$(python3 -c '
import json, sys
lines = open(sys.argv[1], "rb").read().splitlines()
assert lines, "no line"
for l in lines:
    d = json.loads(l)
    assert isinstance(d, dict), l
    for k in ("value", "body"):
        assert not isinstance(d.get(k), str) or not d[k].lstrip().startswith("{"), ("a string of JSON", k, l)
print("ok")' "$w/out" 2>&1 | tail -1)
  case " $codes " in *" $rc "*) ;; *) parsed="exit $rc: $(head -3 "$w/err")" ;; esac
  same "$* --json: JSON objects" ok "$parsed"
}
"$lj" step import --store "$fs" >/dev/null 2>&1 <<<"{\"key\":\"n1.gone\",\"value\":{\"id\":\"gone\",\"tool\":\"t\",\"state\":\"running\",\"owner\":\"00000000-0000-4000-8000-000000000000.1.1\"}}"
json_case 0 step plan --node n1 "$w/good.jsonl"
json_case 0 step sweep --store "$fs" --node n1 --dry-run
json_case 0 step end --store "$fs" n1.gone --why "by hand"
json_case 0 step export --store "$fs"
json_case 0 step import --store "$fs" "$w/good.jsonl"
json_case "0 3" lock judge --store "$fs" execlock --now 2024-05-01T00:00:00Z
json_case 1 lock judge --store "$fs" held
json_case 0 lock acquire --store "$fs" j1
json_case 0 lock show --store "$fs" held
json_case 0 lock list --store "$fs"
"$lj" lock acquire --store "$nats/locks" j3 --pid $live >/dev/null 2>&1
json_case 0 lock list --store "$nats/locks"
json_case 0 lock run --store "$fs" j2 -- true
json_case 0 lease list --root "$w/repo"
json_case 0 lease touch --root "$w/repo" --pid $live
json_case 0 lease live --root "$w/repo" --exclude-ancestry-of $$
json_case 0 identity
json_case 0 owner
json_case "0 1" machine-id
json_case 0 version
same "step end --json: value is the ended step, an object" "failed" \
  "$("$lj" step export --store "$fs" 2>/dev/null | python3 -c 'import json,sys
for l in sys.stdin:
    d = json.loads(l)
    if d["key"] == "n1.gone": print(d["value"]["state"])')"

# --- one name per concept: a lock's token is fencing_token in every lock verb ----------
# Each verb's --json token against the store's own record of the body's revision: the
# file store's file opens with "lj1 <revision>" (read here, not through leasejudge).
file_revision() {  # KEY: the revision in the file holding the lock KEY's body
  local f
  f=$(grep -l "\"purpose\":\"$1 " "$w"/fs/* 2>/dev/null | head -1)
  sed -n '1s/^lj1 \([0-9]*\)$/\1/p' "$f"
}
token_of() {  # FILE [KEY]: "fencing_token revision" of the (KEY's) JSON line
  python3 -c 'import json, sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if len(sys.argv) < 3 or d.get("key") == sys.argv[2]:
        print(d.get("fencing_token", "none"), d.get("revision", "none")); break' "$@"
}
"$lj" lock acquire --store "$fs" ft --purpose "ft acquired" --pid $live --json >"$w/ft.acq" 2>/dev/null
rev=$(file_revision ft)
same "lock acquire --json: fencing_token, and revision beside it, the body's revision" "$rev $rev" \
  "$(token_of "$w/ft.acq")"
ft_id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$w/ft.acq")
"$lj" lock renew --store "$fs" ft --id "$ft_id" --json >"$w/ft.renew" 2>/dev/null
rev2=$(file_revision ft)
same "lock renew --json: the renewed body's revision as fencing_token and revision" "$rev2 $rev2 yes" \
  "$(token_of "$w/ft.renew") $([ "$rev2" -gt "$rev" ] && echo yes)"
"$lj" lock show --store "$fs" ft --json >"$w/ft.show" 2>/dev/null
same "lock show --json: fencing_token and revision" "$rev2 $rev2" "$(token_of "$w/ft.show")"
"$lj" lock list --store "$fs" --json >"$w/ft.list" 2>/dev/null
same "lock list --json: fencing_token and revision" "$rev2 $rev2" "$(token_of "$w/ft.list" ft)"
"$lj" lock hold --store "$fs" fh --purpose "fh held" --json >"$w/fh.out" 2>/dev/null &
p=$!
for _ in $(seq 50); do [ -s "$w/fh.out" ] && break; sleep 0.1; done
rev=$(file_revision fh)
kill -TERM $p
wait $p
same "lock hold --json: fencing_token and revision" "$rev $rev" "$(token_of "$w/fh.out")"
"$lj" lock run --store "$fs" fr --purpose "fr run" --json -- sh -c 'echo "$LEASEJUDGE_FENCING_TOKEN" >"$0"' \
  "$w/fr.env" >"$w/fr.out" 2>/dev/null
same "lock run --json: fencing_token, the token its command was given" "$(cat "$w/fr.env") none" \
  "$(token_of "$w/fr.out")"

# --- lock list's table: columns sized to the rows, one row a line, a long purpose cut ---
"$lj" lock acquire --store "file:$w/tbl" --create-bucket t.short --purpose short --pid $live >/dev/null 2>&1
"$lj" lock acquire --store "file:$w/tbl" t.long --purpose "$(printf 'p%.0s' $(seq 300))" --pid $live >/dev/null 2>&1
"$lj" lock acquire --store "file:$w/tbl" t.wide --purpose "été à 東京" --pid $live >/dev/null 2>&1
"$lj" lock list --store "file:$w/tbl" --now 2024-05-01T12:00:00Z >"$w/tbl.out" 2>/dev/null
same "lock list with a 300-byte purpose: a header and three rows, each column where the header puts it" ok \
  "$(python3 - "$w/tbl.out" <<'PY'
import sys, unicodedata
def grid(row):  # the row as a terminal shows it: a wide character in two cells
    out = []
    for ch in row:
        out += [ch, ""] if unicodedata.east_asian_width(ch) in "WF" else [ch]
    return out
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
assert lines[-1] == "", lines[-1]
head, rows = lines[0], [grid(r) for r in lines[1:-1]]
assert len(rows) == 3, lines
names = ["KEY", "HOLDER", "PURPOSE", "LEASE END", "TOKEN", "VERDICT"]
at = [head.index(n) for n in names]  # the header is ASCII: its cells are its characters
token_end = at[4] + len("TOKEN")  # right-aligned under its header
for g in rows:
    text = "".join(g)
    for i, n in enumerate(names):
        c = token_end - 1 if n == "TOKEN" else at[i]  # where the cell's text is, the space before it
        assert g[c] not in (" ", "") and (i == 0 or n == "TOKEN" or g[c - 1] == " "), (n, text)
    assert g[token_end:token_end + 2] == [" ", " "], text
    purpose = "".join(g[at[2]:at[3]]).rstrip()
    assert len(grid(purpose)) <= 40, (purpose, len(grid(purpose)))
    if text.startswith("t.long"):
        assert purpose.startswith("ppp") and purpose.endswith("[cut: 300 bytes in all]"), purpose
    if text.startswith("t.wide"):
        assert purpose == "été à 東京", purpose
print("ok")
PY
)"

# --- an error a flag mends names the flag ---------------------------------------------
same "a NATS bucket that does not exist: exit 4, naming --create-bucket" \
  "4 leasejudge lock show: opening $nats/nobucket: the NATS bucket nobucket does not exist at $nats (nothing was made; --create-bucket makes it)" \
  "$(run lock show --store "$nats/nobucket" k) $(cat "$w/err")"
same "a NATS client certificate without its key: exit 2, naming --tls-key" \
  "2 leasejudge step export: --tls-cert FILE needs --tls-key FILE too: a NATS client certificate needs both its certificate and key files (see leasejudge step export --help)" \
  "$(run step export --store "$nats/steps" --tls-cert "$w/garbage") $(cat "$w/err")"
same "... a key without its certificate (from the environment): exit 2, naming --tls-cert" \
  "2 leasejudge step export: --tls-key FILE needs --tls-cert FILE too: a NATS client certificate needs both its certificate and key files (see leasejudge step export --help)" \
  "$(LEASEJUDGE_TLS_KEY=$w/garbage run step export --store "$nats/steps") $(cat "$w/err")"
same "a file: directory that does not exist: exit 4, naming --create-bucket" \
  "4 leasejudge lock list: opening file:$w/nodir: the directory $w/nodir does not exist (nothing was made; --create-bucket makes it)" \
  "$(run lock list --store "file:$w/nodir") $(cat "$w/err")"

# --- text safe on a terminal: lock judge and show on hostile bodies -------------------
python3 - "$w" <<'PY'
import json, sys
w = sys.argv[1]
def body(purpose): return b'{"purpose":"' + purpose + b'","id":"x","host":"h","pid":999999,"leaseUntil":"2999-01-01T00:00:00.000Z"}'
open(f"{w}/esc.json", "wb").write(body(b"\\u001b]0;owned\\u0007\\u001b[2J"))
open(f"{w}/nul.json", "wb").write(body(b"a\\u0000b"))
open(f"{w}/bad.json", "wb").write(body(b"\xff\xfe\xc0\xaf"))
open(f"{w}/raw.json", "wb").write(b'\x1b[31mnot json\x1b[0m\x00\xff')
open(f"{w}/big.json", "wb").write(body(b"p" * (1 << 20)))
PY
for b in esc nul bad raw big; do
  "$lj" lock judge "$w/$b.json" >"$w/$b.out" 2>"$w/$b.err"
  "$lj" lock judge --json "$w/$b.json" >"$w/$b.jout" 2>/dev/null
  same "lock judge of a body with $b bytes: no raw control byte, valid UTF-8, at most 4096 bytes of why plus escapes" "ok" \
    "$(python3 - "$w/$b.out" "$w/$b.jout" <<'PY'
import json, re, sys
t = open(sys.argv[1], "rb").read()
assert t.endswith(b"\n") and t.count(b"\n") == 1, t[:200]
line = t[:-1]
assert not re.search(rb"[\x00-\x1f\x7f]", line), line[:200]
s = line.decode("utf-8")
assert not re.search("[\x80-\x9f]", s), s[:200]
assert len(line) <= 4096 * 4 + 200, len(line)
d = json.loads(open(sys.argv[2], "rb").read())
assert len(d["why"].encode()) <= 4096 + 40, len(d["why"])
print("ok")
PY
)"
done
same "a 1 MiB purpose: cut with the marker and its whole length" yes \
  "$(grep -q '\[cut: [0-9]\+ bytes in all\]' "$w/big.out" && grep -q 'cut: [0-9]\+ bytes in all' "$w/big.jout" && echo yes)"
same "an ESC in a body is shown escaped" yes "$(grep -qF '\x1b' "$w/esc.out" && echo yes)"
# lock judge of a file store's own file: the body it holds, not "not readable".
f=$(grep -l '"purpose":"leasejudge lock held' "$w"/fs/* 2>/dev/null | head -1)
[ -z "$f" ] && f=$(grep -l "$held_id" "$w"/fs/* | head -1)
same "lock judge FILE of a file store's lock file: its body judged (held, the holder alive)" "1 held lease_runs" \
  "$("$lj" lock judge "$f" >"$w/out" 2>/dev/null; echo $?) $(cut -d' ' -f1,2 "$w/out")"

# --- the store from the environment; a flag wins ----------------------------------------
same "LEASEJUDGE_STORE names the store" "0 held" \
  "$(LEASEJUDGE_STORE=$fs "$lj" lock show held --json >"$w/out" 2>"$w/err"; echo $?) $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"]["kind"])' "$w/out")"
same "--store wins over LEASEJUDGE_STORE" 0 \
  "$(LEASEJUDGE_STORE=file:$w/typo "$lj" lock show --store "$fs" held >/dev/null 2>&1; echo $?)"
same "LEASEJUDGE_STORE that names no store: exit 4" 4 \
  "$(LEASEJUDGE_STORE=file:$w/typo "$lj" lock show held >/dev/null 2>&1; echo $?)"
same "LEASEJUDGE_CREDS is read (a file that is not there: the store cannot be opened)" yes \
  "$(LEASEJUDGE_CREDS=$w/nocreds "$lj" step export --store "$nats/steps" >/dev/null 2>"$w/err"; grep -q nocreds "$w/err" && echo yes)"

# --- the man page and the completion cover every verb and option ------------------------
man=$src/bindings/cli/leasejudge.1
comp=$src/bindings/cli/leasejudge.bash-completion
for v in "${verbs[@]}"; do
  [ "$v" = bench ] || [ "$v" = lease ] && continue
  # shellcheck disable=SC2086
  "$lj" $v --help >"$w/help" 2>/dev/null
  grep -q "^\.B.*${v//-/\\\\-}\|^\.BR.*${v//-/\\\\-}" "$man" && ok "the man page names $v" || notok "the man page names $v"
  missing=""
  for o in $(sed -n '/^options:/,/^$/p' "$w/help" | grep -o '^  --[a-z-]*'); do
    got=$(bash -c "source '$comp'; COMP_WORDS=(leasejudge $v $o); COMP_CWORD=$(( $(wc -w <<<"$v") + 1 )); _leasejudge; printf '%s\n' \"\${COMPREPLY[@]}\"" 2>&1)
    grep -qx -- "$o" <<<"$got" || missing="$missing $o"
  done
  same "the completion offers every option of $v" "" "$missing"
done

echo "1..$n"
[ "$failed" -eq 0 ]
