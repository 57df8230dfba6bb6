#!/usr/bin/env bash
# `leasejudge lock judge` and `leasejudge step plan` in a real bash: the interfaces the
# lock and step parts fix, exit statuses, stdin and files, the shell's environment
# reaching gcloud, the shell's own owner token and start as defaults.
. "$(dirname "${BASH_SOURCE[0]}")/../../../tests/fixtures/leasedir/tap.sh"
need_builtin

LOCKS=$LEASEJUDGE_SOURCE_DIR/tests/fixtures/lock
[ -f "$LOCKS/process-holder.json" ] || skip_all "the lock fixtures are absent ($LOCKS)"
export PATH="$LOCKS:$PATH"  # the fake gcloud, driven by LJ_FAKE_GCLOUD

# run VERB ARGS...: stdout, then "rc=N"
run() { "$@" 2>"$WORK/err"; echo "rc=$?"; }

# --- lock judge ---------------------------------------------------------------------------

P=$LOCKS/process-holder.json
E=$LOCKS/execution-holder.json
held="held lease_runs held by caelo state lock (on devbox, pid 48213, started 2024-05-01T11:55:00.000Z); its lease runs until 2024-05-01T12:10:00.000Z unless renewed"
same "a process holder within its lease: held, exit 1" "$held
rc=1" "$(run leasejudge lock judge --now 2024-05-01T12:00:00Z "$P")"
same "now equal to the lease end is not past it" "$held
rc=1" "$(run leasejudge lock judge --now 2024-05-01T12:10:00.000Z "$P")"
same "past its lease: break, exit 0 (--json)" \
  '{"kind":"break","reason":"lease_ended","manualRemoval":false,"why":"caelo state lock (on devbox, pid 48213, started 2024-05-01T11:55:00.000Z) stopped renewing its lock; its lease ended at 2024-05-01T12:10:00.000Z"}
rc=0' "$(run leasejudge lock judge --now 2024-05-01T12:10:00.001Z --json "$P")"
same "the body from stdin" "$held
rc=1" "$(run leasejudge lock judge --now 2024-05-01T12:00:00Z <"$P")"
same "the body from stdin as -" "$held
rc=1" "$(run leasejudge lock judge --now 2024-05-01T12:00:00Z - <"$P")"
same "an execution that finished: break (gcloud gets the shell's temporary variable)" \
  "break execution_finished caelo upgrader (run caelo-upgrader-x7k2p, started 2024-05-01T11:30:00.000Z) has succeeded, but its lock was left behind
rc=0" "$(LJ_FAKE_GCLOUD=succeeded run leasejudge lock judge "$E")"
same "an execution still running: held" \
  '{"kind":"held","reason":"execution_running","manualRemoval":false,"why":"caelo upgrader (run caelo-upgrader-x7k2p, started 2024-05-01T11:30:00.000Z) is still running"}
rc=1' "$(LJ_FAKE_GCLOUD=running run leasejudge lock judge --json "$E")"
export LJ_FAKE_GCLOUD=denied
same "Cloud Run cannot be asked: unknown, exit 3 (an exported variable)" \
  "unknown execution_unknown could not check whether caelo upgrader (run caelo-upgrader-x7k2p, started 2024-05-01T11:30:00.000Z) is still running: ERROR: (gcloud.run.jobs.executions.describe) PERMISSION_DENIED: Permission 'run.executions.get' denied on resource
rc=3" "$(run leasejudge lock judge "$E")"
unset LJ_FAKE_GCLOUD
LJ_FAKE_GCLOUD_ARGS=$WORK/gcloud-args LJ_FAKE_GCLOUD=running leasejudge lock judge "$P" --now 2024-05-01T12:00:00Z >/dev/null
check "gcloud is never asked about a process holder" test ! -e "$WORK/gcloud-args"
same "a body that is not readable: held, manual removal" \
  '{"kind":"held","reason":"not_readable","manualRemoval":true,"why":"the lock'"'"'s holder is not readable (garbage)"}
rc=1' "$(echo garbage | run leasejudge lock judge --json)"
same "an empty body" "rc=1" "$(run leasejudge lock judge </dev/null | tail -n 1)"
head -c 10485760 /dev/zero | tr '\0' x >"$WORK/big"
out=$(leasejudge lock judge "$WORK/big" 2>&1)
rc=$?
same "a 10 MB body: held, not readable, exit 1" "held not_readable 1" "$(echo "$out" | cut -d' ' -f1,2) $rc"
for bad in "--now bogus" "--now" "--zz" "a b" "--now 2024-05-01"; do
  # shellcheck disable=SC2086
  out=$(cd "$WORK" && leasejudge lock judge $bad 2>"$WORK/err" </dev/null)
  same "lock judge $bad: exit 2" "2 " "$? $out"
