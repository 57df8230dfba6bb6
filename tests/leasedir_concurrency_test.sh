#!/usr/bin/env bash
# Eight shells, the gstack-lease script and the builtin mixed, run touch and live on one
# lease directory while holders are SIGKILLed inside the lock. Proven from a trace of
# every taking and release of the lock (LEASEJUDGE_LEASE_TRACE; the script's lock and
# unlock are wrapped to write the same lines):
#  - never two holders inside the lock at once;
#  - every lock of a killed holder broken within the script's bounds;
#  - no lease of a live process lost; stale leases reclaimed meanwhile.
# 20 s by default (LEASEJUDGE_STRESS_SECONDS), 8 s under ASan.
. "$(dirname "${BASH_SOURCE[0]}")/fixtures/leasedir/tap.sh"
need_builtin
need_seed

if [ "${LEASEJUDGE_SANITIZE:-OFF}" = ON ]; then default_seconds=8; else default_seconds=20; fi
SECONDS_TO_RUN=${LEASEJUDGE_STRESS_SECONDS:-$default_seconds}
BREAK_BOUND_S=10  # a dead holder's lock: the next try breaks it; an ownerless one at 2 s

# The script, with its lock and unlock traced as leasejudge traces them.
TRACED=$WORK/seedbin/gstack-lease-traced
awk '
  /^case "\$VERB" in$/ && ++n == 2 {
    print "eval \"lease_test_lock() $(declare -f lock | tail -n +2)\""
    print "eval \"lease_test_unlock() $(declare -f unlock | tail -n +2)\""
    print "lock() {"
    print "  lease_test_lock || return 1"
    print "  echo \"$$ lock $EPOCHREALTIME\" >>\"$LEASEJUDGE_LEASE_TRACE\""
    print "  sleep \"0.$(printf %03d \"$LEASEJUDGE_LEASE_TRACE_HOLD_MS\")\""
    print "}"
    print "unlock() {"
    print "  if [ \"$(owner_of \"$LOCK\")\" = \"$TOKEN\" ]; then echo \"$$ unlock $EPOCHREALTIME\" >>\"$LEASEJUDGE_LEASE_TRACE\""
    print "  else echo \"$$ lost $EPOCHREALTIME\" >>\"$LEASEJUDGE_LEASE_TRACE\"; fi"
    print "  lease_test_unlock"
    print "}"
  }
  { print }' "$SEED" >"$TRACED"
chmod +x "$TRACED"
check "the traced script has both wrappers" grep -q "lease_test_unlock$" "$TRACED"

export LEASEJUDGE_LEASE_TRACE=$WORK/trace LEASEJUDGE_LEASE_TRACE_HOLD_MS=40
: >"$LEASEJUDGE_LEASE_TRACE"
: >"$WORK/kills"
: >"$WORK/reclaims"
END=$((EPOCHSECONDS + SECONDS_TO_RUN))

cat >"$WORK/builtin-shell.sh" <<EOF
enable -f "$BUILTIN" leasejudge || exit 9
cd "$REPO" || exit 9
while (( EPOCHSECONDS < $END )); do
  leasejudge lease touch && : >"$WORK/touched.\$\$"
  leasejudge lease live --exclude-ancestry-of \$\$ >/dev/null 2>>"$WORK/reclaims"
  (( RANDOM % 4 )) || leasejudge lease list >/dev/null
done
EOF
cat >"$WORK/script-shell.sh" <<EOF
while (( EPOCHSECONDS < $END )); do
  "$TRACED" touch --root "$REPO" && : >"$WORK/touched.\$\$"
  "$TRACED" live --root "$REPO" --exclude-ancestry-of \$\$ >/dev/null 2>>"$WORK/reclaims"
done
EOF

declare -A KIND  # participant pid -> builtin | script
spawn() { # spawn KIND: a participant shell
  # A simple command, so that $! is the shell itself (whose $$ names its lease).
  if [ "$1" = builtin ]; then LD_PRELOAD=${LJ_ASAN_PRELOAD:-} bash "$WORK/builtin-shell.sh" 2>>"$WORK/shells.err" &
  else bash "$WORK/script-shell.sh" 2>>"$WORK/shells.err" &
  fi
  KIND[$!]=$1
  disown "$!"  # killed on purpose: no job reports
  started "$!"
}
for _ in 1 2 3 4; do spawn builtin; spawn script; done

# Leases of live processes that no longer are theirs: for the shells to reclaim.
start_sleeper; X1=$REPLY
start_sleeper; X2=$REPLY
plant_stale() {
  mkdir -p "$LEASES"
  printf 'linux %s 1\n' "$BOOT_ID" >"$LEASES/.plant"
  mv -f "$LEASES/.plant" "$LEASES/$1"
}

