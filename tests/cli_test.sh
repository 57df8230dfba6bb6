#!/usr/bin/env bash
# The installed leasejudge command (cmake --install into a temporary prefix, never the
# build tree): help, version, usage errors and exit codes; the step verbs against a real
# nats-server (import, export, plan, sweep dry and applied, end), the sweep's writes
# checked key by key against step plan on the exported state; a lock taken and
# released between processes. Expected values come from the states written here and
# are checked with python3's json, not with leasejudge.
. "${LEASEJUDGE_SOURCE_DIR:?}/tests/nats_script.sh"
command -v python3 >/dev/null || skip_or_fail "python3 is not installed"

env -u LD_PRELOAD cmake --install "$build" --prefix "$w/prefix" >"$w/install.log" 2>&1 || { cat "$w/install.log"; exit 1; }
lj=$w/prefix/bin/leasejudge
[ -x "$lj" ] && ok "bin/leasejudge installed" || { notok "bin/leasejudge installed"; exit 1; }
# run ARGS...: the exit code; stdout in $w/out, stderr in $w/err.
run() { "$lj" "$@" >"$w/out" 2>"$w/err"; echo $?; }

# --- help, version, usage ------------------------------------------------------------
same "--help: exit 0, the verbs on stdout, nothing on stderr" "0 1 0" \
  "$(run --help) $(grep -c '^usage: leasejudge VERB' "$w/out") $(wc -c <"$w/err")"
version=$(PKG_CONFIG_PATH=$(dirname "$(find "$w/prefix" -name leasejudge.pc | head -1)") pkg-config --modversion leasejudge)
same "--version is the installed version" "0 $version" "$(run --version) $(cat "$w/out")"
same "version is the same" "0 $version" "$(run version) $(cat "$w/out")"
same "version --json" "0 {\"version\":\"$version\",\"abi\":${version%%.*}}" "$(run version --json) $(cat "$w/out")"
verbs=("step plan" "step sweep" "step end" "step export" "step import" "lock judge" "lock acquire" "lock renew"
  "lock release" "identity" "owner" "machine-id" "version")
for v in "${verbs[@]}"; do
  # shellcheck disable=SC2086
  rc=$(run $v --help)
  same "$v --help: exit 0, its usage first" "0 usage: leasejudge $v" "$rc $(head -1 "$w/out" | cut -c1-$((18 + ${#v})))"
  # shellcheck disable=SC2086
  rc=$(run $v --bogus)
  same "$v --bogus: exit 2, one line naming it, with the hint" "2 1 1" \
    "$rc $(wc -l <"$w/err") $(grep -c "^leasejudge $v: unknown option --bogus (see leasejudge $v --help)$" "$w/err")"
done
same "no verb: exit 2" 2 "$(run)"
same "an unknown verb: exit 2, one line" "2 leasejudge: unknown verb bogus (see leasejudge --help)" \
  "$(run bogus) $(cat "$w/err")"
usage_case() {  # EXPECTED-STDERR ARGS...
  local expected=$1
  shift
  same "$* : exit 2" "2 $expected" "$(run "$@" </dev/null) $(cat "$w/err")"
}
usage_case "leasejudge step sweep: --node N is required (see leasejudge step sweep --help)" step sweep --store mem:
usage_case "leasejudge lock judge: --now 2024-05-01 is no RFC 3339 time (see leasejudge lock judge --help)" \
  lock judge --now 2024-05-01
# The library refuses it (lj_step_rules_resolve), in its words: still a usage error.
usage_case "leasejudge step plan: the rule not-self takes every owner but the caller's for gone: it needs the caller's owner token (or the rule by-owner, which is provably-dead without one) (see leasejudge step plan --help)" \
  step plan --node n1 --rule not-self /dev/null
usage_case "leasejudge step sweep: the node a.b holds a '.', which ends a step key's node (see leasejudge step sweep --help)" \
  step sweep --node a.b --store mem:
usage_case "leasejudge step export: opening bogus:x: not a store URL (mem:, file:DIR, nats://[user:pass@]host:port[,host:port...]/BUCKET, etcd://[user:pass@]host:port[,host:port...]/PREFIX) (see leasejudge step export --help)" \
  step export --store bogus:x
