#!/usr/bin/env bash
# The builtin and the leasejudge command run one table of verbs: for the same verb and
# arguments, from the same shell, they write the same bytes on stdout and stderr and
# exit with the same code. Every verb is run both ways; state-changing verbs each on a
# store of their own (the same relative path under two directories), so each starts
# from the same state. Only the lock's acquisition id, random by design, is masked.
. "$(dirname "${BASH_SOURCE[0]}")/../../../tests/fixtures/leasedir/tap.sh"
need_builtin
COMMAND=${LEASEJUDGE_COMMAND:-$LEASEJUDGE_BINARY_DIR/leasejudge}
[ -x "$COMMAND" ] || skip_all "the leasejudge command was not built ($COMMAND)"
LOCKS=$LEASEJUDGE_SOURCE_DIR/tests/fixtures/lock

mkdir -p "$WORK/b" "$WORK/c"
ME=$(leasejudge owner)
sleep 1000 &
GONE=$!
GONE_TOK=$(leasejudge owner $GONE)
kill $GONE
wait $GONE 2>/dev/null
cat >"$WORK/steps.jsonl" <<EOF
{"key":"n1.a","revision":1,"value":{"id":"a","tool":"build","state":"running","owner":"$GONE_TOK","started":"2024-05-01T11:00:00Z"}}
{"key":"n1.b","revision":2,"value":{"id":"b","tool":"build","state":"succeeded"}}
{"key":"n2.c","revision":3,"value":{"id":"c","tool":"build","state":"running","owner":"$GONE_TOK"}}
{"key":"n1.d","revision":4,"value":{"id":"d","tool":"build","state":"running","owner":"$ME"}}
not json
{"key":"n1.0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6","value":{"id":"0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6","tool":"check ask","state":"running","owner":"$GONE_TOK","started":"2024-05-01T10:00:00Z"}}
EOF
printf '\xff\x00{"holder"' >"$WORK/garbage"
cp "$WORK/steps.jsonl" "$WORK/b/steps.jsonl"
cp "$WORK/steps.jsonl" "$WORK/c/steps.jsonl"

# both INPUT ARGS...: run the verb as the builtin in $WORK/b and as the command in
# $WORK/c, both with INPUT on stdin, both from this shell; compare.
both() {
  local input=$1
  shift
  # In this shell itself, not a subshell: the default pid is this shell's for both.
  cd "$WORK/b" || return
  leasejudge "$@" <"$input" >"$WORK/b.out" 2>"$WORK/b.err"
  echo $? >"$WORK/b.rc"
  cd "$WORK/c" || return
  "$COMMAND" "$@" <"$input" >"$WORK/c.out" 2>"$WORK/c.err"
  echo $? >"$WORK/c.rc"
  cd "$WORK" || return
  sed -i -E 's/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/<id>/g' "$WORK/b.out" "$WORK/c.out"
  if cmp -s "$WORK/b.out" "$WORK/c.out" && cmp -s "$WORK/b.err" "$WORK/c.err" && cmp -s "$WORK/b.rc" "$WORK/c.rc"; then
    ok "leasejudge $*: the same bytes and exit ($(cat "$WORK/b.rc"))"
  else
    not_ok "leasejudge $*: the builtin and the command differ"
    for f in out err rc; do
      diff "$WORK/b.$f" "$WORK/c.$f" | head -5 | diag
    done
  fi
}
N=/dev/null
NOW=2024-05-01T12:00:00Z

# The table, help and usage.
both $N
both $N --help
both $N --version
both $N bogus
both $N step
both $N lock --help
for v in "step plan" "step sweep" "step end" "step export" "step import" "lock judge" "lock acquire" \
  "lock renew" "lock release" "identity" "owner" "machine-id" "version"; do
  # shellcheck disable=SC2086
  both $N $v --help
  # shellcheck disable=SC2086
  both $N $v --bogus
  # shellcheck disable=SC2086
  both $N $v --json --json-not
done
# This machine and its processes.
both $N identity
both $N identity 1
both $N identity --json 1
both $N identity 999999
both $N identity abc
both $N owner
both $N owner 999999 --json
both $N machine-id
both $N version --json
# lock judge: files, stdin, bad input, times.
both $N lock judge --now $NOW "$LOCKS/process-holder.json"
both $N lock judge --now 2024-05-01T12:10:00.001Z --json "$LOCKS/process-holder.json"
both "$LOCKS/process-holder.json" lock judge --now $NOW -
both "$WORK/garbage" lock judge
both "$WORK/garbage" lock judge --json
both $N lock judge nosuch-file
both $N lock judge --now 2024-05-01 "$LOCKS/process-holder.json"
# step plan: the shell's defaults, rules, stdin, bad options.
both $N step plan --node n1 --now $NOW steps.jsonl
both "$WORK/steps.jsonl" step plan --node n1 --now $NOW
both $N step plan --node n1 --owner no-boot-id.1.1 --before 2000-01-01T00:00:00Z --bound 36000 --rule provably-dead --now $NOW steps.jsonl
both $N step plan --node n1 --owner "$ME" --rule not-self --now $NOW steps.jsonl
both $N step plan --node n1 --before 2024-06-01 steps.jsonl
both $N step plan --node n1 --rule x steps.jsonl
both $N step plan --node n1 nosuch-file
# The store verbs, each on its own file store (same relative path in b/ and c/).
both $N step export --store file:st
both $N step import --store file:st --create-bucket steps.jsonl
both $N step import --store file:st steps.jsonl
both $N step export --store file:st
both $N step export --store file:st --node n1
both $N step plan --node n1 --now $NOW --store file:st
both $N step sweep --store file:st --node n1 --now $NOW --dry-run
both $N step sweep --store file:st --node n1 --now $NOW --dry-run --json
both $N step sweep --store file:st --node n1 --now $NOW
both $N step sweep --store file:st --node n1 --now $NOW --json
both $N step export --store file:st
both $N step end --store file:st n1.d --why "by hand" --now $NOW
both $N step end --store file:st n1.a --why "by hand" --now $NOW
both $N step end --store file:st --node n1 nosuch --why x
both $N step end --store file:st n1.a
both $N step sweep --store bogus:x --node n1
both $N step export --store nats://127.0.0.1:1/steps
# The lock's life on a store.
both $N lock judge --store file:locks deploy
both $N lock acquire --store file:locks --create-bucket deploy --now $NOW
both $N lock acquire --store file:locks deploy --now $NOW
both $N lock judge --store file:locks deploy --now $NOW
both $N lock judge --store file:locks nosuch
both $N lock renew --store file:locks deploy --id 00000000-0000-4000-8000-000000000000
both $N lock release --store file:locks deploy --id 00000000-0000-4000-8000-000000000000
both $N lock release --store file:locks deploy
# The lease directory (a root that is no checkout; the script's own usage).
both $N lease
both $N lease list --root /
both $N lease bogus
tap_done
