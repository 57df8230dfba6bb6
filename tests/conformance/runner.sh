#!/usr/bin/env bash
# The conformance table through the command (runner.sh cli TABLE: build/leasejudge) or
# the bash loadable builtin (runner.sh bash TABLE: `enable -f`, every verb run in this
# shell): one answer line per scenario, "<name>\t<JSON>" (check.py compares). python3
# only reads the table and the answers' JSON; every verdict is the door's.
set -u
mode=$1
table=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

case $mode in
  cli)
    LJ=${LEASEJUDGE_BINARY_DIR:-}/leasejudge
    [ -x "$LJ" ] || { echo "the command is not built ($LJ)" >&2; exit 77; }
    lj() { "$LJ" "$@"; }
    ;;
  bash)
    [ -f "${LEASEJUDGE_BASH_BUILTIN:-}" ] || { echo "the builtin is not built (${LEASEJUDGE_BASH_BUILTIN:-})" >&2; exit 77; }
    enable -f "$LEASEJUDGE_BASH_BUILTIN" leasejudge || exit 1
    [ "$(type -t leasejudge)" = builtin ] || exit 1
    lj() { builtin leasejudge "$@"; }
    ;;
  *) echo "usage: runner.sh cli|bash TABLE" >&2; exit 2 ;;
esac

# The table as one file of shell assignments per scenario (N.env), its JSON lines (N.in),
# the holder body (N.holder) and the body to judge, as bytes (N.body); the list
# "N<TAB>name" on stdout.
python3 - "$table" "$WORK" >"$WORK/list" <<'EOF' || exit 1
import json, shlex, sys
table, work = sys.argv[1], sys.argv[2]
for i, s in enumerate(json.load(open(table))["scenarios"]):
    env = {k: v for k, v in s.items() if isinstance(v, (str, int, bool)) and k not in ("expect", "body")}
    env["has_owner"] = "1" if "owner" in s else ""
    env["has_rule"] = "1" if "rule" in s else ""
    env["create"] = "1" if s.get("create") else ""
    env["holder_id"] = s.get("holder", {}).get("id", "")
    with open("%s/%d.env" % (work, i), "w") as f:
        f.write("".join("%s=%s\n" % (k, shlex.quote(str(v))) for k, v in env.items()))
    with open("%s/%d.in" % (work, i), "w") as f:
        f.write("".join(l + "\n" for l in s.get("lines", [])))
    if "holder" in s:
        with open("%s/%d.holder" % (work, i), "w") as f:
            f.write(json.dumps({"key": s["key"], "value": s["holder"]}) + "\n")
    if "body" in s:
        with open("%s/%d.body" % (work, i), "wb") as f:
            f.write(s["body"].encode("utf-8"))
    print("%d\t%s" % (i, s["name"]))
EOF

# This shell's token: the command's default owner is the shell that runs it (no
# subshell between), the builtin's the shell it runs in.
lj owner >"$WORK/self" || exit 1
SELF=$(cat "$WORK/self")
MACHINE=$(lj machine-id 2>/dev/null) || MACHINE=""
HOST=$(uname -n)

# The exit status of a refusal as the table's error class.
class_of() {
  case $1 in
    2) echo '{"error":"invalid"}' ;;
    4) echo '{"error":"store"}' ;;
    7) echo '{"error":"io"}' ;;
    *) echo "{\"error\":\"exit $1\"}" ;;
  esac
}

# step plan's answer lines as rows [key, action, reason].
rows_of() {
  python3 -c 'import json,sys
rows=[[d.get("key"),d["action"],d["reason"]] for d in map(json.loads, filter(None, sys.stdin.read().splitlines()))]
print(json.dumps({"plan":rows}))'
}

# A field of the JSON answer on stdin.
field() { python3 -c 'import json,sys; v=json.load(sys.stdin).get(sys.argv[1]); print(json.dumps(v) if not isinstance(v,str) else v)' "$1"; }

