#!/usr/bin/env bash
# `cmake --install` puts headers, libraries, the CMake package, leasejudge.pc, the
# command, its man page and completion, and the bash builtin in a prefix; a C program
# builds against it with pkg-config (shared and static), a C++ one with find_package
# (without asking for C++20 itself); the prefix still works once moved elsewhere.
# Registered in the plain build only (the install is the same under the sanitizers).
set -euo pipefail
build=${LEASEJUDGE_BINARY_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
notok() { echo "not ok - $1"; fail=$((fail + 1)); }

env -u LD_PRELOAD cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; exit 1; }
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

# Static: one archive, its private dependencies from pkg-config --static. Debian ships
# some of those only as shared libraries, so the archive is linked statically and the
# rest as the system has them; the program must not need libleasejudge.so.
[ -f "$libdir/libleasejudge.a" ] && ok "libleasejudge.a installed" || notok "libleasejudge.a installed"
static_libs=$(pkg-config --static --libs leasejudge)
case " $static_libs " in
  *" -lleasejudge "*" -lsimdjson "* | *" -lleasejudge "*" -lfmt "*) ok "pkg-config --static lists the private dependencies" ;;
  *) notok "pkg-config --static lists the private dependencies: $static_libs" ;;
esac
if cc -std=c99 -Wall -Werror -o "$tmp/main_static" "$tmp/main.c" $(pkg-config --cflags leasejudge) \
     -L"$libdir" -Wl,-Bstatic -lleasejudge -Wl,-Bdynamic ${static_libs//-lleasejudge/} 2>"$tmp/cc_static.log" &&
   ! ldd "$tmp/main_static" | grep -q libleasejudge &&
   out=$("$tmp/main_static") && [ "$out" = "$(pkg-config --modversion leasejudge) 1" ]; then
  ok "a C program links libleasejudge.a statically with pkg-config --static"
else
  cat "$tmp/cc_static.log"; notok "a C program links libleasejudge.a statically with pkg-config --static"
fi

mkdir -p "$tmp/consumer"
cat >"$tmp/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(consumer CXX)
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
# The C++ targets of earlier releases still resolve, to the one static archive.
sed -i 's/leasejudge::core/leasejudge::static/' "$tmp/consumer/CMakeLists.txt"
if cmake -S "$tmp/consumer" -B "$tmp/consumer/build2" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cm2.log" 2>&1 &&
   cmake --build "$tmp/consumer/build2" >>"$tmp/cm2.log" 2>&1 &&
   [ "$("$tmp/consumer/build2/consumer")" = "$(cat /proc/sys/kernel/random/boot_id)" ]; then
  ok "a C++ program builds with leasejudge::static"
else
  tail -30 "$tmp/cm2.log"; notok "a C++ program builds with leasejudge::static"
fi

# Moved: the command, the builtin and pkg-config find the library relative to themselves.
moved=$tmp/elsewhere/opt
mkdir -p "$tmp/elsewhere" && mv "$prefix" "$moved"
mlibdir=${libdir/#$prefix/$moved}
out=$("$moved/bin/leasejudge" version 2>&1) && [ "$out" = "$(PKG_CONFIG_PATH=$mlibdir/pkgconfig pkg-config --modversion leasejudge)" ] &&
  ok "the moved prefix's bin/leasejudge runs: $out" || notok "the moved prefix's bin/leasejudge runs: $out"
builtin=$(find "$moved" -path '*/bash/leasejudge.so' | head -1)
if [ -z "${LEASEJUDGE_NO_BASH:-}" ]; then
  out=$(env -u LD_LIBRARY_PATH bash -c "enable -f '$builtin' leasejudge && leasejudge version" 2>&1) &&
    [ "$out" = "$("$moved/bin/leasejudge" version)" ] &&
    ok "enable -f from the moved prefix loads the builtin" || notok "enable -f from the moved prefix: $out"
fi
# The man page renders, with every exit code the command lists.
if man_out=$(MANWIDTH=80 man -l "$moved/share/man/man1/leasejudge.1" 2>"$tmp/man.err" | col -b) &&
   grep -q "step sweep" <<<"$man_out" && grep -q "EXIT STATUS" <<<"$man_out" && [ ! -s "$tmp/man.err" ]; then
  ok "man -l renders leasejudge.1"
else
  cat "$tmp/man.err"; notok "man -l renders leasejudge.1"
fi
# The completion loads in bash and completes verbs.
comp=$(bash -c "source '$moved/share/bash-completion/completions/leasejudge' && COMP_WORDS=(leasejudge st) COMP_CWORD=1 && _leasejudge leasejudge st leasejudge; printf '%s\n' \"\${COMPREPLY[@]}\"" 2>&1)
[ "$comp" = "step" ] && ok "the completion loads and completes 'st' to step" || notok "completion: $comp"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
