# Sourced by the script tests that need a real etcd (after tests/skip.sh):
#   need_etcd            skips (fails under CI=true) where etcd is absent;
#   start_etcd DIR       one etcd member on 127.0.0.1, free client and peer ports, its data
#                        and log in DIR; sets ETCD_PID and ETCD_ENDPOINT (host:port);
#   stop_etcd            stops it (also safe when none runs).
# etcd is no program of ours: it runs without a sanitizer runtime preloaded.
need_etcd() {
  ETCD=${LEASEJUDGE_ETCD:-$(command -v etcd || true)}
  [ -n "$ETCD" ] && [ -x "$ETCD" ] || skip_or_fail "etcd is not installed (Debian: etcd-server)"
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
start_etcd() {
  local dir=$1 client peer
  mkdir -p "$dir"
  client=$(free_port)
  peer=$(free_port)
  env -u LD_PRELOAD "$ETCD" --name m0 --data-dir "$dir/m0" \
    --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "m0=http://127.0.0.1:$peer" --initial-cluster-state new \
    --initial-cluster-token leasejudge-test --logger zap --log-outputs stderr >"$dir/etcd.log" 2>&1 &
  ETCD_PID=$!
  ETCD_ENDPOINT=127.0.0.1:$client
  for _ in $(seq 300); do
    env -u LD_PRELOAD curl -s -m 1 -X POST -d '{"key":"cHJvYmU="}' "http://$ETCD_ENDPOINT/v3/kv/range" 2>/dev/null |
      grep -q '"header"' && return 0
    sleep 0.1
  done
  echo "not ok - etcd did not start"
  sed 's/^/# /' "$dir/etcd.log" | tail -20
  return 1
}
stop_etcd() {
  [ -n "${ETCD_PID:-}" ] || return 0
  kill "$ETCD_PID" 2>/dev/null
  wait "$ETCD_PID" 2>/dev/null
  ETCD_PID=""
}