plan() {
  local i=$1 args=(--node "$node" --now "$now" --before "$before")
  [ -n "$has_owner" ] && args+=(--owner "$owner")
  [ -n "$has_rule" ] && args+=(--rule "$rule")
  [ -n "${min_age_ms:-}" ] && args+=(--min-age "${min_age_ms}ms")
  sed "s/{{SELF}}/$SELF/g" "$WORK/$i.in" >"$WORK/$i.plan-in"
  local rc
  # Run from this shell (no subshell between): the shell is the command's own process.
  lj step plan "${args[@]}" "$WORK/$i.plan-in" >"$WORK/$i.plan-out" 2>/dev/null
  rc=$?
  # Exit 7 with answers: a malformed line, answered (leave, malformed) like the others.
  if [ $rc -ne 0 ] && ! { [ $rc -eq 7 ] && [ -s "$WORK/$i.plan-out" ]; }; then class_of $rc; return; fi
  if [ "$kind" = owner ]; then echo '{"owner":"accepted"}'; else rows_of <"$WORK/$i.plan-out"; fi
}

open_store() {
  local args=(--store "$url" --node conformance) rc answer
  [ -n "$create" ] && args+=(--create-bucket)
  lj step export "${args[@]}" >/dev/null 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then answer='{"opened":true'; else answer=$(class_of $rc); answer=${answer%\}}; fi
  if [ -n "${probe:-}" ]; then
    if [ -e "$probe" ]; then answer+=',"exists_after":true'; else answer+=',"exists_after":false'; fi
  fi
  echo "$answer}"
}

# The leaseUntil of the body at key, as the store holds it (step export's value).
lease_until() {
  lj step export --store "$url" | python3 -c 'import json,sys
for d in map(json.loads, filter(None, sys.stdin.read().splitlines())):
    if d["key"] == sys.argv[1]:
        v = d["value"]; v = json.loads(v) if isinstance(v, str) else v
        print(json.dumps(v["leaseUntil"]))' "$key"
}

lease_reopen() {
  local got id first second rc
  got=$(lj lock acquire --store "$url" --create-bucket --lease "${lease_ms}ms" --now "$now0" --json "$key" 2>/dev/null)
  rc=$?
  [ $rc -eq 0 ] || { class_of $rc; return; }
  id=$(field id <<<"$got")
  first=$(lease_until)
  lj lock renew --store "$url" --id "$id" --now "$now1" --json "$key" >/dev/null 2>&1
  rc=$?
  [ $rc -eq 0 ] || { class_of $rc; return; }
  second=$(lease_until)
  echo "{\"leaseUntil\":[$first,$second]}"
}

seed() {
  local i=$1
  [ -f "$WORK/$i.holder" ] || { lj step export --store "$url" --create-bucket >/dev/null 2>&1; return; }
  sed -e "s/{{HOST}}/$HOST/g" -e "s/{{MACHINE}}/$MACHINE/g" "$WORK/$i.holder" |
    lj step import --store "$url" --create-bucket - >/dev/null 2>&1
}

lock() {
  local i=$1 got rc verdict reason="" outcome broke
  seed "$i" || { echo '{"error":"seed"}'; return; }
  if [ -f "$WORK/$i.holder" ]; then
    # The acquisition's answer has no reason code: the judge's, at the same now, gives it.
    verdict=$(lj lock judge --store "$url" --now "$now" --json "$key" 2>/dev/null)
    reason=$(field reason <<<"$verdict")
  fi
  got=$(lj lock acquire --store "$url" --lease "${lease_ms}ms" --now "$now" --json "$key" 2>/dev/null)
  rc=$?
  case $rc in 0 | 1) ;; *) class_of $rc; return ;; esac
  outcome=$(field outcome <<<"$got")
  local answer="{\"outcome\":\"$outcome\""
  if [ "$outcome" = acquired ]; then
    broke=$(field broke_at <<<"$got")
    if [ "$broke" = 0 ]; then answer+=',"broke":false'; else answer+=',"broke":true'; fi
    lj lock release --store "$url" --id "$(field id <<<"$got")" "$key" >/dev/null 2>&1
  fi
  [ -n "$reason" ] && answer+=",\"reason\":\"$reason\""
  echo "$answer}"
}