done
# A body that cannot be read gives no verdict: unknown, never break.
out=$(cd "$WORK" && leasejudge lock judge nosuch-file 2>"$WORK/err" </dev/null)
same "lock judge nosuch-file: a file that cannot be read, exit 7 (one code for every verb)" "7 " "$? $out"
same "... saying why" "leasejudge lock judge: nosuch-file: No such file or directory" "$(cat "$WORK/err")"
for bad in "" "bogus"; do
  # shellcheck disable=SC2086
  leasejudge lock $bad >/dev/null 2>&1
  same "lock '$bad': exit 2" 2 $?
done

# --- step plan ---------------------------------------------------------------------------------

ME=$(leasejudge owner)
OTHER="$BOOT_ID.1.abc"  # pid 1 with another start: another process, and gone
cat >"$WORK/steps.jsonl" <<EOF
{"key":"n1.a","revision":1,"value":{"id":"a","tool":"build","state":"running","owner":"$OTHER","started":"2024-05-01T11:00:00Z"}}
{"key":"n1.b","revision":2,"value":{"id":"b","tool":"build","state":"succeeded"}}
{"key":"n2.c","revision":3,"value":{"id":"c","tool":"build","state":"running","owner":"$OTHER"}}
not json

{"key":"n1.d","revision":4,"value":{"id":"d","tool":"build","state":"running","owner":"$ME"}}
{"key":"n1.e","revision":5,"value":{"id":"e","tool":"build","state":"running","started":"2024-05-01T11:00:00Z"}}
{"key":"n1.f","revision":6,"value":{"id":"f","tool":"build","state":"running","started":"2100-05-01T11:00:00Z"}}
{"key":"n1.g"}
{"key":"n1.0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6","value":{"id":"0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6","tool":"check ask","state":"running","started":"2024-05-01T10:00:00Z"}}
EOF
restart='"why":"the build module restarted while it ran"'
malformed='{"key":null,"action":"leave","reason":"malformed","why":"the line is not one JSON value","malformed":"the line is not one JSON value"}'
expected='{"key":"n1.a","action":"end","reason":"owner-gone",'$restart'}
{"key":"n1.b","action":"leave","reason":"not-running","why":"the step is not running"}
{"key":"n2.c","action":"leave","reason":"other-node","why":"the key is no step key of this node"}
'$malformed'
{"key":"n1.d","action":"leave","reason":"owned-by-self","why":"this process owns it"}
{"key":"n1.e","action":"end","reason":"started-before",'$restart'}
{"key":"n1.f","action":"leave","reason":"started-since","why":"it names no owner and started since this process began"}
{"key":"n1.g","action":"leave","reason":"no-value","why":"the key holds no value"}
{"key":"n1.0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6","action":"end","reason":"ask-past-bound","why":"past the step bound: its asker stopped waiting at 2024-05-01T11:00:00Z"}
rc=7'
# A malformed line among them: exit 7, as step import gives.
# Without --owner: the shell's token and start, and the rule provably-dead (pid 1 with
# another start is proven gone; the shell's own step is left).
same "step plan: one line per key in order; the shell's token and start as defaults" "$expected" \
  "$(run leasejudge step plan --node n1 --now 2024-05-01T12:00:00Z "$WORK/steps.jsonl")"
same "... and the rule, and the summary, on stderr" \
  "leasejudge step plan: rule provably-dead (no --owner): only owners proven gone (dead, recycled, rebooted) are ended, never a step whose owner is alive on this node
step plan: 8 keys: 3 end, 0 delete, 3 leave, 1 no-step, 1 other-node, 1 malformed line" "$(cat "$WORK/err")"
(leasejudge step plan --node n1 --now 2024-05-01T12:00:00Z <"$WORK/steps.jsonl" >"$WORK/sub.out" 2>/dev/null)
same "from stdin, in a subshell: still the shell's token" "$expected" "$(cat "$WORK/sub.out"; echo rc=7)"
expected='{"key":"n1.a","action":"end","reason":"owner-gone",'$restart'}
{"key":"n1.b","action":"leave","reason":"not-running","why":"the step is not running"}
{"key":"n2.c","action":"leave","reason":"other-node","why":"the key is no step key of this node"}
'$malformed'
{"key":"n1.d","action":"leave","reason":"owner-alive","why":"its owner is alive"}
{"key":"n1.e","action":"leave","reason":"started-since","why":"it names no owner and started since this process began"}
{"key":"n1.f","action":"leave","reason":"started-since","why":"it names no owner and started since this process began"}
{"key":"n1.g","action":"leave","reason":"no-value","why":"the key holds no value"}
{"key":"n1.0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6","action":"leave","reason":"ask-within-bound","why":"its asker still waits for it"}
rc=7'
same "--owner, --before, --bound, --rule" "$expected" "$(run leasejudge step plan --node n1 --owner no-boot-id.1.1 --before 2000-01-01T00:00:00Z --bound 36000 \
  --rule provably-dead --now 2024-05-01T12:00:00Z "$WORK/steps.jsonl")"
