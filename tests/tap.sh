# Sourced by the script tests: TAP lines, numbered as they go, and the count of those
# that failed (the script ends with `[ "$failed" -eq 0 ]`).
#   ok WHAT
#   notok WHAT [DETAIL]         DETAIL's lines follow as TAP comments
#   same WHAT EXPECTED ACTUAL   ok when the two are equal, else both shown
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() {
  n=$((n + 1)) failed=$((failed + 1))
  echo "not ok $n - $1"
  [ $# -lt 2 ] || printf '%s\n' "$2" | sed 's/^/# /'
}
same() {
  if [ "$2" = "$3" ]; then ok "$1"; else
    notok "$1"
    { echo "expected:"; printf '%s\n' "$2"; echo "actual:"; printf '%s\n' "$3"; } | sed 's/^/# /'
  fi
}
