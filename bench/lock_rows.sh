#!/usr/bin/env bash
# bench/lock_rows.sh: the lock-judge rows of the bindings, on the body mix
# leasejudge-bench-lock writes (--write-mix), each binding in a process of its own:
#
#   bench/lock_rows.sh --build DIR --mix FILE [--min-time S] [--go-lockjudge PROGRAM]
#
#   bash   the builtin, `leasejudge lock judge --now T FILE` per judgment (a body file
#          each, the shell's pid where the mix says @SELF@), gcloud not on PATH: the
#          two execution bodies are judged "unknown" (no describer can be given);
#   go     the Go binding's JudgeLock (bench/go-lockjudge), an in-process describer;
#   node   the Node package's judgeHeldLock (bench/lock_node.js), an in-process
#          describer; and, where npm can install the pinned TypeScript and zod
#          (tests/lock_seed.sh), the seed's own module against the package on the
#          process-holder mix, in alternating rounds (per CPU second, as
#          leasejudge-bench-lock counts; bash and Go count wall time);
#   python the Python package's judge_lock (bench/lock_python.py, bindings/python over
#          the build's libleasejudge.so), an in-process describer, per CPU second.
# Prints one line per row: name<TAB>judgments/s<TAB>what; a row that cannot run here
# prints name<TAB>-<TAB>why. Exits non-zero only when a row that ran failed.
set -uo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$src/build
mix=""
min_time=1
go_lockjudge=""
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?}; shift 2 ;;
    --mix) mix=${2:?}; shift 2 ;;
    --min-time) min_time=${2:?}; shift 2 ;;
    --go-lockjudge) go_lockjudge=${2:?}; shift 2 ;;
    *) echo "bench/lock_rows.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[ -r "$mix" ] || { echo "bench/lock_rows.sh: --mix FILE is needed" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
row_failed() { printf '%s\t-\tFAILED: %s\n' "$1" "$2"; failures=$((failures + 1)); }

# --- bash -------------------------------------------------------------------------------
builtin=$build/bindings/bash/leasejudge.so
if [ -f "$builtin" ]; then
  out=$(bash -c '
    enable -f "$1" leasejudge || exit 2
    mix=$2 dir=$3 min=$4  # microseconds
    files=() want=()
    while IFS=$'"'"'\t'"'"' read -r name breaks body; do
      f=$dir/${#files[@]}.json
      printf "%s" "${body//@SELF@/$$}" >"$f"
      files+=("$f")
      case $name in execution/*) want+=(3) ;; *) want+=($((breaks ? 0 : 1))) ;; esac
    done <"$mix"
    mkdir -p "$dir/empty"
    PATH=$dir/empty  # no gcloud: no process is started for an execution body
    for i in "${!files[@]}"; do
      leasejudge lock judge --now 2024-06-01T12:00:00Z "${files[$i]}" >/dev/null 2>&1
      rc=$?
      [ "$rc" = "${want[$i]}" ] || { echo "body $i exits $rc, not ${want[$i]}"; exit 1; }
    done
    n=0 start=$EPOCHREALTIME
    while :; do
      for f in "${files[@]}"; do leasejudge lock judge --now 2024-06-01T12:00:00Z "$f" >/dev/null 2>&1; done
      n=$((n + ${#files[@]}))
      now=$EPOCHREALTIME
      elapsed=$(( ${now/./} - ${start/./} ))  # microseconds
      (( elapsed >= min )) && break
    done
    echo "$n $elapsed"
  ' lock-rows "$builtin" "$mix" "$work" "$(awk -v s="$min_time" 'BEGIN { printf "%d", s * 1e6 }')" 2>&1)
  if [[ $out =~ ^([0-9]+)\ ([0-9]+)$ ]]; then
    awk -v n="${BASH_REMATCH[1]}" -v us="${BASH_REMATCH[2]}" \
      'BEGIN { printf "bash\t%.0f\tthe builtin, one body file per judgment; execution bodies unknown (no gcloud)\n", n / (us / 1e6) }'
  else
    row_failed bash "$out"
  fi
else
  printf 'bash\t-\tthe builtin is not built\n'
fi

# --- go -----------------------------------------------------------------------------------
if [ -n "$go_lockjudge" ] && [ -x "$go_lockjudge" ]; then
  if out=$("$go_lockjudge" -mix "$mix" -min-time "$min_time" 2>&1); then
    printf 'go\t%s\tJudgeLock, an in-process describer\n' "$(sed -n 's/.*"judgments_per_s":\([0-9]*\).*/\1/p' <<<"$out")"
  else
    row_failed go "$out"
  fi
else
  printf 'go\t-\tbench/go-lockjudge is not built\n'
fi

# --- node -----------------------------------------------------------------------------------
pkg=$build/bindings/node
if [ -f "$pkg/leasejudge.node" ] && command -v node >/dev/null 2>&1; then
  # The seed's module, where npm can install what it needs: else the package alone.
  seed_js=""
  if (
    skip_or_fail() { echo "$*" >"$work/seed.why"; exit 77; }
    LEASEJUDGE_SOURCE_DIR=$src LEASEJUDGE_BINARY_DIR=$build
    . "$src/tests/lock_seed.sh"
    lock_seed_modules
    lock_seed_transpile "$work/seed.js"
    echo "$NODE_MODULES" >"$work/modules"
  ) >"$work/seed.log" 2>&1; then
    seed_js=$work/seed.js
  fi
  if out=$(NODE_PATH=$(cat "$work/modules" 2>/dev/null) node "$src/bench/lock_node.js" "$pkg" "$mix" "$min_time" \
             $seed_js 2>&1); then
    field() { sed -n "s/.*\"row\":\"$1\".*\"$2\":\([0-9.]*\).*/\1/p" <<<"$out"; }
    printf 'node\t%s\tjudgeHeldLock, an in-process describer\n' "$(field node judgments_per_s)"
    if [ -n "$seed_js" ]; then
      printf 'node-seed\t%s\tthe seed'"'"'s judgeHeldLock (TypeScript, zod), process holders\n' \
        "$(field node-vs-seed seed_judgments_per_s)"
      printf 'node-package\t%s\tthe package'"'"'s judgeHeldLock, process holders; %s x the seed (median of %s rounds, %s to %s)\n' \
        "$(field node-vs-seed package_judgments_per_s)" "$(field node-vs-seed ratio_median)" \
        "$(field node-vs-seed rounds)" "$(field node-vs-seed ratio_min)" "$(field node-vs-seed ratio_max)"
    else
      printf 'node-seed\t-\tthe seed could not be set up: %s\n' "$(cat "$work/seed.why" 2>/dev/null || tail -1 "$work/seed.log")"
    fi
  else
    row_failed node "$out"
  fi
else
  printf 'node\t-\tthe Node package is not built\n'
fi
# --- python ---------------------------------------------------------------------------------
if [ -f "$build/libleasejudge.so" ] && command -v python3 >/dev/null 2>&1; then
  if out=$(PYTHONPATH=$src/bindings/python/src LEASEJUDGE_LIBRARY=$build/libleasejudge.so \
             python3 "$src/bench/lock_python.py" "$mix" "$min_time" 2>&1); then
    printf 'python\t%s\tjudge_lock of the Python package (ctypes), an in-process describer\n' \
      "$(sed -n 's/.*"judgments_per_s": *\([0-9]*\).*/\1/p' <<<"$out")"
  else
    row_failed python "$out"
  fi
else
  printf 'python\t-\tlibleasejudge.so is not built or python3 is missing\n'
fi
exit $((failures > 0))