# --min-age: a step another owner started a minute before now is left, whoever owns it.
printf '%s\n' '{"key":"n1.y","value":{"id":"y","tool":"t","state":"running","owner":"no-boot-id.7.z","started":"2024-05-01T11:59:00Z"}}' >"$WORK/young.jsonl"
same "--min-age 2m leaves a step started a minute ago" \
  '{"key":"n1.y","action":"leave","reason":"under-min-age","why":"it started less than the minimum age (--min-age) ago"}
rc=0' "$(run leasejudge step plan --node n1 --owner no-boot-id.1.1 --rule not-self --now 2024-05-01T12:00:00Z \
  --min-age 2m "$WORK/young.jsonl")"
same "--min-age 30s: the minimum met, the step is judged" \
  '{"key":"n1.y","action":"end","reason":"owner-not-self",'"$restart"'}
rc=0' "$(run leasejudge step plan --node n1 --owner no-boot-id.1.1 --rule not-self --now 2024-05-01T12:00:00Z \
  --min-age 30s "$WORK/young.jsonl")"
# A state larger than a read (1 MiB), read from a pipe as it comes: 3,000 copies of the
# lines above, their answers 3,000 copies of the answers, the summary counting all.
copies=3000
lines=$(<"$WORK/steps.jsonl")
for ((i = 0; i < copies; i++)); do printf '%s\n' "$lines"; done >"$WORK/big.jsonl"
for ((i = 0; i < copies; i++)); do printf '%s\n' "${expected%$'\n'rc=7}"; done >"$WORK/big.expected"
(cat "$WORK/big.jsonl" | leasejudge step plan --node n1 --owner no-boot-id.1.1 --before 2000-01-01T00:00:00Z --bound 36000 \
  --rule provably-dead --now 2024-05-01T12:00:00Z >"$WORK/big.out" 2>"$WORK/big.err")
same "a state of $(($(wc -c <"$WORK/big.jsonl") / 1024)) KiB through a pipe: every answer, in order" "same" \
  "$(cmp -s "$WORK/big.expected" "$WORK/big.out" && echo same || echo "differ: $(cmp "$WORK/big.expected" "$WORK/big.out" 2>&1)")"
same "... and the summary of all" \
  "leasejudge step plan: rule provably-dead: only owners proven gone (dead, recycled, rebooted) are ended
step plan: $((8 * copies)) keys: $copies end, 0 delete, $((5 * copies)) leave, $copies no-step, $copies other-node, $copies malformed lines" \
  "$(cat "$WORK/big.err")"
same "an empty input: no lines" "rc=0" "$(run leasejudge step plan --node n1 </dev/null)"
same "... and a summary of none" \
  "step plan: 0 keys: 0 end, 0 delete, 0 leave, 0 no-step, 0 other-node, 0 malformed lines" "$(tail -1 "$WORK/err")"
for bad in "" "--node" "--node n1 --rule x" "--node n1 --bound 0" "--node n1 --bound 1x" "--node n1 --before yesterday" \
  "--node n1 --now x" "--node n1 --zz" "--node n1 a b" "--node n1 --before 2024-06-01"; do
  # shellcheck disable=SC2086
  (cd "$WORK" && leasejudge step plan $bad >/dev/null 2>&1 </dev/null)
  same "step plan $bad: exit 2" 2 $?
done
(cd "$WORK" && leasejudge step plan --node n1 nosuch-file >/dev/null 2>"$WORK/err" </dev/null)
same "step plan nosuch-file: a failure, exit 7" 7 $?
same "... saying why" "leasejudge step plan: nosuch-file: No such file or directory" "$(cat "$WORK/err")"
leasejudge step bogus >/dev/null 2>&1
same "step bogus: exit 2" 2 $?

tap_done