lost_leases=0
kills_inside=0
kills_anywhere=0
round=0
while ((EPOCHSECONDS < END)); do
  round=$((round + 1))
  # No lease of a live shell may disappear once it was written.
  for f in "$WORK"/touched.*; do
    [ -e "$f" ] || continue
    p=${f##*.}
    if kill -0 "$p" 2>/dev/null && [ ! -f "$LEASES/$p" ]; then
      lost_leases=$((lost_leases + 1))
      echo "lease of live shell $p missing at $EPOCHREALTIME" | diag
    fi
  done
  ((round % 5 == 0)) && plant_stale "$X1"
  ((round % 7 == 0)) && plant_stale "$X2"
  if ((round % 4 == 0)); then
    # SIGKILL whoever is inside the lock now (its hold lasts 40 ms).
    last=$(tail -n 1 "$LEASEJUDGE_LEASE_TRACE")
    set -- $last
    if [ "${2:-}" = lock ] && kill -9 "$1" 2>/dev/null; then
      echo "$1 killed $EPOCHREALTIME" >>"$WORK/kills"
      kills_inside=$((kills_inside + 1))
      [ "${KIND[$1]:-}" = builtin ] && spawn builtin
    fi
  elif ((round % 11 == 0)); then
    # And a shell at any moment: between its mkdir and its owner rename, say.
    victims=("${!KIND[@]}")
    v=${victims[RANDOM % ${#victims[@]}]}
    if kill -0 "$v" 2>/dev/null; then
      children=$(pgrep -P "$v" 2>/dev/null)
      kill -9 "$v" $children 2>/dev/null
      for c in "$v" $children; do echo "$c killed $EPOCHREALTIME" >>"$WORK/kills"; done
      kills_anywhere=$((kills_anywhere + 1))
      spawn "${KIND[$v]}"
      unset "KIND[$v]"
    fi
  fi
  sleep 0.2
done

# The shells stop by themselves; one stuck past the lock's 30 s would be a failure.
deadline=$((EPOCHSECONDS + 45))
for p in "${!KIND[@]}"; do
  while kill -0 "$p" 2>/dev/null && [[ $(ps -o stat= -p "$p" 2>/dev/null) != Z* ]] && ((EPOCHSECONDS < deadline)); do
    sleep 0.2
  done
done
stuck=0
for p in "${!KIND[@]}"; do
  if kill -0 "$p" 2>/dev/null && [[ $(ps -o stat= -p "$p" 2>/dev/null) != Z* ]]; then stuck=$((stuck + 1)); fi
done
same "every shell finished by itself" 0 "$stuck"

# A last taker: a lock a killed holder left is broken, and the directory works.
leasejudge lease touch --root "$REPO" --pid "$X1"
same "a last touch takes the lock" 0 $?

# The trace, with the kills, in time order: never a second holder while the first is
# alive inside; each killed holder's lock taken over within the bound.
sort -s -n -k3,3 "$LEASEJUDGE_LEASE_TRACE" "$WORK/kills" >"$WORK/events"
verdict=$(awk -v bound="$BREAK_BOUND_S" '
  $2 == "killed" { dead[$1] = $3; if (holder == $1) killed_at = $3; next }
  $2 == "lock" {
    locks++
    if (holder != "") {
      if (!(holder in dead)) { bad++; print "# " $1 " took the lock at " $3 " while " holder " held it" }
      else {
        broken++
        d = $3 - killed_at
        if (d > max) max = d
        if (d > bound) { slow++; print "# the lock of killed " holder " was taken over only after " d " s" }
      }
    }
    holder = $1; killed_at = ""; next
  }
  $2 == "unlock" {
    if (holder != $1) { bad++; print "# " $1 " released a lock held by " (holder == "" ? "nobody" : holder) " at " $3 }
    holder = ""; next
  }
  $2 == "lost" { bad++; print "# " $1 " found its lock taken from it at " $3; next }
  END { printf "locks=%d overlaps=%d broken=%d slow=%d max=%.3f\n", locks, bad + 0, broken + 0, slow + 0, max + 0 }
' "$WORK/events")
printf '%s\n' "$verdict" | grep '^#'
summary=$(printf '%s\n' "$verdict" | tail -n 1)
echo "# $SECONDS_TO_RUN s: $summary; kills inside the lock $kills_inside, anywhere $kills_anywhere;" \
  "reclaims $(grep -c reclaimed "$WORK/reclaims")"
eval "${summary% max=*}"
check "the lock was taken again and again ($locks times)" test "$locks" -ge 8
same "never two holders inside the lock at once" 0 "$overlaps"
check "holders were killed inside the lock ($kills_inside)" test "$kills_inside" -ge 1
same "every killed holder's lock was taken over within $BREAK_BOUND_S s (${summary#*max=} s at most)" 0 "$slow"
same "no lease of a live shell was lost" 0 "$lost_leases"
check "stale leases were reclaimed meanwhile" grep -q "reclaimed stale lease" "$WORK/reclaims"
check "the last touch left no lock behind" test ! -e "$LEASES/.lock"
tap_done
