#!/usr/bin/env bash
# The Node package on a real etcd: one member started here on 127.0.0.1 (free ports, a
# temporary data directory), then etcd_check.js: openStore of an etcd:// URL, a lock
# acquired, judged and released there, and bad etcd:// URLs answered with LJ_EINVAL.
# Skips (fails under CI=true) without etcd.
set -u
src=${LEASEJUDGE_SOURCE_DIR:?}
. "$src/tests/skip.sh"
pkg=${LEASEJUDGE_NODE_PACKAGE:-}
[ -n "$pkg" ] && [ -f "$pkg/leasejudge.node" ] || skip_or_fail "the Node package is not built"
. "$src/tests/etcd_server.sh"
need_etcd
command -v curl >/dev/null || skip_or_fail "curl is not installed"

work=$(mktemp -d)
cleanup() {
  stop_etcd
  rm -rf "$work"
}
trap cleanup EXIT
start_etcd "$work" || exit 1
"${LEASEJUDGE_NODE:-node}" "$(dirname "$0")/etcd_check.js" "$ETCD_ENDPOINT"
