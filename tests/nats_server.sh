# Sourced by the script tests that need a real nats-server (after tests/skip.sh):
#   need_nats_server             skips (fails under CI=true) where nats-server is absent;
#   start_nats_server DIR [ARGS] one nats-server with JetStream on 127.0.0.1, a free port,
#                                its store and log in DIR; sets NATS_PID and NATS_PORT.
#   stop_nats_server             stops it (also safe when none runs).
# The server is no program of ours: it runs without a sanitizer runtime preloaded.
need_nats_server() {
  NATS_SERVER=${LEASEJUDGE_NATS_SERVER:-$(PATH=$PATH:/usr/sbin:/usr/local/sbin command -v nats-server)}
  [ -n "$NATS_SERVER" ] && [ -x "$NATS_SERVER" ] || skip_or_fail "nats-server is not installed"
}
start_nats_server() {
  local dir=$1
  shift
  mkdir -p "$dir"
  : >"$dir/server.log"
  env -u LD_PRELOAD "$NATS_SERVER" -a 127.0.0.1 -p "${NATS_PORT:--1}" -js -sd "$dir/store" -l "$dir/server.log" "$@" &
  NATS_PID=$!
  local port=""
  for _ in $(seq 150); do
    port=$(sed -n 's/.*Listening for client connections on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/server.log")
    [ -n "$port" ] && grep -q "Server is ready" "$dir/server.log" && break
    port=""
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "not ok - nats-server did not start"
    sed 's/^/# /' "$dir/server.log"
    return 1
  fi
  NATS_PORT=$port
}
stop_nats_server() {
  [ -n "${NATS_PID:-}" ] || return 0
  kill "$NATS_PID" 2>/dev/null
  wait "$NATS_PID" 2>/dev/null
  NATS_PID=""
}
