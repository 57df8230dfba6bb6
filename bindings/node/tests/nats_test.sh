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
server=${LEASEJUDGE_NATS_SERVER:-$(PATH=$PATH:/usr/sbin:/usr/local/sbin command -v nats-server)}
[ -n "$server" ] && [ -x "$server" ] || skip_or_fail "nats-server is not installed"

work=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
# The server is no program of ours: no sanitizer runtime for it.
env -u LD_PRELOAD "$server" -a 127.0.0.1 -p -1 -js -sd "$work/store" -l "$work/server.log" &
pid=$!
port=""
for _ in $(seq 150); do
  port=$(sed -n 's/.*Listening for client connections on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/server.log" 2>/dev/null)
  [ -n "$port" ] && grep -q "Server is ready" "$work/server.log" && break
  sleep 0.1
done
if [ -z "$port" ]; then
  echo "not ok - nats-server did not start"
  sed 's/^/# /' "$work/server.log" 2>/dev/null
  exit 1
fi
"${LEASEJUDGE_NODE:-node}" "$(dirname "$0")/nats_check.js" "nats://127.0.0.1:$port"
