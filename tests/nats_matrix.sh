# The version matrix: runs one ctest test of the build again, with the nats-server
# LEASEJUDGE_NATS_SERVER, which must be version LEASEJUDGE_NATS_VERSION ("2.10.27", or
# "2.11+" for 2.11 or later) (unpacked by .ci/fetch-nats-server). Every NATS test
# finds its server through that variable.
# Usage: bash tests/nats_matrix.sh TEST
set -euo pipefail
. "$LEASEJUDGE_SOURCE_DIR/tests/skip.sh"
test_name=$1
[ -x "${LEASEJUDGE_NATS_SERVER:-}" ] ||
  skip_or_fail "nats-server $LEASEJUDGE_NATS_VERSION is not at ${LEASEJUDGE_NATS_SERVER:-} (bash .ci/fetch-nats-server)"
version=$("$LEASEJUDGE_NATS_SERVER" --version)
case "$LEASEJUDGE_NATS_VERSION" in
  *+)
    least=${LEASEJUDGE_NATS_VERSION%+}
    have=${version##* v}
    [ "$(printf '%s\n%s\n' "$least" "$have" | sort -V | head -1)" = "$least" ] ||
      { echo "not ok - $LEASEJUDGE_NATS_SERVER says \"$version\", older than $least"; exit 1; } ;;
  *)
    case "$version" in
      *"v$LEASEJUDGE_NATS_VERSION") ;;
      *) echo "not ok - $LEASEJUDGE_NATS_SERVER says \"$version\", not v$LEASEJUDGE_NATS_VERSION"; exit 1 ;;
    esac ;;
esac
echo "# $test_name against $version"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
ctest --test-dir "$LEASEJUDGE_BINARY_DIR" -R "^${test_name}\$" --output-on-failure --no-tests=error >"$out" 2>&1 || rc=$?
cat "$out"
[ "$rc" -eq 0 ] || exit "$rc"
# The inner run's skip is this test's skip, never a pass.
if grep -q "Skipped\|Not Run" "$out"; then exit 77; fi
