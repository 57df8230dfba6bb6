#!/usr/bin/env bash
# The Node package on the NATS store: a nats-server with JetStream started here on
# 127.0.0.1 (a random port, a temporary store directory), then nats_check.js: the
# store's operations and lost races, and the lock's life on it. Skips (fails under
# CI=true) without nats-server.
set -u
src=${LEASEJUDGE_SOURCE_DIR:?}
. "$src/tests/skip.sh"
pkg=${LEASEJUDGE_NODE_PACKAGE:-}
[ -n "$pkg" ] && [ -f "$pkg/leasejudge.node" ] || skip_or_fail "the Node package is not built"
. "$src/tests/nats_server.sh"
need_nats_server

work=$(mktemp -d)
cleanup() {
  stop_nats_server
  rm -rf "$work"
}
trap cleanup EXIT
start_nats_server "$work" || exit 1
"${LEASEJUDGE_NODE:-node}" "$(dirname "$0")/nats_check.js" "nats://127.0.0.1:$NATS_PORT"
