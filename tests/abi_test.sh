#!/usr/bin/env bash
# The shared library's ABI, held to what is committed:
#  - the symbols it exports (nm -D) are exactly capi/leasejudge.symbols: a symbol gone
#    is a break of the ABI major; a new one must be added to the list (and to the
#    header) on purpose. Nothing but lj_* leaves the library.
#  - every function a header declares LJ_API is exported, and every export is declared;
#  - the SONAME is libleasejudge.so.<LJ_VERSION_MAJOR>: the ABI major;
#  - every public struct is either versioned (its first field `uint32_t version`, with
#    LJ_<X>_VERSION, LJ_<X>_INIT and an exported lj_<x>_init), so that it may grow, or
#    a fixed layout whose size is pinned below and may never change within the major.
# To see the current list: nm -D --defined-only libleasejudge.so | awk '{print $3}' | sort
set -euo pipefail
src=${LEASEJUDGE_SOURCE_DIR:?}
lib=${LEASEJUDGE_LIBRARY:?}
include=$src/capi/include
list=$src/capi/leasejudge.symbols
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
notok() { echo "not ok - $1"; [ -s "$tmp/log" ] && sed 's/^/# /' "$tmp/log"; fail=$((fail + 1)); }
: >"$tmp/log"

# Public structs with a fixed layout (output records the caller allocates, references
# it fills): their size on x86-64 Linux, never to change within an ABI major.
fixed_layouts() {
  cat <<'LAYOUTS'
lj_lock_verdict_t 32
lj_nats_server_t 36
lj_execution_ref_t 48
lj_lock_acquisition_t 56
lj_step_action_t 16
lj_step_entry_t 32
lj_step_plan_summary_t 48
lj_sweep_counts_t 48
LAYOUTS
}

headers=("$include/leasejudge.h" "$include"/leasejudge/*.h)
# The header text with comments removed (so commented-out code does not count).
sed -e 's://.*$::' "${headers[@]}" | perl -0pe 's:/\*.*?\*/::gs' >"$tmp/headers.txt"

# --- exported symbols against the committed list --------------------------------------
nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$tmp/exported"
grep -v '^[[:space:]]*\(#\|$\)' "$list" | awk '{print $1}' | sort -u >"$tmp/listed"
comm -23 "$tmp/listed" "$tmp/exported" >"$tmp/gone"
comm -13 "$tmp/listed" "$tmp/exported" >"$tmp/new"
if [ -s "$tmp/gone" ]; then
  cp "$tmp/gone" "$tmp/log"; notok "no listed symbol is gone (a gone symbol breaks the ABI: a new major)"
else
  ok "every symbol of capi/leasejudge.symbols is exported"
fi
: >"$tmp/log"
if [ -s "$tmp/new" ]; then
  cp "$tmp/new" "$tmp/log"; notok "every exported symbol is in capi/leasejudge.symbols (add new ones on purpose)"
else
  ok "no symbol is exported beyond capi/leasejudge.symbols"
fi
: >"$tmp/log"
grep -v '^lj_' "$tmp/exported" >"$tmp/log" || true
[ -s "$tmp/log" ] && notok "only lj_* is exported" || ok "only lj_* is exported"
: >"$tmp/log"

# --- declared against exported ------------------------------------------------------------
tr '\n' ' ' <"$tmp/headers.txt" | grep -o 'LJ_API[^;{]*(' | grep -o 'lj_[a-z0-9_]*[[:space:]]*($' |
  sed 's/[[:space:]]*($//' | sort -u >"$tmp/declared"
comm -23 "$tmp/declared" "$tmp/exported" >"$tmp/log"
[ -s "$tmp/log" ] && notok "every LJ_API function is exported" || ok "every LJ_API function is exported ($(wc -l <"$tmp/declared"))"
comm -13 "$tmp/declared" "$tmp/exported" >"$tmp/log"
[ -s "$tmp/log" ] && notok "every export is declared LJ_API in a header" || ok "every export is declared LJ_API in a header"
: >"$tmp/log"

# --- SONAME ------------------------------------------------------------------------------
major=$(sed -n 's/^#define LJ_VERSION_MAJOR \([0-9]*\).*/\1/p' "$include/leasejudge/lj_common.h")
soname=$(objdump -p "$lib" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "libleasejudge.so.$major" ] && ok "SONAME $soname carries the ABI major" ||
  { echo "SONAME '$soname', LJ_VERSION_MAJOR $major" >"$tmp/log"; notok "SONAME carries the ABI major"; }
: >"$tmp/log"

# --- public structs: versioned, or fixed with a pinned size -------------------------------
grep -o 'typedef struct lj_[a-z0-9_]*_t[[:space:]]*{' "$tmp/headers.txt" | awk '{print $3}' | sort -u >"$tmp/structs"
fixed_layouts >"$tmp/fixed"
{
  echo '#include <stddef.h>'
  echo '#include <stdio.h>'
  echo '#include "leasejudge.h"'
  echo 'int main(void) {'
  while read -r s; do
    echo "  printf(\"%s %zu %d\\n\", \"$s\", sizeof($s), (int)offsetof($s, version) == 0);"
  done < <(comm -23 "$tmp/structs" <(awk '{print $1}' "$tmp/fixed" | sort))
  while read -r s size; do
    echo "  printf(\"%s %zu\\n\", \"$s\", sizeof($s));"
  done <"$tmp/fixed"
  echo '  return 0;'
  echo '}'
} >"$tmp/layout.c"
if ! ${CC:-cc} -std=c99 -I"$include" -o "$tmp/layout" "$tmp/layout.c" 2>"$tmp/log"; then
  notok "the struct probe compiles (a struct without a version field that is not pinned as fixed?)"
else
  "$tmp/layout" >"$tmp/sizes"
  : >"$tmp/log"
  if [ "$(uname -m)" = x86_64 ]; then
    while read -r s size; do
      got=$(awk -v s="$s" '$1 == s {print $2}' "$tmp/sizes")
      [ "$got" = "$size" ] || echo "$s: sizeof is $got, pinned at $size" >>"$tmp/log"
    done <"$tmp/fixed"
    [ -s "$tmp/log" ] && notok "fixed layouts keep their size" || ok "fixed layouts keep their size ($(wc -l <"$tmp/fixed"))"
  else
    ok "fixed layouts keep their size # SKIP the sizes are pinned for x86-64"
  fi
  : >"$tmp/log"
  while read -r s size first; do
    [ -n "${first:-}" ] || continue
    x=$(echo "$s" | sed -e 's/^lj_//' -e 's/_t$//')
    X=$(echo "$x" | tr a-z A-Z)
    [ "$first" = 1 ] || echo "$s: its first field is not version" >>"$tmp/log"
    grep -q "uint32_t version;" <(awk "/typedef struct $s/,/} $s;/" "$tmp/headers.txt") ||
      echo "$s: no uint32_t version field" >>"$tmp/log"
    grep -q "#define LJ_${X}_VERSION " "$tmp/headers.txt" || echo "$s: no LJ_${X}_VERSION" >>"$tmp/log"
    grep -q "#define LJ_${X}_INIT" "$tmp/headers.txt" || echo "$s: no LJ_${X}_INIT" >>"$tmp/log"
    grep -qx "lj_${x}_init" "$tmp/exported" || echo "$s: lj_${x}_init is not exported" >>"$tmp/log"
  done <"$tmp/sizes"
  n=$(awk 'NF == 3' "$tmp/sizes" | wc -l)
  [ -s "$tmp/log" ] && notok "structs that may grow are versioned" || ok "structs that may grow are versioned ($n)"
fi

echo "1..$((pass + fail))"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
