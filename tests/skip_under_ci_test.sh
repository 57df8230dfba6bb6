# A test that cannot run never passes: every TAP script test (the bash builtin's and
# the lease directory's) run with the builtin missing fails under CI=true, saying it
# cannot run, and outside CI is a skip (exit 77), never a pass.
set -uo pipefail
src=${LEASEJUDGE_SOURCE_DIR:?}
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
scripts=("$src"/bindings/bash/tests/*_test.sh "$src"/tests/leasedir_concurrency_test.sh
         "$src"/tests/leasedir_interop_test.sh)
[ "${#scripts[@]}" -ge 6 ] || not_ok "the TAP script tests are found (${#scripts[@]})"
for t in "${scripts[@]}"; do
  name=${t#"$src"/}
  out=$(env -u LD_PRELOAD CI=true LEASEJUDGE_BASH_BUILTIN=/nonexistent/leasejudge.so \
        LEASEJUDGE_BINARY_DIR=/nonexistent bash "$t" 2>&1 </dev/null)
  rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && grep -q "cannot run" <<<"$out"; then
    ok "$name with the builtin missing and CI=true: fails ($rc), saying it cannot run"
  else
    not_ok "$name with the builtin missing and CI=true: exit $rc: $(tail -2 <<<"$out" | tr '\n' ' ')"
  fi
  out=$(env -u LD_PRELOAD -u CI LEASEJUDGE_BASH_BUILTIN=/nonexistent/leasejudge.so \
        LEASEJUDGE_BINARY_DIR=/nonexistent bash "$t" 2>&1 </dev/null)
  rc=$?
  if [ "$rc" -eq 77 ] && grep -q "# SKIP" <<<"$out"; then
    ok "$name with the builtin missing outside CI: a skip (77)"
  else
    not_ok "$name with the builtin missing outside CI: exit $rc: $(tail -2 <<<"$out" | tr '\n' ' ')"
  fi
done
echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
