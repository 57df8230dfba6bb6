#!/usr/bin/env bash
# Nothing the builtin does may leak in the user's shell: 10,000 calls of every verb
# (lease verbs, identities, usage errors) and the shell's resident set stays flat.
. "$(dirname "${BASH_SOURCE[0]}")/../../../tests/fixtures/leasedir/tap.sh"
need_builtin

rss_kb() { # this shell's VmRSS, read without a child process
  local key value rest
  while read -r key value rest; do
    [ "$key" = "VmRSS:" ] && { echo "$value"; return; }
  done </proc/$$/status
}

cd "$REPO" || exit 1
start_sleeper
S=$REPLY
leasejudge lease touch --pid "$S"
echo "linux $BOOT_ID 1" >"$WORK/stale-record"

calls=0
round() { # round N: N iterations of five calls, and every 50th the lease verbs
  local i
  for ((i = 0; i < $1; i++)); do
    leasejudge identity >/dev/null
    leasejudge owner "$S" >/dev/null
    leasejudge version >/dev/null
    leasejudge identity nonsense 2>/dev/null
    leasejudge machine-id >/dev/null
    calls=$((calls + 5))
    if ((i % 50 == 0)); then
      leasejudge lease touch
      leasejudge lease list >/dev/null
      cp "$WORK/stale-record" "$LEASES/$S"
      leasejudge lease live 2>/dev/null >/dev/null  # reclaims: the lock, the reread, the line
      leasejudge lease touch --pid "$S"
      leasejudge lease bogus 2>/dev/null
      calls=$((calls + 5))
    fi
  done
}

round 200  # warm up: bash's own caches, the library's statics
before=$(rss_kb)
calls=0
round "${LEASEJUDGE_RSS_ROUNDS:-2000}"
after=$(rss_kb)
growth=$((after - before))
echo "# $calls calls: VmRSS $before kB -> $after kB ($growth kB)"
same "every call succeeded as expected (the lease is still there)" "$S 0m alive" "$(leasejudge lease list | grep "^$S ")"
if [ "${LEASEJUDGE_SANITIZE:-OFF}" = ON ]; then
  # ASan's quarantine holds freed memory on purpose; its leak checks run in the C tests.
  echo "ok $((TAP_N + 1)) - # SKIP the resident set under ASan ($growth kB)"
  TAP_N=$((TAP_N + 1))
else
  check "the resident set grew by less than 512 kB over $calls calls" test "$growth" -lt 512
fi
tap_done
