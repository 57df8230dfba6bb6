#!/usr/bin/env bash
# Interop with the gstack-lease seed script: the script and the builtin judge the same
# lease directory, byte for byte. Every case builds the same directory twice (by hand,
# independently of both), runs the script on one copy and the builtin on the other,
# and compares stdout, stderr, exit status and the directory afterwards, line by line.
# Leases each side writes are then read by the other.
. "$(dirname "${BASH_SOURCE[0]}")/fixtures/leasedir/tap.sh"
need_builtin
need_seed

# The identity line of a live pid, computed here as the script's identity() does.
ident() {
  local st
  st=$(cat "/proc/$1/stat") || return 1
  st=${st##*) }
  echo "linux $BOOT_ID $(echo "$st" | awk '{print $20}')"
}

run_seed() { local tag=$1; shift; "$SEED" "$@" >"$WORK/$tag.seed.out" 2>"$WORK/$tag.seed.err"; echo $? >"$WORK/$tag.seed.rc"; }
run_lj() { local tag=$1; shift; leasejudge lease "$@" >"$WORK/$tag.lj.out" 2>"$WORK/$tag.lj.err"; echo $? >"$WORK/$tag.lj.rc"; }

# The directory as bytes: every entry (dotfiles too), its kind, and a file's content,
# read without a child process per file.
dir_state() {
  local d=${1:-$LEASES} f c LC_COLLATE=C
  [ -d "$d" ] || { echo "(no directory)"; return; }
  shopt -s dotglob nullglob
  for f in "$d"/*; do
    if [ -L "$f" ]; then echo "${f##*/} -> $(readlink "$f")"
    elif [ -d "$f" ]; then echo "${f##*/}/"
    else
      c=""
      IFS= read -r -d '' c <"$f"
      printf '%s: %q\n' "${f##*/}" "$c"
    fi
  done
  shopt -u dotglob nullglob
}

# compare TAG DESCRIPTION FIXTURE VERB ARGS...: the fixture function builds the
# directory before each side runs. With ERR_EXPECTED set, the builtin's stderr must be
# that text instead of the script's (where the script's message names its own file).
compare() {
  local tag=$1 what=$2 fixture=$3
  shift 3
  $fixture
  run_seed "$tag" "$@"
  dir_state >"$WORK/$tag.seed.dir"
  $fixture
  run_lj "$tag" "$@"
  dir_state >"$WORK/$tag.lj.dir"
  if [ -n "${ERR_EXPECTED:-}" ]; then printf '%s\n' "$ERR_EXPECTED" >"$WORK/$tag.seed.err"; fi
  local part bad=0
  for part in out err rc dir; do
    if ! cmp -s "$WORK/$tag.seed.$part" "$WORK/$tag.lj.$part"; then
      bad=1
      { echo "$part differs (--- script, +++ builtin):"; diff -u "$WORK/$tag.seed.$part" "$WORK/$tag.lj.$part" | tail -n +3; } | diag
    fi
  done
  if [ $bad -eq 0 ]; then ok "$what"; else not_ok "$what"; fi
}

start_sleeper; L1=$REPLY
start_sleeper; L2=$REPLY
start_sleeper; L3=$REPLY
start_sleeper; L4=$REPLY
start_sleeper; L5=$REPLY
start_sleeper; L6=$REPLY
start_sleeper; L7=$REPLY
start_sleeper; L8=$REPLY
dead_pid; D=$REPLY
dead_pid; D2=$REPLY
ME=$$
for p in L1 L2 L3 L4 L5 L6 L7 L8 ME; do printf -v "I_$p" '%s' "$(ident "${!p}")"; done

# --- the lease fixture -------------------------------------------------------------------

