#!/usr/bin/env bash
# The lock and sweep protocols model-checked with SPIN (tests/model/README.md). Each
# model is searched exhaustively within its bounds and must find no error, its search
# complete; each mutant must find a counterexample, whose trail is replayed. Everything
# happens in a temporary directory, two verifiers at a time (LEASEJUDGE_MODEL_JOBS).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=../skip.sh
. "$here/../skip.sh"
command -v spin >/dev/null 2>&1 || skip_or_fail "spin is not installed (Debian's spin)"
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || skip_or_fail "no C compiler ($cc) for SPIN's verifiers"
jobs_max=${LEASEJUDGE_MODEL_JOBS:-2}

work=$(mktemp -d "${TMPDIR:-/tmp}/leasejudge-model.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
started=$(date +%s%N)
# seconds A [B]: the seconds from A to B (now), both date +%s%N.
seconds() {
  local ns=$((${2:-$(date +%s%N)} - $1))
  printf '%d.%d' $((ns / 1000000000)) $((ns / 100000000 % 10))
}

# The bounds each model is checked within (its #defines), said with each result.
lock_defines=(-DCRASHES=3 -DLOST=3 -DLEASE=2 -DSKEW_ROOM=0)
lock_bounds="3 holders, 3 crashes, 3 lost answers, a lease of 2 ticks, a judge at the skew margin"
sweep_defines=(-DCRASHES=3 -DROUNDS=2 -DRENEWALS=1)
sweep_bounds="2 step keys, 3 processes, 3 crashes, 1 renewal a step, 2 sweepers of 2 rounds, any write lost"

# verifier DIR MODEL CFLAGS DEFINES...: SPIN's verifier for MODEL with DEFINES, built in
# DIR (its messages in DIR/build.log).
verifier() {
  local dir=$1 model=$2 cflags=$3
  shift 3
  cp "$here/$model" "$dir/"
  # shellcheck disable=SC2086
  (cd "$dir" && spin -a "$@" "$model" && "$cc" $cflags -w -o pan pan.c) >"$dir/build.log" 2>&1
}

# A check's result: DIR/result holds its TAP line and what follows it, DIR/ok whether
# it passed.
pass() { echo "ok - $2" >"$1/result" && touch "$1/ok"; }
fail() { echo "not ok - $2" >"$1/result"; }
detail() { sed 's/^/#   /' >>"$1/result"; }

# exhaustive DIR MODEL BOUNDS DEFINES...: MODEL searched to the end finds no error. The
# verifier is built with -Og: its build and search take less CPU together than with
# -O0, -O1 or -O2 (measured: the build dominates at these sizes).
exhaustive() {
  local dir=$1 model=$2 bounds=$3 name
  shift 3
  name=$(basename "$dir")
  local t0 depth=10000
  t0=$(date +%s%N)
  if ! verifier "$dir" "$model" "-Og -DSAFETY -DMEMLIM=2048" "$@"; then
    fail "$dir" "$name: the verifier did not build"
    detail "$dir" <"$dir/build.log"
    return
  fi
  local t1
  t1=$(date +%s%N)
  while true; do
    (cd "$dir" && ./pan -m$depth -w21 >out 2>&1) || true
    grep -q "max search depth too small" "$dir/out" || break
    depth=$((depth * 10))
  done
  local errors stored reached
  errors=$(sed -n 's/.*errors: \([0-9]*\)$/\1/p' "$dir/out")
  stored=$(sed -n 's/^ *\([0-9]*\) states, stored.*/\1/p' "$dir/out")
  reached=$(sed -n 's/.*depth reached \([0-9]*\),.*/\1/p' "$dir/out")
  if [ "$errors" = 0 ] && [ -n "$stored" ] && ! grep -q "Search not completed\|out of memory\|MEMLIM" "$dir/out"; then
    pass "$dir" "$name: $model $*: complete, errors: 0, $stored states stored, depth $reached (limit $depth); searched in $(seconds "$t1") s, built in $(seconds "$t0" "$t1") s ($bounds)"
  else
    fail "$dir" "$name: $model $*: errors: ${errors:-?}, or the search did not complete ($bounds)"
    detail "$dir" <"$dir/out"
    if [ -f "$dir/$model.trail" ]; then (cd "$dir" && spin -t "$@" "$model" 2>&1 | head -60) | detail "$dir"; fi
  fi
}

# counterexample DIR MODEL WHAT DEFINES...: MODEL finds a counterexample (WHAT): the
# shortest, from a breadth-first search, its trail replayed as the model tells each
# step, up to the assertion that failed, named by the property on its line.
counterexample() {
  local dir=$1 model=$2 what=$3 name
  shift 3
  name=$(basename "$dir")
  if ! verifier "$dir" "$model" "-O0 -DSAFETY -DBFS -DMEMLIM=1024" "$@"; then
    fail "$dir" "$name: the verifier did not build"
    detail "$dir" <"$dir/build.log"
    return
  fi
  (cd "$dir" && ./pan -m10000 -w20 >out 2>&1) || true
  local errors
  errors=$(sed -n 's/.*errors: \([0-9]*\)$/\1/p' "$dir/out")
  if [ "${errors:-0}" -lt 1 ] || [ ! -f "$dir/$model.trail" ]; then
    fail "$dir" "$name: $model $*: no counterexample ($what): errors: ${errors:-?}"
    detail "$dir" <"$dir/out"
    return
  fi
  (cd "$dir" && spin -t "$@" "$model" >replay 2>&1) || true
  local line property steps
  line=$(sed -n "s/^spin: $model:\([0-9]*\), Error: assertion violated.*/\1/p" "$dir/replay" | head -1)
  property=$(sed -n "${line:-0}p" "$dir/$model" | sed -n 's/.*\/\* *\([a-z]*\) *\*\/.*/\1/p')
  steps=$(sed -n 's/^spin: trail ends after \([0-9]*\) steps/\1/p' "$dir/replay")
  pass "$dir" "$name: $model $*: a counterexample ($what): the ${property:-?} assertion (line ${line:-?}) fails after ${steps:-?} steps:"
  # The model's own account of each step, up to the first assertion that failed.
  sed -n '/^spin: .*Error: assertion violated/q; s/^ *//p' "$dir/replay" | detail "$dir"
}

# The checks, two at a time; their results printed in this order.
checks=()
check() {
  local dir=$work/$2
  mkdir -p "$dir"
  checks+=("$dir")
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  "$1" "$dir" "${@:3}" &
}

check exhaustive lock-etcd-lease lock.pml "$lock_bounds" "${lock_defines[@]}" -DETCD
check exhaustive sweep sweep.pml "$sweep_bounds" "${sweep_defines[@]}"
check exhaustive lock-body-lease lock.pml "$lock_bounds" "${lock_defines[@]}"
own_start="mutant: the heartbeat counts its first lease from its own start"
check counterexample lock-body-lease-own-start lock.pml "$own_start" "${lock_defines[@]}" -DMUTANT_HEARTBEAT_OWN_START
check counterexample lock-etcd-lease-own-start lock.pml "$own_start" "${lock_defines[@]}" -DETCD \
  -DMUTANT_HEARTBEAT_OWN_START
blind_break="mutant: the break without its revision compare"
check counterexample lock-body-lease-break-blind lock.pml "$blind_break" "${lock_defines[@]}" -DMUTANT_BREAK_BLIND
check counterexample lock-etcd-lease-break-blind lock.pml "$blind_break" "${lock_defines[@]}" -DETCD \
  -DMUTANT_BREAK_BLIND
# On etcd a renewal without its compare still needs its holder's store lease, which
# ended with the key: that mutant finds nothing there (README.md).
check counterexample lock-body-lease-renew-blind lock.pml "mutant: the renewal without its revision compare" \
  "${lock_defines[@]}" -DMUTANT_RENEW_BLIND
check counterexample sweep-write-blind sweep.pml "mutant: the sweep's end or delete without its revision compare" \
  "${sweep_defines[@]}" -DMUTANT_SWEEP_BLIND
wait

passed=0 failed=0
for dir in "${checks[@]}"; do
  if [ -f "$dir/result" ]; then cat "$dir/result"; else echo "not ok - $(basename "$dir"): no result"; fi
  if [ -f "$dir/ok" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
done
echo "1..${#checks[@]}"
echo "# $passed passed, $failed failed, in $(seconds "$started") s"
[ "$failed" -eq 0 ]