usage_case "leasejudge step plan: --threads 0 is no count from 1 to 64 (see leasejudge step plan --help)" \
  step plan --node n1 --threads 0 /dev/null
usage_case "leasejudge step plan: --threads 65 is no count from 1 to 64 (see leasejudge step plan --help)" \
  step plan --node n1 --threads 65 /dev/null
usage_case "leasejudge step plan: --threads two is no count from 1 to 64 (see leasejudge step plan --help)" \
  step plan --node n1 --threads two /dev/null
usage_case "leasejudge step plan: --threads plans the lines of a FILE; a store's keys are read in turn (see leasejudge step plan --help)" \
  step plan --node n1 --threads 2 --store mem:
# A state of megabytes (each read shared between threads): the same answers over any
# number of threads, every line answered in order, the summary counted by hand.
python3 - "$w/many.jsonl" <<'PY'
import sys
with open(sys.argv[1], "wb") as f:
    for i in range(30000):
        if i % 10 == 9:
            f.write(b"not json\n")
        elif i % 1000 == 500:
            f.write(b'{"key":"n1.u%d","value":{"id":"u","state":"running","owner":"o.1.2","reason":"\xff"}}\n' % i)
        else:
            f.write(b'{"key":"n1.s%d","revision":%d,"value":{"id":"s%d","tool":"go build","state":"running",'
                    b'"owner":"o.1.2","started":"2024-05-01T11:00:00Z","result":{"log":"%s"}}}\n' % (i, i + 1, i, b"x" * (i % 300)))
PY
for t in 1 2 3 64; do
  "$lj" step plan --node n1 --owner no-boot-id.1.1 --rule not-self --threads "$t" "$w/many.jsonl" >"$w/many.$t" 2>"$w/many.$t.err"
  echo $? >>"$w/many.$t.err"
done
same "step plan over 1 thread: every line answered in order" "30000 27000 3000 n1.s0 n1.s29998" \
  "$(wc -l <"$w/many.1") $(grep -c '"action":"end","reason":"owner-not-self"' "$w/many.1") $(grep -c '"malformed"' "$w/many.1") $(head -1 "$w/many.1" | cut -d'"' -f4) $(tail -2 "$w/many.1" | head -1 | cut -d'"' -f4)"
same "... its summary, and exit 7 for the malformed lines (as step import gives)" "step plan: 27000 keys: 27000 end, 0 delete, 0 leave, 0 no-step, 0 other-node, 3000 malformed lines 7" \
  "$(tail -2 "$w/many.1.err" | paste -sd' ')"
for t in 2 3 64; do
  same "step plan --threads $t: the same bytes out, the same summary and exit" "same same" \
    "$(cmp -s "$w/many.1" "$w/many.$t" && echo same) $(cmp -s "$w/many.1.err" "$w/many.$t.err" && echo same)"
done
# A file is read a piece ahead on a thread, a pipe as it comes: the same answers either
# way, and from a file on stdin.
for t in 1 2; do
  cat "$w/many.jsonl" | "$lj" step plan --node n1 --owner no-boot-id.1.1 --rule not-self --threads "$t" - >"$w/many.pipe.$t" 2>"$w/many.pipe.$t.err"
  echo $? >>"$w/many.pipe.$t.err"
  "$lj" step plan --node n1 --owner no-boot-id.1.1 --rule not-self --threads "$t" <"$w/many.jsonl" >"$w/many.stdin.$t" 2>"$w/many.stdin.$t.err"
  echo $? >>"$w/many.stdin.$t.err"
  same "step plan --threads $t from a pipe and from a file on stdin: the same bytes, summary and exit as from FILE" \
    "same same same same" \
    "$(cmp -s "$w/many.1" "$w/many.pipe.$t" && echo same) $(cmp -s "$w/many.1.err" "$w/many.pipe.$t.err" && echo same) $(cmp -s "$w/many.1" "$w/many.stdin.$t" && echo same) $(cmp -s "$w/many.1.err" "$w/many.stdin.$t.err" && echo same)"
