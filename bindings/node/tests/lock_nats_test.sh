#!/usr/bin/env bash
# The Node package holding a lock on the NATS store: a nats-server with JetStream
# started here on 127.0.0.1 (a random port, a temporary store directory), then
# lock_nats_check.js, which stops and continues it (SIGSTOP, SIGCONT) by its pid.
# Skips (fails under CI=true) without nats-server.
set -u
src=${LEASEJUDGE_SOURCE_DIR:?}
. "$src/tests/skip.sh"
pkg=${LEASEJUDGE_NODE_PACKAGE:-}
[ -n "$pkg" ] && [ -f "$pkg/leasejudge.node" ] || skip_or_fail "the Node package is not built"
. "$src/tests/nats_server.sh"
need_nats_server

work=$(mktemp -d)
cleanup() {
  [ -n "${NATS_PID:-}" ] && kill -CONT "$NATS_PID" 2>/dev/null
  stop_nats_server
  rm -rf "$work"
}
trap cleanup EXIT
start_nats_server "$work" || exit 1
"${LEASEJUDGE_NODE:-node}" "$(dirname "$0")/lock_nats_check.js" "nats://127.0.0.1:$NATS_PORT" "$NATS_PID"
