#!/usr/bin/env bash
# The plan against the Go baseline on a fresh random state every run: a new seed and a new
# share of values at the edges of Go's encoding/json (folded and repeated names, number
# limits, nesting at Go's limit, surrogates, bytes that are no JSON), then every key's
# action, why and what is said of its owner compared, line by line, for leasejudge's
# batch plan and the JSON-lines plan (lj_step_plan_lines), each on one and two threads,
# against the seed's rules in Go with json.Unmarshal (bench/go-baseline). A disagreement prints
# the seed to reproduce it: LEASEJUDGE_DIFF_SEED=<seed> LEASEJUDGE_DIFF_EDGES=<pct>.
# Registered in the plain build only (the benchmarks' programs are not built under the
# sanitizers); skips where they or the Go baseline are missing (fails under CI=true).
set -euo pipefail
. "$(dirname "$0")/skip.sh"
src=${LEASEJUDGE_SOURCE_DIR:?}
bin=${LEASEJUDGE_BINARY_DIR:?}
gen=$bin/bench/leasejudge-bench-gen
sweep=$bin/bench/leasejudge-bench-sweep
go_baseline=$bin/bench/go-baseline
[ -x "$gen" ] && [ -x "$sweep" ] || skip_or_fail "the benchmarks' programs are not built here (LEASEJUDGE_BENCH=OFF)"
[ -x "$go_baseline" ] || skip_or_fail "the Go baseline is not built here (no go tool at configure time)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

seed=${LEASEJUDGE_DIFF_SEED:-$(( ($(date +%s%N) / 1000) % 2147483647 ))}
edges=${LEASEJUDGE_DIFF_EDGES:-$(( 20 + seed % 61 ))}
keys=${LEASEJUDGE_DIFF_KEYS:-6000}
node=build-eu-1
owner=0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6.4242.lxb2k3a0
now=2024-06-01T12:00:00Z
before=2024-06-01T11:50:00Z
bound=3600
echo "# seed $seed, $edges% of the keys at the edges of encoding/json, $keys keys"
"$gen" --keys "$keys" --nodes 3 --node "$node" --owner "$owner" --now "$now" --before "$before" --bound "$bound" \
  --seed "$seed" --edge-pct "$edges" --out "$tmp/state.jsonl" 2>"$tmp/gen.summary"
"$go_baseline" -state "$tmp/state.jsonl" -node "$node" -owner "$owner" -now "$now" -before "$before" -bound "$bound" \
  -decisions "$tmp/go.tsv" -min-time 0s -max-reps 1 >/dev/null
[ "$(wc -l <"$tmp/go.tsv")" -eq "$keys" ] || { echo "not ok - the Go baseline decided $(wc -l <"$tmp/go.tsv") keys of $keys"; exit 1; }
# The state must hold what it is for: edge values and every kind of action.
grep -q $'\tend\t' "$tmp/go.tsv" && grep -q $'\tdelete\t' "$tmp/go.tsv" ||
  { echo "not ok - the state holds no end or no delete (seed $seed)"; exit 1; }

fail=0 n=0
for run in "plan 1" "plan 2" "capi-lines 1" "capi-lines 2"; do
  set -- $run
  n=$((n + 1))
  if ! "$sweep" --contender "$1" --threads "$2" --state "$tmp/state.jsonl" --node "$node" --owner "$owner" \
       --now "$now" --before "$before" --bound "$bound" --decisions "$tmp/$1-$2.tsv" --min-time 0 --max-reps 1 \
       >/dev/null 2>"$tmp/$1-$2.err"; then
    echo "not ok $n - $1 on $2 thread(s) failed: $(tail -3 "$tmp/$1-$2.err")"
    fail=1
  elif cmp -s "$tmp/go.tsv" "$tmp/$1-$2.tsv"; then
    echo "ok $n - $1 on $2 thread(s) decides all $keys keys as Go's encoding/json and the seed's rules do"
  else
    echo "not ok $n - $1 on $2 thread(s) decides otherwise than Go (seed $seed, edges $edges%; < Go, > $1):"
    diff "$tmp/go.tsv" "$tmp/$1-$2.tsv" | head -20 | sed 's/^/# /'
    fail=1
  fi
done
echo "1..$n"
exit "$fail"