done
same "identity of a pid that does not run: exit 1, saying so" \
  "1 leasejudge identity: pid 999999 has no identity (no such process, or its start cannot be read)" \
  "$(run identity 999999) $(cat "$w/err")"
same "owner of a pid that does not run: exit 1, saying so" \
  "1 leasejudge owner: pid 999999 has no owner (no such process, or its start cannot be read)" \
  "$(run owner 999999) $(cat "$w/err")"
same "a store nobody answers: exit 4" 4 "$(run step export --store nats://127.0.0.1:1/steps)"
same "a file store whose directory is not there: exit 4, saying so, nothing made" \
  "4 leasejudge step sweep: opening file:$w/typo: the directory $w/typo does not exist (nothing was made; --create-bucket makes it) no" \
  "$(run step sweep --store "file:$w/typo" --node n1) $(cat "$w/err") $([ -e "$w/typo" ] && echo made || echo no)"
same "... made with --create-bucket: an empty store" "0 leasejudge step export: 0 keys exported" \
  "$(run step export --store "file:$w/typo" --create-bucket) $(cat "$w/err")"
# Every exit code the help lists is one the man page explains, and no other.
run --help >/dev/null
help_codes=$(sed -n '/^exit codes/,/^lock run/p' "$w/out" | sed -n 's/^ *\([0-9]\+\)  .*/\1/p' | sort -n | paste -sd' ')
man_codes=$(sed -n '/^\.SH EXIT STATUS/,/^\.SH SEE/p' "$w/prefix/share/man/man1/leasejudge.1" | sed -n 's/^\.B \([0-9]\+\)$/\1/p' | sort -n | paste -sd' ')
same "the man page's exit codes are the help's" "$help_codes" "$man_codes"
# The owner defaults to the calling shell, not to the command's own process.
out=$(bash -c 'echo $$; "$0" owner; echo $?' "$lj")
same "owner without a pid is the calling shell's" "0 yes" \
  "$(sed -n 3p <<<"$out") $(tok=$(sed -n 2p <<<"$out"); pid=${tok#*.}; [ "${pid%%.*}" = "$(sed -n 1p <<<"$out")" ] && echo yes)"

# --- the step verbs on a real nats-server --------------------------------------------
start_nats_server "$w/nats" || exit 1
port=$NATS_PORT
url=nats://127.0.0.1:$port/steps
boot=$(cat /proc/sys/kernel/random/boot_id)
sleep 300 &
live=$!
sleep 300 &
gone=$!
live_tok=$("$lj" owner $live)
gone_tok=$("$lj" owner $gone)
kill $gone
wait $gone 2>/dev/null
other_boot="00000000-0000-4000-8000-000000000000.1.1"
ask=0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6
{
  for i in $(seq 1 40); do
    case $((i % 5)) in
      0) echo "{\"key\":\"n1.s$i\",\"revision\":1,\"value\":{\"id\":\"s$i\",\"tool\":\"build\",\"state\":\"running\",\"owner\":\"$gone_tok\",\"started\":\"2024-05-01T11:00:00Z\"}}" ;;
      1) echo "{\"key\":\"n1.s$i\",\"revision\":1,\"value\":{\"id\":\"s$i\",\"tool\":\"build\",\"state\":\"running\",\"owner\":\"$live_tok\",\"started\":\"2024-05-01T11:00:00Z\"}}" ;;
      2) echo "{\"key\":\"n1.s$i\",\"revision\":1,\"value\":{\"id\":\"s$i\",\"tool\":\"build\",\"state\":\"succeeded\"}}" ;;
      3) echo "{\"key\":\"n1.s$i\",\"revision\":1,\"value\":{\"id\":\"s$i\",\"tool\":\"build\",\"state\":\"running\",\"owner\":\"$other_boot\"}}" ;;
      4) echo "{\"key\":\"n2.s$i\",\"revision\":1,\"value\":{\"id\":\"s$i\",\"tool\":\"build\",\"state\":\"running\",\"owner\":\"$gone_tok\"}}" ;;
    esac
  done
  echo "{\"key\":\"n1.$ask\",\"revision\":1,\"value\":{\"id\":\"$ask\",\"tool\":\"check ask\",\"state\":\"running\",\"owner\":\"$gone_tok\",\"started\":\"2024-05-01T10:00:00Z\"}}"
  echo "{\"key\":\"n1.junk\",\"revision\":1,\"value\":\"not a step\"}"
} >"$w/state.jsonl"
total=$(wc -l <"$w/state.jsonl")
same "step import into a new bucket: every key created" \
  "0 leasejudge step import: $total keys created, 0 already held a value (left as they are), 0 lines malformed" \
  "$(run step import --store "$url" --create-bucket "$w/state.jsonl") $(cat "$w/err")"
