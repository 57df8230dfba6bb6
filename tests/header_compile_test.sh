#!/usr/bin/env bash
# leasejudge.h, and each part it includes taken on its own (nothing else included
# before or after it), compiles as C99 and as
# C++ (11, 17, 20) with -Wall -Wextra -Werror -pedantic: the ABI's header must be
# usable by any C or C++ consumer as it is, whatever it includes first.
# -Wstrict-prototypes too: in C, `f()` declares a function of unspecified arguments.
# Then each public header of the C++ core, alone, as C++20.
set -euo pipefail
src=${LEASEJUDGE_SOURCE_DIR:?}
include=$src/capi/include
cc=${CC:-cc}
cxx=${CXX:-c++}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
notok() { echo "not ok - $1"; sed 's/^/# /' "$tmp/log"; fail=$((fail + 1)); }

headers=(leasejudge.h)
for part in "$include"/leasejudge/*.h; do headers+=("leasejudge/$(basename "$part")"); done

for h in "${headers[@]}"; do
  # Included twice: the guards must hold. A use of a type and a function of the
  # common part keeps the compiler from skipping the declarations.
  printf '#include "%s"\n#include "%s"\nint lj_probe(void);\nint lj_probe(void) { return lj_version_number() > 0 ? LJ_OK : LJ_EINVAL; }\n' \
    "$h" "$h" >"$tmp/c.c"
  cp "$tmp/c.c" "$tmp/cxx.cpp"
  if "$cc" -std=c99 -Wall -Wextra -Werror -pedantic -Wstrict-prototypes -I"$include" -c "$tmp/c.c" -o "$tmp/c.o" >"$tmp/log" 2>&1; then
    ok "$h as C99"
  else
    notok "$h as C99"
  fi
  for std in c++11 c++17 c++20; do
    if "$cxx" -std=$std -Wall -Wextra -Werror -pedantic -I"$include" -c "$tmp/cxx.cpp" -o "$tmp/cxx.o" >"$tmp/log" 2>&1; then
      ok "$h as $std"
    else
      notok "$h as $std"
    fi
  done
done

# The C++ declarations have C linkage: the symbol a C++ object asks for is the
# plain C name, as the shared library exports it.
if nm "$tmp/cxx.o" | grep -q ' U lj_version_number$'; then
  ok "C linkage from C++"
else
  nm "$tmp/cxx.o" >"$tmp/log" 2>&1 || true
  notok "C linkage from C++"
fi

# The C++ core's public headers: each compiles alone (and twice), as C++20, with the
# project's warnings: a header brings what it uses.
for h in "$src"/lib/include/leasejudge/*.hpp "$src"/lib/include/leasejudge/store/*.hpp; do
  name=${h#"$src"/lib/include/}
  printf '#include "%s"\n#include "%s"\n' "$name" "$name" >"$tmp/core.cpp"
  if "$cxx" -std=c++20 -Wall -Wextra -Werror -I"$src/lib/include" -fsyntax-only "$tmp/core.cpp" >"$tmp/log" 2>&1; then
    ok "$name alone as C++20"
  else
    notok "$name alone as C++20"
  fi
done

echo "1..$((pass + fail))"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
