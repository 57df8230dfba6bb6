#!/usr/bin/env bash
# leasejudge-bench-ab (bench/ab.cpp), two builds of libleasejudge.so in one process: this
# build against a copy of itself agrees on every key of a generated state and prints its
# ratios, a median near 1 that is the median of the rounds it prints; a build that decides
# one key otherwise fails the run and is named with that key; a library that is not there,
# one without lj_step_plan_batch and bad options fail with their exit codes.
# Registered in the plain build only: the benchmarks are not built under the sanitizers.
set -euo pipefail
. "$(dirname "$0")/skip.sh"
bin=${LEASEJUDGE_BINARY_DIR:?}
ab=$bin/bench/leasejudge-bench-ab
gen=$bin/bench/leasejudge-bench-gen
for p in "$ab" "$gen" "$bin/tests/bench_ab_other_plan.so" "$bin/tests/bench_ab_no_plan.so"; do
  [ -e "$p" ] || skip_or_fail "$p is not built (LEASEJUDGE_BENCH=OFF)"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

rules=(--node build-eu-1 --owner 0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6.4242.lxb2k3a0 --now 2024-06-01T12:00:00Z
  --before 2024-06-01T11:50:00Z --bound 3600)
state=$tmp/state.jsonl
"$gen" --keys 20000 --nodes 4 --seed 20240601 "${rules[@]}" --out "$state" 2>/dev/null
[ "$(wc -l <"$state")" = 20000 ] || fail "the state has $(wc -l <"$state") lines"
lib=$(readlink -f "${LEASEJUDGE_LIBRARY:-$bin/libleasejudge.so}")
cp "$lib" "$tmp/a.so"
cp "$lib" "$tmp/b.so"

# 1. The build against a copy of itself: every key alike (exit 0), the ratios printed.
"$ab" --a "$tmp/a.so" --b "$tmp/b.so" --state "$state" "${rules[@]}" --rounds 5 --chunk 1000 >"$tmp/same.out" \
  || fail "the build against itself exited $?: $(cat "$tmp/same.out")"
sums=$(sed -n 's/^A \([0-9.]*\) s ([0-9]* ns a key), B \([0-9.]*\) s ([0-9]* ns a key): B\/A \([0-9.]*\) over 20000 keys, 5 rounds$/\1 \2 \3/p' "$tmp/same.out")
[ -n "$sums" ] || fail "no line of sums: $(cat "$tmp/same.out")"
rounds=$(sed -n 's/^B\/A by round: \(\([0-9.]* \)\{4\}[0-9.]*\); median [0-9.]*$/\1/p' "$tmp/same.out")
median=$(sed -n 's/^B\/A by round: .*; median \([0-9.]*\)$/\1/p' "$tmp/same.out")
[ -n "$rounds" ] && [ -n "$median" ] || fail "no line of five rounds and their median: $(cat "$tmp/same.out")"
# The printed figures hold together: B/A is B's time over A's (within the rounding of the
# printed seconds), the median the third of the five rounds' ratios in order, and a build
# against itself is near 1.
read -r a_s b_s ratio <<<"$sums"
awk -v a="$a_s" -v b="$b_s" -v r="$ratio" \
  'BEGIN { d = b / a - r; exit !(a > 0 && b > 0 && d * d <= (r * (0.0005 / a + 0.0005 / b) + 0.00005) ^ 2) }' \
  || fail "B/A $ratio is not $b_s / $a_s"
third=$(tr ' ' '\n' <<<"$rounds" | sort -g | sed -n 3p)
[ "$third" = "$median" ] || fail "the median $median is not the middle of the rounds $rounds"
awk -v m="$median" 'BEGIN { exit !(m >= 0.5 && m <= 2) }' || fail "the build against itself: median B/A $median"

# 2. A build that decides one key otherwise: the run fails and names that key (line 1234
# of the state, whichever way it is decided).
key=$(sed -n 1234p "$state" | python3 -c 'import json, sys; print(json.load(sys.stdin)["key"])')
[ "$(grep -cF "\"key\":\"$key\"" "$state")" = 1 ] || fail "the key $key is not the state's once"
set +e
LEASEJUDGE_AB_LIBRARY=$tmp/b.so LEASEJUDGE_AB_KEY=$key "$ab" --a "$tmp/a.so" --b "$bin/tests/bench_ab_other_plan.so" \
  --state "$state" "${rules[@]}" --rounds 1 >"$tmp/other.out" 2>"$tmp/other.err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "a build deciding one key otherwise: exit $rc, $(cat "$tmp/other.out" "$tmp/other.err")"
[ "$(cat "$tmp/other.err")" = "leasejudge-bench-ab: the builds decide key 1234 ($key) differently" ] \
  || fail "a build deciding one key otherwise: $(cat "$tmp/other.err")"
[ ! -s "$tmp/other.out" ] || fail "a ratio printed for builds that disagree: $(cat "$tmp/other.out")"
# The same stand-in deciding every key as the build (no key named) agrees: the failure
# above was that one key.
LEASEJUDGE_AB_LIBRARY=$tmp/b.so "$ab" --a "$tmp/a.so" --b "$bin/tests/bench_ab_other_plan.so" --state "$state" \
  "${rules[@]}" --rounds 1 >/dev/null || fail "the stand-in with no key to change exited $?"

# 3. Bad libraries and options: the exit code and what is wrong.
expect() {  # expect CODE TEXT ARGS...: the run exits CODE and says TEXT on stderr
  local code=$1 text=$2 rc
  shift 2
  set +e
  "$ab" "$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
  rc=$?
  set -e
  [ "$rc" = "$code" ] || fail "$*: exit $rc, not $code: $(cat "$tmp/bad.err")"
  grep -qF -- "$text" "$tmp/bad.err" || fail "$*: no '$text' in: $(cat "$tmp/bad.err")"
  [ ! -s "$tmp/bad.out" ] || fail "$*: printed $(cat "$tmp/bad.out")"
}
expect 1 "$tmp/none.so" --a "$tmp/a.so" --b "$tmp/none.so" --state "$state" "${rules[@]}"
expect 1 "$bin/tests/bench_ab_no_plan.so has no lj_step_plan_batch" --a "$bin/tests/bench_ab_no_plan.so" \
  --b "$tmp/b.so" --state "$state" "${rules[@]}"
expect 1 "$tmp/none.jsonl" --a "$tmp/a.so" --b "$tmp/b.so" --state "$tmp/none.jsonl" "${rules[@]}"
expect 2 "--a, --b, --state, --node, --owner, --now and --before are needed" --a "$tmp/a.so" --state "$state" \
  "${rules[@]}"
expect 2 "--rounds takes a number, not \"two\"" --a "$tmp/a.so" --b "$tmp/b.so" --state "$state" "${rules[@]}" \
  --rounds two
expect 2 "--rounds and --chunk must be at least 1" --a "$tmp/a.so" --b "$tmp/b.so" --state "$state" "${rules[@]}" \
  --chunk 0
expect 2 "unknown option --c" --a "$tmp/a.so" --b "$tmp/b.so" --c x --state "$state" "${rules[@]}"
expect 2 "--b needs a value" --a "$tmp/a.so" --b
# A plan that fails (the stand-in with no library to plan with) ends the run.
expect 1 "lj_step_plan_batch returned" --a "$tmp/a.so" --b "$bin/tests/bench_ab_other_plan.so" --state "$state" \
  "${rules[@]}"
echo "ok: leasejudge-bench-ab agrees with itself (median B/A $median over 5 rounds), fails on one key decided otherwise and on bad input"
