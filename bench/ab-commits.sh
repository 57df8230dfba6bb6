#!/usr/bin/env bash
# bench/ab-commits.sh: the plan of two commits compared in one process. Builds
# libleasejudge.so of each commit in a scratch worktree of its own (only the shared
# library, RelWithDebInfo as the default preset builds it), generates a state with this
# build's generator and runs this build's leasejudge-bench-ab on it, A the first commit's
# library and B the second's: B/A over the run, each round's and their median (below 1.0:
# B plans faster). Exits 1 when the two decide any key differently.
#
#   bench/ab-commits.sh [--build DIR] [--libs DIR] [--keys N] [--rounds N] [--chunk K]
#                       [--build-only] REV_A REV_B
#
# --build     the tree whose leasejudge-bench-ab and leasejudge-bench-gen run (default:
#             build/ beside this script's checkout)
# --libs      where each commit's library is kept, as <full commit id>.so; a library
#             already there is not built again (default: a scratch directory removed at
#             the end)
# --keys      the state's size (default 1000000); the fixed inputs are bench/run's
# --rounds    leasejudge-bench-ab's rounds (default 5), --chunk its keys a turn
# --build-only  build the two libraries into --libs and stop: building and timing can
#             then run apart (for instance each under a lock of its own on a shared host)
#
# The worktrees are made from this checkout's repository and removed when the script
# ends; the builds take CMAKE_CXX_COMPILER_LAUNCHER and the like from the environment
# (ccache). Commits are built, not the working tree; their lj_step_plan_batch must take
# this build's options struct (bench/plan_options.hpp).
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
die() {
  echo "bench/ab-commits.sh: $*" >&2
  exit 2
}

src=$(cd "$(dirname "$0")/.." && pwd)
build=$src/build
libs=
keys=1000000
rounds=5
chunk=5000
build_only=0
revs=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?}; shift 2 ;;
    --libs) libs=${2:?}; shift 2 ;;
    --keys) keys=${2:?}; shift 2 ;;
    --rounds) rounds=${2:?}; shift 2 ;;
    --chunk) chunk=${2:?}; shift 2 ;;
    --build-only) build_only=1; shift ;;
    -h | --help) usage ;;
    -*) die "unknown option $1" ;;
    *) revs+=("$1"); shift ;;
  esac
done
[ ${#revs[@]} = 2 ] || die "two commits are needed (REV_A REV_B), not ${#revs[@]}"
for n in "$keys" "$rounds" "$chunk"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || die "--keys, --rounds and --chunk take numbers, not '$n'"
done
ids=()
for rev in "${revs[@]}"; do
  id=$(git -C "$src" rev-parse --verify --quiet "$rev^{commit}") || die "no commit $rev in $src"
  ids+=("$id")
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/leasejudge-ab.XXXXXX")
worktrees=()
cleanup() {
  for wt in "${worktrees[@]}"; do git -C "$src" worktree remove --force "$wt" >/dev/null 2>&1 || true; done
  rm -rf "$scratch"
}
trap cleanup EXIT
if [ -z "$libs" ]; then
  libs=$scratch/libs
fi
mkdir -p "$libs"
libs=$(cd "$libs" && pwd)

# The shared library of a commit, built where nothing of this checkout's build is touched.
build_lib() {
  local id=$1 wt=$scratch/wt-$1
  [ -s "$libs/$id.so" ] && return
  echo "building libleasejudge.so of $(git -C "$src" log -1 --format='%h %s' "$id" | cut -c1-72)" >&2
  git -C "$src" worktree add --detach --quiet "$wt" "$id"
  worktrees+=("$wt")
  # Only the library: the options that would build more are off where a commit has them.
  cmake -S "$wt" -B "$wt/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLEASEJUDGE_TESTS=OFF -DLEASEJUDGE_BENCH=OFF \
    -DLEASEJUDGE_GO=OFF -DLEASEJUDGE_BASH=OFF -DLEASEJUDGE_NODE=OFF -DLEASEJUDGE_FUZZ=OFF --no-warn-unused-cli \
    >"$scratch/configure-$id.log" 2>&1 || { cat "$scratch/configure-$id.log" >&2; die "configuring $id failed"; }
  cmake --build "$wt/build" --target leasejudge_shared -j "$(nproc)" >"$scratch/build-$id.log" 2>&1 \
    || { tail -30 "$scratch/build-$id.log" >&2; die "building $id failed"; }
  cp -L "$wt/build/libleasejudge.so" "$libs/$id.so.tmp"
  mv "$libs/$id.so.tmp" "$libs/$id.so"
  git -C "$src" worktree remove --force "$wt"
}
for id in "${ids[@]}"; do build_lib "$id"; done
if [ "$build_only" = 1 ]; then
  echo "built: $libs/${ids[0]}.so $libs/${ids[1]}.so" >&2
  exit 0
fi

ab=$build/bench/leasejudge-bench-ab
gen=$build/bench/leasejudge-bench-gen
for p in "$ab" "$gen"; do
  [ -x "$p" ] || die "$p is not built (cmake --build $build --target leasejudge_bench_ab leasejudge_bench_gen)"
done
# bench/run's fixed inputs: this node, this process's owner token, now, its start, the bound.
rules=(--node build-eu-1 --owner 0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6.4242.lxb2k3a0 --now 2024-06-01T12:00:00Z
  --before 2024-06-01T11:50:00Z --bound 3600)
state=$scratch/steps-$keys.jsonl
"$gen" --keys "$keys" --nodes 4 --seed 20240601 "${rules[@]}" --out "$state" 2>/dev/null
echo "A = ${revs[0]} ($(git -C "$src" log -1 --format=%h "${ids[0]}")), B = ${revs[1]} ($(git -C "$src" log -1 --format=%h "${ids[1]}")), $keys keys"
"$ab" --a "$libs/${ids[0]}.so" --b "$libs/${ids[1]}.so" --state "$state" "${rules[@]}" --rounds "$rounds" --chunk "$chunk"
