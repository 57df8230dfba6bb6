#!/usr/bin/env bash
# The conformance table through the Go package: its test TestConformanceTable
# (bindings/go/conformance_table_test.go), run by the go tool the build uses
# (build/bindings/go/go-env), writes the answers; they are printed here.
set -u
table=$1
[ -x "${LEASEJUDGE_GO_ENV:-}" ] || [ -f "${LEASEJUDGE_GO_ENV:-}" ] || {
  echo "the Go binding is not configured (${LEASEJUDGE_GO_ENV:-})" >&2; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
LEASEJUDGE_CONFORMANCE_TABLE=$table LEASEJUDGE_CONFORMANCE_OUT=$out \
  bash "$LEASEJUDGE_GO_ENV" test -count=1 -run '^TestConformanceTable$' . >&2 || exit 1
cat "$out"