same "step import again: nothing overwritten" \
  "0 leasejudge step import: 0 keys created, $total already held a value (left as they are), 0 lines malformed" \
  "$(run step import --store "$url" <"$w/state.jsonl") $(cat "$w/err")"
printf '{"key":"n1.x","value":{}}\nnot json\n' >"$w/bad.jsonl"
same "step import with a malformed line: the others imported, exit 7" \
  "7 leasejudge step import: 1 key created, 0 already held a value (left as they are), 1 line malformed" \
  "$(run step import --store "$url" "$w/bad.jsonl") $(tail -1 "$w/err")"
"$lj" step export --store "$url" >"$w/all.jsonl" 2>"$w/err"
same "step export: every key, each value as imported" "ok" "$(python3 - "$w/state.jsonl" "$w/all.jsonl" <<'PY'
import json, sys
want = {}
for line in open(sys.argv[1]):
    d = json.loads(line); want[d["key"]] = d["value"]
want["n1.x"] = {}
got = {}
for line in open(sys.argv[2]):
    d = json.loads(line); got[d["key"]] = d["value"]
    assert isinstance(d["revision"], int) and d["revision"] > 0, d
print("ok" if got == want else f"differ: {sorted(set(got) ^ set(want))}")
PY
)"
"$lj" step export --store "$url" --node n1 >"$w/n1.jsonl" 2>/dev/null
same "step export --node n1: only n1's keys" "0" "$(grep -c '"key":"n2\.' "$w/n1.jsonl")"

# The plan of the exported state, and the sweep: same rule (no --owner: provably-dead).
"$lj" step plan --node n1 "$w/n1.jsonl" >"$w/plan.jsonl" 2>/dev/null
same "the plan: ends for the gone and the other boot's owner, a delete for the gone asker, the rest left" "ok" \
  "$(python3 - "$w/state.jsonl" "$w/plan.jsonl" "$gone_tok" "$other_boot" <<'PY'
import json, sys
_, state, plan, gone, other = sys.argv
expect = {}
for line in open(state):
    d = json.loads(line); k = d["key"]; v = d["value"]
    if not k.startswith("n1."): continue
    if isinstance(v, dict) and v.get("state") == "running" and v.get("owner") in (gone, other):
        expect[k] = "delete" if v["tool"] == "check ask" else "end"
    else:
        expect[k] = "leave"
expect["n1.x"] = "leave"
got = {}
for line in open(plan):
    d = json.loads(line); got[d["key"]] = d["action"]
    assert d["why"] != "", d  # every line says why, a leave too
print("ok" if got == expect else f"differ: {[(k, expect.get(k), got.get(k)) for k in sorted(set(expect) | set(got)) if expect.get(k) != got.get(k)]}")
PY
)"
same "step sweep --dry-run: exit 0" 0 "$(run step sweep --store "$url" --node n1 --dry-run --json)"
"$lj" step export --store "$url" >"$w/after_dry.jsonl" 2>/dev/null
same "... and the bucket is as it was" "" "$(diff "$w/all.jsonl" "$w/after_dry.jsonl")"
same "... its lines are the plan's actions" "ok" "$(python3 - "$w/plan.jsonl" "$w/out" <<'PY'
import json, sys
plan = {json.loads(l)["key"]: json.loads(l)["action"] for l in open(sys.argv[1])}
dry = {}
for l in open(sys.argv[2]):
    d = json.loads(l); dry[d["key"]] = d["action"]
    assert d["outcome"] == ("left" if d["action"] == "leave" else "planned"), d
