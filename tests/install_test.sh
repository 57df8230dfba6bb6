#!/usr/bin/env bash
# `cmake --install` puts headers, libraries, the CMake package and leasejudge.pc in a
# prefix; a C program builds against it with pkg-config, a C++ one with find_package.
# Registered in the plain build only (the install is the same under the sanitizers).
set -euo pipefail
build=${LEASEJUDGE_BINARY_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
notok() { echo "not ok - $1"; fail=$((fail + 1)); }

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
libdir=$(find "$prefix" -name libleasejudge.so.0 -printf '%h\n' | head -1)
[ -f "$prefix/include/leasejudge.h" ] && ok "leasejudge.h installed" || notok "leasejudge.h installed"
[ -f "$prefix/include/leasejudge/identity.hpp" ] && ok "C++ headers installed" || notok "C++ headers installed"
[ -n "$libdir" ] && ok "libleasejudge.so.0 installed" || notok "libleasejudge.so.0 installed"
soname=$(objdump -p "$libdir/libleasejudge.so.0" | awk '/SONAME/ {print $2}')
[ "$soname" = libleasejudge.so.0 ] && ok "SONAME is libleasejudge.so.0" || notok "SONAME is $soname"

# Only lj_* leaves the shared library.
others=$(nm -D --defined-only "$libdir/libleasejudge.so.0" | awk '{print $3}' | grep -v '^lj_' || true)
[ -z "$others" ] && ok "only lj_* symbols exported" || notok "exported besides lj_*: $(echo $others | head -c 300)"

cat >"$tmp/main.c" <<'C'
#include <leasejudge.h>
#include <stdio.h>
int main(void) {
  char *id = NULL; size_t n = 0;
  if (lj_boot_id(&id, &n, NULL) != LJ_OK) return 1;
  printf("%s %u\n", lj_version(), lj_version_number() == LJ_VERSION_NUMBER);
  lj_free(id);
  return 0;
}
C
export PKG_CONFIG_PATH=$libdir/pkgconfig
if cc -std=c99 -Wall -Werror -o "$tmp/main" "$tmp/main.c" $(pkg-config --cflags --libs leasejudge) 2>"$tmp/cc.log" &&
   out=$(LD_LIBRARY_PATH=$libdir "$tmp/main") && [ "$out" = "$(pkg-config --modversion leasejudge) 1" ]; then
  ok "a C program builds and runs with pkg-config"
else
  cat "$tmp/cc.log"; notok "a C program builds and runs with pkg-config"
fi

mkdir -p "$tmp/consumer"
cat >"$tmp/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(consumer CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(leasejudge REQUIRED)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE leasejudge::core)
CM
cat >"$tmp/consumer/main.cpp" <<'CPP'
#include <leasejudge/identity.hpp>
#include <cstdio>
int main() { std::printf("%s\n", leasejudge::boot_id().c_str()); return 0; }
CPP
if cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cm.log" 2>&1 &&
   cmake --build "$tmp/consumer/build" >>"$tmp/cm.log" 2>&1 &&
   [ "$("$tmp/consumer/build/consumer")" = "$(cat /proc/sys/kernel/random/boot_id)" ]; then
  ok "a C++ program builds with find_package(leasejudge)"
else
  tail -30 "$tmp/cm.log"; notok "a C++ program builds with find_package(leasejudge)"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
