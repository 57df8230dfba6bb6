#!/usr/bin/env bash
# The builtin on a real etcd (one member started here on 127.0.0.1, free ports, a
# temporary data directory): a lock over an etcd:// URL acquired for this shell,
# judged, released; bad etcd:// URLs are usage errors (exit 2) saying the URL's form.
. "$(dirname "${BASH_SOURCE[0]}")/../../../tests/fixtures/leasedir/tap.sh"
need_builtin
skip_or_fail() { skip_all "$@"; }
. "$LEASEJUDGE_SOURCE_DIR/tests/etcd_server.sh"
need_etcd
command -v curl >/dev/null || skip_all "curl is not installed"
trap 'stop_etcd; rm -rf "$WORK"' EXIT
start_etcd "$WORK/etcd" || exit 1
url="etcd://$ETCD_ENDPOINT/bash-doors"

leasejudge lock acquire --store "$url" deploy --json >"$WORK/acq" 2>"$WORK/err"
same "lock acquire on etcd: exit 0" 0 $?
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$WORK/acq" 2>/dev/null)
# Ours: this shell is alive and its lease has ten minutes to run.
leasejudge lock judge --store "$url" deploy --json >"$WORK/judge" 2>"$WORK/err"
same "lock judge on etcd: held (exit 1), lease_runs" "1 held lease_runs False" "$? $(python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))
print(v["kind"], v["reason"], v["manualRemoval"])' "$WORK/judge" 2>&1)"
leasejudge lock release --store "$url" deploy --id "$id" >"$WORK/out" 2>"$WORK/err"
same "lock release with its id: exit 0" 0 $?
leasejudge lock release --store "$url" deploy --id "$id" >"$WORK/out" 2>"$WORK/err"
same "released again: no lock (exit 1)" 1 $?

for bad in "etcd://$ETCD_ENDPOINT" "etcd://127.0.0.1:99999/p" "etcd:///p"; do
  leasejudge lock judge --store "$bad" deploy >"$WORK/out" 2>"$WORK/err"
  same "$bad: exit 2, the URL's form named" "2 yes" \
    "$? $(grep -q 'is not etcd://\[user:pass@\]host:port\[,host:port...\]/PREFIX' "$WORK/err" && echo yes)"
done
tap_done