print("ok" if dry == plan else "differ")
PY
)"
same "step sweep: exit 0" 0 "$(run step sweep --store "$url" --node n1 --json)"
cp "$w/out" "$w/sweep.jsonl"
"$lj" step export --store "$url" >"$w/after.jsonl" 2>/dev/null
same "the sweep's writes, key by key, are the plan's" "ok" "$(python3 - "$w/all.jsonl" "$w/plan.jsonl" "$w/after.jsonl" "$w/sweep.jsonl" <<'PY'
import json, sys
def load(p): return {json.loads(l)["key"]: json.loads(l) for l in open(p)}
before, after = load(sys.argv[1]), load(sys.argv[3])
plan = {k: d["action"] for k, d in load(sys.argv[2]).items()}
swept = load(sys.argv[4])
bad = []
for k, b in before.items():
    a = after.get(k)
    act = plan.get(k, "other-node")
    if act in ("leave", "other-node"):
        ok = a == b
    elif act == "delete":
        ok = a is None and swept[k]["outcome"] == "done"
    else:
        v = dict(b["value"]); v["state"] = "failed"; v["reason"] = "the build module restarted while it ran"
        av = dict(a["value"]) if a else {}
        ok = a is not None and a["revision"] > b["revision"] and "ended" in av and swept[k]["outcome"] == "done"
        av.pop("ended", None)
        ok = ok and av == v
    if not ok: bad.append((k, act))
print("ok" if not bad else f"differ: {bad}")
PY
)"
same "a second sweep has nothing to write" "0 0" \
  "$(run step sweep --store "$url" --node n1 --json) $(grep -vc '"outcome":"left"' "$w/out")"

# step end: refused for a live owner's step, done for a gone one's, refused when ended.
same "step end of a live owner's step: refused, exit 1" 1 "$(run step end --store "$url" --node n1 s1 --why manual)"
echo "{\"key\":\"n1.late\",\"value\":{\"id\":\"late\",\"tool\":\"build\",\"state\":\"running\",\"owner\":\"$gone_tok\"}}" |
  "$lj" step import --store "$url" 2>/dev/null
same "step end of a gone owner's step: exit 0" 0 "$(run step end --store "$url" n1.late --why "ended by hand" --json)"
same "... the ended value, said" "ok" "$(python3 -c '
import json, sys
d = json.loads(open(sys.argv[1]).read())
print("ok" if d["key"] == "n1.late" and d["action"] == "end" and d["state"] == "failed" and d["why"] == "ended by hand" else d)' "$w/out")"
"$lj" step export --store "$url" --node n1 2>/dev/null | grep '"n1.late"' >"$w/late.jsonl"
same "... in the store: failed, with the why" "failed ended by hand" \
  "$(python3 -c 'import json,sys; v=json.loads(open(sys.argv[1]).read())["value"]; print(v["state"], v["reason"])' "$w/late.jsonl")"
same "step end again: refused (not running), exit 1" 1 "$(run step end --store "$url" n1.late --why again)"
same "step end of no key: exit 1" 1 "$(run step end --store "$url" n1.nosuch --why x)"

# --- a lock between processes ---------------------------------------------------------
lurl=nats://127.0.0.1:$port/locks
sleep 300 &
holder=$!
pids=("$holder")
same "lock acquire for a live holder: exit 0" 0 "$(run lock acquire --store "$lurl" --create-bucket deploy --pid $holder --json)"
first=$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); print(d["revision"], d["id"])' "$w/out")
same "lock acquire from another process, the lock held: exit 1" 1 \
  "$(bash -c '"$0" lock acquire --store "$1" deploy >/dev/null 2>&1; echo $?' "$lj" "$lurl")"
same "lock judge on the store: held, exit 1" 1 "$(run lock judge --store "$lurl" deploy)"
kill $holder
wait $holder 2>/dev/null
pids=()
same "lock judge once the holder is gone: break, exit 0" "0 break process_gone" \
  "$(run lock judge --store "$lurl" deploy) $(cut -d' ' -f1,2 "$w/out")"
same "lock acquire from another process: the gone holder's lock broken, exit 0" 0 \
  "$(bash -c '"$0" lock acquire --store "$1" deploy --json >"$2"; echo $?' "$lj" "$lurl" "$w/second")"