put() { # put NAME AGE_SECONDS [CONTENT]: a lease file; no content: an empty file
  if [ $# -ge 3 ]; then printf '%s\n' "$3" >"$LEASES/$1"; else : >"$LEASES/$1"; fi
  touch -h -d "@$((EPOCHSECONDS - $2))" "$LEASES/$1"
}

leases() {
  rm -rf "$LEASES"
  mkdir -p "$LEASES"
  put "$L1" 30 "$I_L1"               # alive
  put "$D" 30 "linux $BOOT_ID 1"              # dead
  put "$L2" 90 "linux $BOOT_ID 1"             # stale: same backend, another start
  put "$L3" 30                                # no identity, young: alive
  put "$L4" $((121 * 60 + 30))                # no identity, 121 min: stale
  put "$L5" 30 "garbage here"                 # malformed: alive
  put "$L6" 30 "ps Mon Jan  1 00:00:00 2024"  # another backend: alive
  put "$L7" $((90 * 60 + 30)) "$I_L7"
  put "$L8" -90 "$I_L8"              # mtime in the future: -1m
  put "$ME" 30 "$I_ME"               # this shell
  put 0 30                                    # kill -0 0 works
  put abc 30                                  # no process
  put 99999999999 30                          # beyond any pid
  put "1,2" 30                                # ps -p reads a list
  put "+1" 30                                 # kill reads +1
  put "-1" 30
  put 007 30
  mkdir "$LEASES/12345"                       # not a file: skipped
  printf 'linux %s 5\n' "$BOOT_ID" >"$LEASES/.target"
  ln -s .target "$LEASES/777777"              # a link to a file: a lease
  ln -s nowhere "$LEASES/888888"              # a dangling link: skipped
}

small() {
  rm -rf "$LEASES"
  mkdir -p "$LEASES"
  put "$L1" 30 "$I_L1"
  put "$L2" 90 "linux $BOOT_ID 1"
  put "$D" 30
}

compare list "list: every state, odd names, links, ages" leases list --root "$REPO"
compare live "live: stale leases reclaimed, dead skipped, the rest printed" leases live --root "$REPO"
compare live_ex "live --exclude-ancestry-of this shell" leases live --root "$REPO" --exclude-ancestry-of "$ME"
compare live_ex1 "live --exclude-ancestry-of a sleeper" small live --root "$REPO" --exclude-ancestry-of "$L1"
compare live_exz "live --exclude-ancestry-of with a leading zero" small live --root "$REPO" --exclude-ancestry-of "0$ME"
compare live_exx "live --exclude-ancestry-of not a number" small live --root "$REPO" --exclude-ancestry-of "x$ME"

only_dead() {
  rm -rf "$LEASES"
  mkdir -p "$LEASES"
  put "$D" 30 "linux $BOOT_ID 1"
  put "$D2" 30
}
compare live_none "live: nothing live exits 1" only_dead live --root "$REPO"
no_dir() { rm -rf "$LEASES"; }
compare list_nodir "list without a lease directory" no_dir list --root "$REPO"
compare live_nodir "live without a lease directory" no_dir live --root "$REPO"

# --- the shared harness --------------------------------------------------------------------

cp "$(command -v bash)" "$WORK/capy-server"
"$WORK/capy-server" -c 'sleep 1000 & echo $! > "$1"; wait' capy "$WORK/harness-child" &
HARNESS=$!
disown "$HARNESS"
started "$HARNESS"
for _ in $(seq 50); do [ -s "$WORK/harness-child" ] && break; sleep 0.1; done
HCHILD=$(cat "$WORK/harness-child")
started "$HCHILD"
harness() {
  rm -rf "$LEASES"
  mkdir -p "$LEASES"
  put "$HARNESS" 30 "$(ident "$HARNESS")"
  put "$HCHILD" 30 "$(ident "$HCHILD")"
  put "$L1" 30 "$I_L1"
}
old_harness() {
  harness
  set_age "$LEASES/$HARNESS" $((120 * 60 + 30))
}
compare shared0 "live excludes the harness ancestor" harness live --root "$REPO" --exclude-ancestry-of "$HCHILD"
compare shared1 "live --count-shared-harness counts it" harness live --root "$REPO" --exclude-ancestry-of "$HCHILD" --count-shared-harness
compare shared2 "--count-shared-harness only under 120 minutes" old_harness live --root "$REPO" --exclude-ancestry-of "$HCHILD" --count-shared-harness

# --- touch, prune ----------------------------------------------------------------------------

TOKEN_L1="$L1 $I_L1"
prunable() {
  leases
  put .old.tmp $((3 * 3600))                    # a leftover temporary: pruned
  put "$L5" $((121 * 60))                        # an old lease: pruned
  put .lock.claim.999999 180 "999999 "          # no identity, 3 min: abandoned
  put .lock.claim.$L1 180 "$TOKEN_L1"           # a live claimant: kept
  put .lock.claim.$D 180 "$D linux $BOOT_ID 1"  # its holder is dead: pruned
  put .lock.claim.$L2 60 "$L2 "                  # young: kept
  put .lock.break.claim.5 180 ""                # empty, old: pruned
  mkdir -p "$LEASES/.lock.gone.123/x"           # a leftover: removed
  put .lock.old 3000                             # .lock*: never pruned by age
}
compare touch_l1 "touch --pid: writes the identity, prunes" prunable touch --root "$REPO" --pid "$L1"
compare touch_from "touch --from" prunable touch --root "$REPO" --from "$L3"
compare touch_dead "touch for a dead pid writes an empty lease" prunable touch --root "$REPO" --pid "$D"
compare touch_abc "touch for a name that is no pid" prunable touch --root "$REPO" --pid abc
compare touch_default "touch without --pid records the caller (the script's parent, the shell)" leases touch --root "$REPO"
compare touch_new "touch makes the directory" no_dir touch --root "$REPO" --pid "$L1"
# bash names the script and its line in a failed redirection; leasejudge its program.
ERR_EXPECTED="gstack-lease: $LEASES/.sub/$L1.$$: No such file or directory" \
  compare touch_nodir_sub "touch into a missing sub-directory fails (bash's own message aside)" small touch --root "$REPO" --pid "sub/$L1"

# --- the lock ----------------------------------------------------------------------------------

lock_live() { small; mkdir "$LEASES/.lock"; echo "$TOKEN_L1" >"$LEASES/.lock/owner"; }
lock_dead() { small; mkdir "$LEASES/.lock"; echo "$D linux $BOOT_ID 7" >"$LEASES/.lock/owner"; }
lock_padded() { small; mkdir "$LEASES/.lock"; echo "0$L1 $I_L1" >"$LEASES/.lock/owner"; }
lock_stale_owner() { small; mkdir "$LEASES/.lock"; echo "$L1 linux $BOOT_ID 1" >"$LEASES/.lock/owner"; }
lock_no_identity() { small; mkdir "$LEASES/.lock"; echo "$L1 " >"$LEASES/.lock/owner"; }
lock_ownerless_old() { small; mkdir "$LEASES/.lock"; set_age "$LEASES/.lock" 5; }
lock_ownerless_new() { small; mkdir "$LEASES/.lock"; set_age "$LEASES/.lock" -30; }  # young for 30 s
lock_ownerless_future() { small; mkdir "$LEASES/.lock"; set_age "$LEASES/.lock" -90; }
lock_ownerless_claimed() { lock_ownerless_old; echo "$TOKEN_L1" >"$LEASES/.lock.claim.$L1"; }
lock_ownerless_dead_claim() { lock_ownerless_old; echo "$D linux $BOOT_ID 1" >"$LEASES/.lock.claim.$D"; }
lock_empty_owner() { lock_ownerless_old; : >"$LEASES/.lock/owner"; }
lock_owner_dir() { lock_ownerless_old; mkdir "$LEASES/.lock/owner"; set_age "$LEASES/.lock" 5; }
lock_link_dead() { small; ln -s "$D linux $BOOT_ID 7" "$LEASES/.lock"; }
lock_link_live() { small; ln -s "$TOKEN_L1" "$LEASES/.lock"; }
lock_break_dead() { lock_dead; mkdir "$LEASES/.lock.break"; echo "$D2 " >"$LEASES/.lock.break/owner"; }
lock_break_live() { lock_dead; mkdir "$LEASES/.lock.break"; echo "$TOKEN_L1" >"$LEASES/.lock.break/owner"; }
lock_break_orphan() { lock_dead; mkdir "$LEASES/.lock.break"; set_age "$LEASES/.lock.break" 5; }

export GSTACK_LEASE_LOCK_TRIES=2
compare lock_live "a live holder: exit 3, locked by live process" lock_live touch --root "$REPO" --pid "$L3"
compare lock_dead "a dead holder's lock is broken" lock_dead touch --root "$REPO" --pid "$L3"
compare lock_padded "an owner with a zero-padded pid is gone" lock_padded touch --root "$REPO" --pid "$L3"
compare lock_stale "an owner whose pid now runs another process is gone" lock_stale_owner touch --root "$REPO" --pid "$L3"
compare lock_noid "an owner without identity whose pid lives holds" lock_no_identity touch --root "$REPO" --pid "$L3"
compare lock_orphan "an ownerless lock 5 s old is broken" lock_ownerless_old touch --root "$REPO" --pid "$L3"
compare lock_young "an ownerless young lock is not: cannot take" lock_ownerless_new touch --root "$REPO" --pid "$L3"
compare lock_future "an ownerless lock a minute in the future is broken" lock_ownerless_future touch --root "$REPO" --pid "$L3"
compare lock_claimed "an ownerless lock with a live claimant is not broken" lock_ownerless_claimed touch --root "$REPO" --pid "$L3"
compare lock_deadclaim "a dead claimant does not keep an ownerless lock" lock_ownerless_dead_claim touch --root "$REPO" --pid "$L3"
compare lock_emptyowner "an empty owner file is ownerless" lock_empty_owner touch --root "$REPO" --pid "$L3"
compare lock_ownerdir "an owner that cannot be read is never ownerless" lock_owner_dir touch --root "$REPO" --pid "$L3"
compare lock_link_dead "a symbolic-link lock of a dead holder is removed" lock_link_dead touch --root "$REPO" --pid "$L3"
compare lock_link_live "a symbolic-link lock of a live holder holds" lock_link_live touch --root "$REPO" --pid "$L3"
compare lock_break_dead "a .lock.break of a dead breaker is cleared" lock_break_dead touch --root "$REPO" --pid "$L3"
compare lock_break_live "a live breaker's .lock.break: cannot take" lock_break_live touch --root "$REPO" --pid "$L3"
compare lock_break_orphan "an orphaned .lock.break is cleared" lock_break_orphan touch --root "$REPO" --pid "$L3"
compare live_locked "live: a stale lease under a live lock is printed, not reclaimed" lock_live live --root "$REPO"
GSTACK_LEASE_LOCK_TRIES=0 compare tries0 "GSTACK_LEASE_LOCK_TRIES=0: one try" lock_live touch --root "$REPO" --pid "$L3"
GSTACK_LEASE_LOCK_TRIES= compare tries_empty_dead "GSTACK_LEASE_LOCK_TRIES empty, dead holder" lock_dead touch --root "$REPO" --pid "$L3"
unset GSTACK_LEASE_LOCK_TRIES

# --- arguments, roots, directories -------------------------------------------------------------

compare badverb "an unknown verb" small bogus --root "$REPO"
compare badarg "an unknown argument" small list --root "$REPO" --bogus
compare badarg_first "an unknown argument is reported before an unknown verb" small bogus --zz
cd "$WORK" || exit 1
compare root_last "--root without a value: the default root (the script's checkout, the builtin's current directory)" small list --pid 5 --root
cd - >/dev/null || exit 1
compare notgit "a root that is not a checkout" small list --root "$WORK"
compare notgit_touch "touch outside a checkout writes nothing" small touch --root "$WORK/none" --pid "$L1"
compare pid_ignored "list ignores touch's options" leases list --root "$REPO" --pid "$L1" --from 3 --count-shared-harness
GSTACK_LEASE_DIR=$WORK/alt compare envdir "GSTACK_LEASE_DIR overrides the directory" small touch --root "$REPO" --pid "$L1"
same "GSTACK_LEASE_DIR: the lease is there" "$I_L1" "$(cat "$WORK/alt/$L1" 2>&1)"
GSTACK_LEASE_DIR=/proc/leasejudge-none/x compare mkdirfail "mkdir failing: its message, exit 2" small touch --root "$REPO" --pid "$L1"
GSTACK_LEASE_DIR=$WORK/alt compare envdir_notgit "GSTACK_LEASE_DIR still needs a checkout" small list --root "$WORK"

"$SEED" --help >/dev/null; same "the script's --help exits 0" 0 $?
leasejudge lease --help >"$WORK/help.out"; same "lease --help exits 0" 0 $?
check "lease --help prints the usage" grep -q "leasejudge lease touch" "$WORK/help.out"
leasejudge lease >/dev/null; same "lease without a verb prints the usage, exit 0" 0 $?

# --- both directions ---------------------------------------------------------------------------------

rm -rf "$LEASES"
"$SEED" touch --root "$REPO" --pid "$L1"
cp "$LEASES/$L1" "$WORK/by-script"
leasejudge lease touch --root "$REPO" --pid "$L1"
check "the builtin writes the script's bytes (identity line)" cmp -s "$WORK/by-script" "$LEASES/$L1"
"$SEED" touch --root "$REPO" --pid "$D"
cp "$LEASES/$D" "$WORK/by-script"
leasejudge lease touch --root "$REPO" --pid "$D"
check "the builtin writes the script's bytes (empty lease)" cmp -s "$WORK/by-script" "$LEASES/$D"

rm -rf "$LEASES"
leasejudge lease touch --root "$REPO" --pid "$L1"
leasejudge lease touch --root "$REPO" --pid "$L2"
echo "linux $BOOT_ID 1" >"$LEASES/$L2"
same "the script lists the builtin's leases" "$(printf '%s\n' "$L1 0m alive" "$L2 0m stale" | sort)" \
  "$("$SEED" list --root "$REPO")"
same "the script reclaims the builtin's stale lease" "gstack-lease: reclaimed stale lease $L2 (0m; recorded 'linux $BOOT_ID 1', pid $L2 is now sleep '$(ident "$L2")')" \
  "$("$SEED" live --root "$REPO" 2>&1 >/dev/null)"
"$SEED" touch --root "$REPO" --pid "$L2"
echo "linux $BOOT_ID 1" >"$LEASES/$L1"
same "the builtin lists the script's leases" "$(printf '%s\n' "$L1 0m stale" "$L2 0m alive" | sort)" \
  "$(leasejudge lease list --root "$REPO")"
same "the builtin reclaims the script's stale lease" "gstack-lease: reclaimed stale lease $L1 (0m; recorded 'linux $BOOT_ID 1', pid $L1 is now sleep '$(ident "$L1")')" \
  "$(leasejudge lease live --root "$REPO" 2>&1 >/dev/null)"
same "the script counts the builtin's live lease" "$L2 0m sleep" "$("$SEED" live --root "$REPO")"

tap_done