wait_lock() {
  local i=$1 got rc acquired=false kept=false
  seed "$i" || { echo '{"error":"seed"}'; return; }
  got=$(lj lock acquire --store "$url" --lease "${lease_ms}ms" --wait "${wait_ms}ms" --json "$key" 2>/dev/null)
  rc=$?
  case $rc in 0) acquired=true ;; 8) ;; *) class_of $rc; return ;; esac
  # The holder's body is still there when the store's body names its purpose.
  if lj lock judge --store "$url" --json "$key" 2>/dev/null | grep -q 'conformance holder'; then kept=true; fi
  echo "{\"acquired\":$acquired,\"holder_kept\":$kept}"
}

# A body's verdict at now: kind, reason code, whether only a person can clear it.
judge() {
  local i=$1 rc
  sed -e "s/{{HOST}}/$HOST/g" -e "s/{{MACHINE}}/$MACHINE/g" -e "s/{{SELF}}/$SELF/g" "$WORK/$i.body" >"$WORK/$i.judge-in"
  lj lock judge --now "$now" --json "$WORK/$i.judge-in" >"$WORK/$i.verdict" 2>/dev/null
  rc=$?
  case $rc in 0 | 1 | 3) ;; *) class_of $rc; return ;; esac
  python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))
print(json.dumps({"kind": v["kind"], "reason": v["reason"], "manual": v["manualRemoval"]}))' "$WORK/$i.verdict"
}

# release: our lock released while ours (mine), after another writer took its key
# (another), after it was removed (gone: released already); loss: renewed after another
# writer took its key. The other writer is a second acquisition that breaks ours, taken
# for a sleeping child's pid that then ended.
release() {
  local got id rc sleeper verb=release done='{"released":true}'
  [ "$kind" = loss ] && verb=renew done='{"renewed":true}'
  local c=${case:-another} pid=()
  if [ "$c" = another ]; then
    sleep 300 &
    sleeper=$!
    pid=(--pid "$sleeper")
  fi
  got=$(lj lock acquire --store "$url" --create-bucket --lease "${lease_ms}ms" "${pid[@]}" --json "$key" 2>/dev/null)
  rc=$?
  [ $rc -eq 0 ] || { class_of $rc; return; }
  id=$(field id <<<"$got")
  if [ "$c" = another ]; then
    kill "$sleeper"
    wait "$sleeper" 2>/dev/null
    lj lock acquire --store "$url" --lease "${lease_ms}ms" "$key" >/dev/null 2>&1 || { echo '{"error":"not taken"}'; return; }
  elif [ "$c" = gone ]; then
    lj lock release --store "$url" --id "$id" "$key" >/dev/null 2>&1 || { echo '{"error":"not removed"}'; return; }
  fi
  lj lock "$verb" --store "$url" --id "$id" "$key" >/dev/null 2>&1
  rc=$?
  case $rc in
    0) echo "$done" ;;
    1) echo '{"error":"notfound"}' ;;
    5) echo '{"error":"changed"}' ;;
    *) class_of $rc ;;
  esac
}

while IFS=$'\t' read -r i name; do
  unset owner rule min_age_ms probe url key now now0 now1 lease_ms wait_ms case
  # shellcheck disable=SC1090
  . "$WORK/$i.env"
  # Each answer written from this shell, not a subshell (see plan).
  case $kind in
    plan | plan-self | owner) plan "$i" ;;
    open) open_store ;;
    lease-reopen) lease_reopen ;;
    lock) lock "$i" ;;
    wait) wait_lock "$i" ;;
    judge) judge "$i" ;;
    release | loss) release ;;
    *) echo unsupported ;;
  esac >"$WORK/answer"
  printf '%s\t%s\n' "$name" "$(cat "$WORK/answer")"
done <"$WORK/list"