second=$(python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).read()); print(d["revision"], d["id"])' "$w/second")
same "... with a larger fencing token" yes "$([ "${second%% *}" -gt "${first%% *}" ] && echo yes || echo "no: $first / $second")"
same "lock release with the first id: refused, the lock is someone else's (exit 5)" 5 \
  "$(run lock release --store "$lurl" deploy --id "${first#* }")"
same "lock release with its id: exit 0" 0 "$(run lock release --store "$lurl" deploy --id "${second#* }")"
same "lock release again: no lock, exit 1" 1 "$(run lock release --store "$lurl" deploy --id "${second#* }")"

# A renewal by another run keeps the lease the lock was taken with (the body records
# it); the body's end is the writer's now + the lease + 5 min for clock skew.
same "lock acquire --lease 30s: exit 0" 0 \
  "$(run lock acquire --store "$lurl" lease --lease 30s --pid $$ --now 2024-05-01T12:00:00Z --json)"
lid=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())["id"])' "$w/out")
rc=$(run lock judge --store "$lurl" lease --now 2024-05-01T12:00:01Z)
same "... its lease ends 30 s + 5 min after" "1 held lease_runs 2024-05-01T12:05:30.000Z" \
  "$rc $(cut -d' ' -f1,2 "$w/out") $(grep -o 'until [^ ]*' "$w/out" | cut -c7-)"
rc=$(run lock renew --store "$lurl" lease --id "$lid" --now 2024-05-01T12:00:10Z)
same "lock renew without --lease: the lease it was taken with" \
  "0 renewed lease: fencing token $(($(cut -d' ' -f5 "$w/out" | tr -d ,))), the lease 30s from now" "$rc $(cat "$w/out")"
rc=$(run lock judge --store "$lurl" lease --now 2024-05-01T12:00:11Z)
same "... the body's end moved by that lease" "1 2024-05-01T12:05:40.000Z" "$rc $(grep -o 'until [^ ]*' "$w/out" | cut -c7-)"
rc=$(run lock renew --store "$lurl" lease --id "$lid" --lease 2m --now 2024-05-01T12:00:20Z --json)
same "lock renew --lease 2m: the new lease" "0 120000" \
  "$rc $(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())["lease_ms"])' "$w/out")"
rc=$(run lock renew --store "$lurl" lease --id "$lid" --now 2024-05-01T12:00:30Z --json)
same "... which the next renewal without --lease keeps" "0 120000" \
  "$rc $(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read())["lease_ms"])' "$w/out")"
same "lock release: exit 0" 0 "$(run lock release --store "$lurl" lease --id "$lid")"

# --- stored bytes on a terminal -----------------------------------------------------------
# A step whose owner and tool hold ESC sequences: the sweep's text and a refusal quoting
# them show them escaped, never raw.
printf '{"key":"n1.esc","value":{"id":"esc","tool":"t\\u001b[31m","state":"running","owner":"o\\u001b[2Jx.1.1"}}\n' \
  >"$w/esc.jsonl"
same "step import of a step holding ESC: exit 0" 0 "$(run step import --store "file:$w/esc" --create-bucket "$w/esc.jsonl")"
same "step sweep --dry-run in text: the owner escaped, no ESC byte" \
  "0 end n1.esc (owner-not-self): the build module restarted while it ran; its owner o\\x1b[2Jx.1.1 is not this process no-boot-id.1.1 0" \
  "$(run step sweep --dry-run --store "file:$w/esc" --node n1 --owner no-boot-id.1.1 --rule not-self) $(cat "$w/out") $(tr -d '\n' <"$w/out" | tr -cd '\033' | wc -c)"
same "step end refused: the message quoting the owner escaped, on one line" "1 1 0 1" \
  "$(run step end --store "file:$w/esc" n1.esc --why x) $(wc -l <"$w/err") $(tr -cd '\033' <"$w/err" | wc -c) $(grep -c 'o\\x1b\[2Jx' "$w/err")"

kill $live 2>/dev/null
echo "1..$n"
[ "$failed" -eq 0 ]
