#!/usr/bin/env bash
# Fidelity with the lock-lease seed itself: its own TypeScript (turned into
# JavaScript by TypeScript's transpiler, with zod from npm) judges thousands of
# generated lock bodies at fixed instants from fixed machines with a scripted
# describer, reads generated gcloud answers, and writes new and renewed bodies;
# leasejudge (lock_verdict_test's seed driver) must give the same kind, manual removal,
# why (byte for byte), describer use, execution state and body bytes.
#
# The cases come from tests/lock_seed_cases.js; node, npm with the registry (the
# packages tests/npm/package-lock.json pins) and the seed file come through
# tests/lock_seed.sh: skipped with a message when any is missing (a failure under
# CI=true, where every test must run). LJ_LOCK_SEED_RANDOM picks the generator's
# seed (default fixed, so a failure can be replayed).
set -u

. "$(dirname "$0")/skip.sh"
skip() { skip_or_fail "$@"; }

BIN=${LEASEJUDGE_BINARY_DIR:-}
[ -n "$BIN" ] || skip "LEASEJUDGE_BINARY_DIR is not set"
DRIVER=$BIN/tests/lock_verdict_test
[ -x "$DRIVER" ] || skip "$DRIVER is not built"

. "$(dirname "$0")/lock_seed.sh"
lock_seed_modules

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
lock_seed_transpile "$WORK/seed.js"

export TZ=UTC
NODE_PATH=$NODE_MODULES node "$(dirname "$0")/lock_seed_cases.js" "$WORK/seed.js" > "$WORK/cases.jsonl" 2> "$WORK/cases.log" ||
  { echo "not ok - the seed could not answer the cases"; exit 1; }
cat "$WORK/cases.log"
echo "# $(wc -l < "$WORK/cases.jsonl") cases from the seed (zod $(node -p "require('$NODE_MODULES/zod/package.json').version"))"

LJ_LOCK_SEED_CASES=$WORK/cases.jsonl "$DRIVER" --no-skip --test-case='seed driver*' 2>&1 | tail -120
status=${PIPESTATUS[0]}
if [ "$status" -eq 0 ]; then
  echo "ok - leasejudge answers every case as the seed does"
  echo "1 passed, 0 failed"
else
  echo "not ok - leasejudge and the seed disagree (see above)"
  echo "0 passed, 1 failed"
fi
exit "$status"
