#!/usr/bin/env bash
# `live` over a lease directory of 1,000 leases: the bash builtin against the
# gstack-lease script, on the same directory in the same run, as a ratio.
#
#   bench/leasedir_live.sh [--build DIR] [--leases N] [--live N] [--runs N] [--out FILE]
#
# The leases: --live of them (default 100) held by live processes started here, the
# rest by pids no process has; none stale, so every run sees the same directory. The
# script runs once (it forks several processes per lease), the builtin --runs times
# (default 20; the mean is reported). --out appends a CSV line
# `contender,leases,live,seconds` per side. The goal is a ratio of at least 100.
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
root=$(dirname "$here")
build=${LEASEJUDGE_BINARY_DIR:-$root/build}
leases=1000 live=100 runs=20 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift ;;
    --leases) leases=$2; shift ;;
    --live) live=$2; shift ;;
    --runs) runs=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "leasedir_live.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
builtin=$build/bindings/bash/leasejudge.so
seed_file=${LEASEJUDGE_SEED_FILE:-$root/../shared/seeds/003_95b5e71f39d1178e.txt}
[ -f "$builtin" ] || { echo "leasedir_live.sh: no builtin at $builtin (build the leasejudge_bash target)" >&2; exit 2; }
[ -f "$seed_file" ] || { echo "leasedir_live.sh: the gstack-lease script is absent ($seed_file)" >&2; exit 2; }
enable -f "$builtin" leasejudge || exit 2

work=$(mktemp -d "${TMPDIR:-/tmp}/leasedir-bench.XXXXXX")
pids=()
cleanup() {
  [ ${#pids[@]} -gt 0 ] && kill -9 "${pids[@]}" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
tail -n +3 "$seed_file" >"$work/gstack-lease"
chmod +x "$work/gstack-lease"
git init -q "$work/repo"
dir=$work/repo/.git/gstack-leases
mkdir -p "$dir"
boot=$(cat /proc/sys/kernel/random/boot_id)
for ((i = 0; i < live; i++)); do
  sleep 100000 &
  p=$!
  disown "$p"
  pids+=("$p")
  st=$(cat "/proc/$p/stat")
  st=${st##*) }
  set -- $st
  printf 'linux %s %s\n' "$boot" "${20}" >"$dir/$p"
done
pid_max=$(cat /proc/sys/kernel/pid_max)
for ((i = live; i < leases; i++)); do
  printf 'linux %s %s\n' "$boot" "$((1000 + i))" >"$dir/$((pid_max + i))"  # beyond any pid: dead
done
cd "$work/repo" || exit 2

t0=$EPOCHREALTIME
"$work/gstack-lease" live --root "$work/repo" --exclude-ancestry-of $$ >"$work/script.out" 2>"$work/script.err"
t1=$EPOCHREALTIME
for ((r = 0; r < runs; r++)); do
  leasejudge lease live --exclude-ancestry-of $$ >"$work/builtin.out" 2>"$work/builtin.err"
done
t2=$EPOCHREALTIME
# The same answer from both, or the figure means nothing (ages aside: the script's run
# is long enough for them to move).
ageless() { sed 's/^\([^ ]*\) [0-9-]*m /\1 _m /' "$1"; }
if [ "$(ageless "$work/script.out")" != "$(ageless "$work/builtin.out")" ] ||
   ! cmp -s "$work/script.err" "$work/builtin.err"; then
  echo "leasedir_live.sh: the builtin and the script disagree:" >&2
  diff <(ageless "$work/script.out") <(ageless "$work/builtin.out") >&2
  exit 1
fi
script_us=$(( ${t1/./} - ${t0/./} ))
builtin_us=$(( (${t2/./} - ${t1/./}) / runs ))
ratio=$(( script_us / (builtin_us > 0 ? builtin_us : 1) ))
printf 'live over %d leases (%d live): script %d.%03d s, builtin %d.%03d ms (mean of %d), ratio %dx\n' \
  "$leases" "$live" $((script_us / 1000000)) $((script_us / 1000 % 1000)) $((builtin_us / 1000)) \
  $((builtin_us % 1000)) "$runs" "$ratio"
if [ -n "$out" ]; then
  [ -s "$out" ] || echo "contender,leases,live,seconds" >"$out"
  printf 'script,%d,%d,%d.%06d\n' "$leases" "$live" $((script_us / 1000000)) $((script_us % 1000000)) >>"$out"
  printf 'builtin,%d,%d,%d.%06d\n' "$leases" "$live" $((builtin_us / 1000000)) $((builtin_us % 1000000)) >>"$out"
fi
