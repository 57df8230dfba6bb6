#!/usr/bin/env bash
# The Go binding against an INSTALLED leasejudge: `cmake --install` into a prefix, then a
# Go program that imports the binding builds with that prefix's leasejudge.pc alone
# (no build tree on any path) and runs with the installed library.
set -euo pipefail
build=${LEASEJUDGE_BINARY_DIR:?}
src=${LEASEJUDGE_SOURCE_DIR:?}
go=${LEASEJUDGE_GO_EXECUTABLE:-go}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
libdir=$(dirname "$(find "$tmp/prefix" -name libleasejudge.so.0 | head -1)")
mkdir -p "$tmp/app"
cat >"$tmp/app/go.mod" <<MOD
module app

go 1.19

require leasejudge v0.0.0

replace leasejudge => $src/bindings/go
MOD
cat >"$tmp/app/main.go" <<'GO'
package main

import (
	"fmt"

	"leasejudge"
)

func main() {
	j, err := leasejudge.JudgeOwner(leasejudge.Owner, nil)
	fmt.Println(leasejudge.Version(), j.State, err)
}
GO
cd "$tmp/app"
export GOFLAGS=-mod=mod GOPROXY=off GO111MODULE=on CGO_ENABLED=1 GOTOOLCHAIN=local GOENV=off
export GOCACHE="$build/bindings/go/gocache" GOPATH="$build/bindings/go/gopath"
export PKG_CONFIG_PATH="$libdir/pkgconfig"
# The go command does not key its cache on what pkg-config says: name this prefix in
# the C flags, or a package compiled against an earlier (deleted) prefix is reused.
export CGO_CFLAGS="-g -O2 -DLEASEJUDGE_INSTALL_STAMP=$(printf %s "$tmp" | sha256sum | cut -c1-16)"
unset CGO_LDFLAGS
"$go" build -o app . 2>&1
if readelf -d app | grep -q "$build"; then
  echo "not ok - the program names the build tree"; exit 1
fi
out=$(LD_LIBRARY_PATH=$libdir ./app)
want="$(pkg-config --modversion leasejudge) alive <nil>"
if [ "$out" = "$want" ]; then
  echo "ok - a Go program builds against the installed leasejudge.pc and runs: $out"
else
  echo "not ok - it printed '$out', want '$want'"; exit 1
fi
