# Sourced first by the script tests that run against a nats-server (cli_test.sh,
# cli_verbs_test.sh, python_wheel_test.sh), as
#   . "${LEASEJUDGE_SOURCE_DIR:?}/tests/nats_script.sh"
# It sets $src and $build (the source and build trees), skips (or, under CI, fails)
# where no nats-server is installed, makes the work directory $w, and on exit kills the
# processes the test put in $pids, stops the server (tests/nats_server.sh) and removes
# $w; then the TAP lines (tests/tap.sh).
set -u
src=${LEASEJUDGE_SOURCE_DIR:?}
build=${LEASEJUDGE_BINARY_DIR:?}
. "$src/tests/skip.sh"
. "$src/tests/nats_server.sh"
need_nats_server

w=$(mktemp -d)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  stop_nats_server
  rm -rf "$w"
}
trap cleanup EXIT
. "$src/tests/tap.sh"
