#!/usr/bin/env bash
# The Node package against the lock-lease seed's own TypeScript module (transpiled
# with TypeScript, zod from npm: tests/lock_seed.sh), on the seed's generated cases
# (tests/lock_seed_cases.js), answered by both in one node process
# (seed_compare.js). A test that cannot run skips (fails under CI=true).
set -u
src=${LEASEJUDGE_SOURCE_DIR:?}
. "$src/tests/skip.sh"
pkg=${LEASEJUDGE_NODE_PACKAGE:-}
[ -n "$pkg" ] && [ -f "$pkg/leasejudge.node" ] || skip_or_fail "the Node package is not built"
. "$src/tests/lock_seed.sh"
lock_seed_modules

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lock_seed_transpile "$work/seed.js"
export TZ=UTC
NODE_PATH=$NODE_MODULES "${LEASEJUDGE_NODE:-node}" "$(dirname "$0")/seed_compare.js" "$work/seed.js" "$pkg" \
  "$src/tests/lock_seed_cases.js"
