#!/usr/bin/env bash
# The bash builtin in a real bash: loading, help and usage, every verb, the shell's
# environment, interrupts, write errors, unloading.
. "$(dirname "${BASH_SOURCE[0]}")/../../../tests/fixtures/leasedir/tap.sh"
need_builtin

matches() { [[ $1 =~ $2 ]]; }
ident() {
  local st
  st=$(cat "/proc/$1/stat") || return 1
  st=${st##*) }
  echo "linux $BOOT_ID $(echo "$st" | awk '{print $20}')"
}

# --- loading, help, usage --------------------------------------------------------------

same "enable -f loads the builtin" builtin "$(type -t leasejudge)"
help leasejudge >"$WORK/help" 2>&1
same "help leasejudge exits 0" 0 $?
check "help leasejudge shows the verbs" grep -q "lease touch|live|list" "$WORK/help"
leasejudge --help >"$WORK/out" 2>"$WORK/err"
same "leasejudge --help: exit 0" 0 $?
check "leasejudge --help: the verbs on stdout" grep -q "^  step sweep " "$WORK/out"
leasejudge >"$WORK/out" 2>"$WORK/err"
same "no verb: exit 2" 2 $?
check "no verb: the verbs on stderr" grep -q "^  step sweep " "$WORK/err"
same "no verb: nothing on stdout" "" "$(cat "$WORK/out")"
leasejudge bogus >"$WORK/out" 2>"$WORK/err"
same "an unknown verb: exit 2" 2 $?
same "an unknown verb: one line naming it and the hint" "leasejudge: unknown verb bogus (see leasejudge --help)" \
  "$(cat "$WORK/err")"
for bad in "identity abc" "identity 1 2" "identity 0" "identity -5" "identity 2147483648" "owner x" \
  "machine-id x" "version x"; do
  # shellcheck disable=SC2086
  leasejudge $bad >/dev/null 2>"$WORK/err"
  # One line: what is wrong, and the hint to the verb's --help.
  same "leasejudge $bad: usage, exit 2" "2 1 1" \
    "$? $(wc -l <"$WORK/err") $(grep -c "^leasejudge ${bad%% *}: .* (see leasejudge ${bad%% *} --help)$" "$WORK/err")"
done
leasejudge step watch --store mem: --node n1 >"$WORK/out" 2>"$WORK/err"
same "step watch in the builtin: refused, exit 2, one line saying why" \
  "2 leasejudge step watch: step watch runs as a service, from the leasejudge command; the builtin cannot host it (see leasejudge step watch --help)" \
  "$? $(cat "$WORK/err")"

# A refused step plan opens nothing it leaves open in the shell; one over threads answers
# as one over a single thread, the threads gone when it returns.
printf '{"key":"n1.a","value":{"state":"running","owner":"o.1.2"}}\n' >"$WORK/one.jsonl"
fds=$(ls /proc/$$/fd | wc -l)
for _ in $(seq 50); do leasejudge step plan --node n1 --threads 0 "$WORK/one.jsonl" 2>/dev/null; done
same "step plan refused 50 times: exit 2, the shell's descriptors as they were" "2 $fds" \
  "$(leasejudge step plan --node n1 --threads 0 "$WORK/one.jsonl" 2>/dev/null; echo $?) $(ls /proc/$$/fd | wc -l)"
for i in $(seq 6000); do
  printf '{"key":"n1.s%d","value":{"id":"s%d","state":"running","owner":"o.1.2","result":{"log":"%0200d"}}}\n' "$i" "$i" 0
done >"$WORK/many.jsonl"
leasejudge step plan --node n1 --owner no-boot-id.1.1 --rule not-self --threads 1 "$WORK/many.jsonl" >"$WORK/many.1" 2>/dev/null
leasejudge step plan --node n1 --owner no-boot-id.1.1 --rule not-self --threads 4 "$WORK/many.jsonl" >"$WORK/many.4" 2>/dev/null
same "step plan --threads 4 in the builtin: every line ended, as over one thread" "6000 same" \
  "$(grep -c '"action":"end"' "$WORK/many.4") $(cmp -s "$WORK/many.1" "$WORK/many.4" && echo same)"
same "... no thread left in the shell" 1 "$(ls /proc/$$/task | wc -l)"

# --- identity, owner, machine-id, version -----------------------------------------------------

same "identity: this shell's lease identity" "$(ident $$)" "$(leasejudge identity)"
same "identity PID" "$(ident 1)" "$(leasejudge identity 1)"
(leasejudge identity >"$WORK/subshell")
same "identity in a subshell is still \$\$'s" "$(ident $$)" "$(cat "$WORK/subshell")"
dead_pid
out=$(leasejudge identity "$REPLY" 2>"$WORK/err")
same "identity of a dead pid: nothing, exit 1" "1 " "$? $out"
same "... and a message" "leasejudge identity: pid $REPLY has no identity (no such process, or its start cannot be read)" \
  "$(cat "$WORK/err")"
owner=$(leasejudge owner)
check "owner: <boot id>.<pid>.<start base 36>" matches "$owner" "^$BOOT_ID\\.$$\\.[0-9a-z]+$"
start_ms=$(( $(awk '/^btime/ {print $2}' /proc/stat) * 1000 + $(ident $$ | awk '{print $3}') * 1000 / $(getconf CLK_TCK) ))
same "owner: the start is the kernel's, in ms base 36" "$start_ms" "$((36#${owner##*.}))"
out=$(leasejudge owner "$REPLY" 2>/dev/null)
same "owner of a dead pid: nothing, exit 1" "1 " "$? $out"
mid=$(leasejudge machine-id)
rc=$?
if [ $rc -eq 0 ]; then check "machine-id: 32 lowercase hex" matches "$mid" "^[0-9a-f]{32}$"
else same "machine-id: none here, exit 1 and nothing printed" "1 " "$rc $mid"; fi
out=$(CLOUD_RUN_EXECUTION=x leasejudge machine-id 2>/dev/null)
same "machine-id under Cloud Run: none" "1 " "$? $out"
check "version: MAJOR.MINOR.PATCH" matches "$(leasejudge version)" "^[0-9]+\\.[0-9]+\\.[0-9]+$"

# --- lease: defaults and the shell's environment ---------------------------------------------

cd "$REPO" || exit 1
leasejudge lease touch
same "lease touch records \$\$ by default" "$(ident $$)" "$(cat "$LEASES/$$")"
rm -f "$LEASES/$$"
(leasejudge lease touch)
same "... from a subshell too" "$(ident $$)" "$(cat "$LEASES/$$" 2>&1)"
start_sleeper
S=$REPLY
leasejudge lease touch --from "$S"
same "lease touch --from" "$(ident "$S")" "$(cat "$LEASES/$S")"
# In the directory's glob order, as the script lists: by name (1016 before 926).
same "lease list" "$(printf '%s\n' "$$ 0m alive" "$S 0m alive" | sort)" "$(leasejudge lease list)"
same "lease live --exclude-ancestry-of \$\$" "$S 0m sleep" "$(leasejudge lease live --exclude-ancestry-of $$)"
mkdir -p "$WORK/sub/dir"
cd "$WORK/sub/dir" || exit 1
leasejudge lease list >/dev/null 2>"$WORK/err"
same "outside a checkout: exit 2" 2 $?
same "... named by the current directory" "gstack-lease: $(pwd -P) is not a git checkout" "$(cat "$WORK/err")"
cd "$REPO" || exit 1

LEASEJUDGE_LEASE_DIR=$WORK/byenv leasejudge lease touch --pid "$S"
check "LEASEJUDGE_LEASE_DIR for one call" test -f "$WORK/byenv/$S"
GSTACK_LEASE_DIR=$WORK/bygstack leasejudge lease touch --pid "$S"
check "GSTACK_LEASE_DIR for one call" test -f "$WORK/bygstack/$S"
LEASEJUDGE_LEASE_DIR=$WORK/first GSTACK_LEASE_DIR=$WORK/second leasejudge lease touch --pid "$S"
check "LEASEJUDGE_LEASE_DIR comes first" test -f "$WORK/first/$S" -a ! -e "$WORK/second"
GSTACK_LEASE_DIR=$WORK/unexported
leasejudge lease touch --pid "$S"
check "a shell variable that is not exported is not the environment" test ! -e "$WORK/unexported"
unset GSTACK_LEASE_DIR

# the lock's tries, from the environment; LEASEJUDGE_ first
mkdir "$LEASES/.lock"
echo "$S $(ident "$S")" >"$LEASES/.lock/owner"
msg="gstack-lease: the lease directory is locked by live process $S; lease $$ not renewed"
t0=$EPOCHREALTIME
LEASEJUDGE_LEASE_LOCK_TRIES=3 GSTACK_LEASE_LOCK_TRIES=1000 leasejudge lease touch 2>"$WORK/err"
rc=$?
t1=$EPOCHREALTIME
same "a live holder: exit 3" 3 $rc
same "... and the script's message" "$msg" "$(cat "$WORK/err")"
check "LEASEJUDGE_LEASE_LOCK_TRIES=3: three tries, not a thousand (under 5 s)" \
  test $(( ${t1/./} - ${t0/./} )) -lt 5000000

# An interrupt stops the wait at once; the shell lives on and runs its trap. Without a
# trap, it ends the script as bash ends it for any command.
cat >"$WORK/int.sh" <<EOF
enable -f "$BUILTIN" leasejudge
trap 'echo trapped' INT
cd "$REPO"
echo ready
GSTACK_LEASE_LOCK_TRIES=100000 leasejudge lease touch --pid 7
echo "after \$?"
EOF
exec 3< <(lj_bash "$WORK/int.sh" 2>&1; echo "exit $?")
read -r line <&3
same "the waiting shell started" ready "$line"
sleep 0.5
waiter=$(pgrep -f "bash $WORK/int.sh" | head -1)
t0=$EPOCHREALTIME
kill -INT "$waiter"
rest=$(cat <&3)
t1=$EPOCHREALTIME
exec 3<&-
check "SIGINT ends the wait within 2 s" test $(( ${t1/./} - ${t0/./} )) -lt 2000000
same "bash runs its trap after the builtin returns 130" "trapped
after 130
exit 0" "$rest"
cat >"$WORK/int2.sh" <<EOF
enable -f "$BUILTIN" leasejudge
cd "$REPO"
echo ready
GSTACK_LEASE_LOCK_TRIES=100000 leasejudge lease touch --pid 7
echo "not reached"
EOF
exec 3< <(lj_bash "$WORK/int2.sh" 2>&1; echo "exit $?")
read -r line <&3
sleep 0.5
kill -INT "$(pgrep -f "bash $WORK/int2.sh" | head -1)"
same "an untrapped SIGINT ends a script during the wait" "exit 130" "$(cat <&3)"
exec 3<&-
same "the holder's lock is untouched" "$S $(ident "$S")" "$(cat "$LEASES/.lock/owner")"
check "no claim is left behind" test -z "$(find "$LEASES" -name '.lock.claim.*')"
rm -rf "$LEASES/.lock"

# The shared harness's name, from the environment.
same "LEASEJUDGE_SHARED_HARNESS names the harness" "$$ 0m bash" \
  "$(LEASEJUDGE_SHARED_HARNESS=bash leasejudge lease live --exclude-ancestry-of $$ --count-shared-harness | grep "^$$ ")"
same "... which is capy-server otherwise" "" \
  "$(leasejudge lease live --exclude-ancestry-of $$ --count-shared-harness | grep "^$$ ")"

# --- output -----------------------------------------------------------------------------------

leasejudge lease list >"$WORK/list"
same "stdout can be redirected" "$(leasejudge lease list)" "$(cat "$WORK/list")"
if [ -w /dev/full ]; then
  leasejudge lease list >/dev/full 2>"$WORK/err"
  same "a write error is a failure" 1 $?
  check "... and says so" grep -q "write error" "$WORK/err"
fi
echo "linux $BOOT_ID 1" >"$LEASES/$S"
leasejudge lease live >"$WORK/both" 2>&1
reclaimed="gstack-lease: reclaimed stale lease $S (0m; recorded 'linux $BOOT_ID 1', pid $S is now sleep '$(ident "$S")')"
if [[ $S < $$ ]]; then expected="$reclaimed"$'\n'"$$ 0m bash"; else expected="$$ 0m bash"$'\n'"$reclaimed"; fi
same "stderr and stdout keep their order" "$expected" "$(cat "$WORK/both")"

# --- lock run: the command's, not the builtin's --------------------------------------------------

leasejudge lock run --store mem: k -- touch "$WORK/ran" >"$WORK/out" 2>"$WORK/err"
same "lock run in the builtin: a usage error, exit 2" 2 $?
same "... saying to use the command" \
  "leasejudge lock run: lock run runs a command of its own: use the leasejudge command, not the shell builtin (see leasejudge lock run --help)" \
  "$(cat "$WORK/err")"
same "... and the command never ran" 1 "$([ -e "$WORK/ran" ]; echo $?)"
leasejudge lock run --help >"$WORK/out" 2>&1
check "lock run --help says it is not in the builtin" grep -q "Not in the bash builtin" "$WORK/out"

# --- the lock verbs' JSON: the token is fencing_token, as the command writes it ---------------

# The file store's file opens with "lj1 <revision>": the body's revision, read here.
file_revision() { sed -n '1s/^lj1 \([0-9]*\)$/\1/p' "$(grep -l "\"purpose\":\"$1\"" "$WORK"/locks/* | head -1)"; }
tokens() { python3 -c 'import json, sys
d = [json.loads(l) for l in open(sys.argv[1])]
d = [x for x in d if x.get("key") == sys.argv[2]][0]
print(d.get("fencing_token", "none"), d.get("revision", "none"))' "$@"; }
leasejudge lock acquire --store "file:$WORK/locks" --create-bucket bk --purpose "bk held" --json >"$WORK/acq" 2>/dev/null
rev=$(file_revision "bk held")
same "lock acquire --json in the builtin: fencing_token and revision, the body's" "$rev $rev" "$(tokens "$WORK/acq" bk)"
id=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$WORK/acq")
leasejudge lock renew --store "file:$WORK/locks" bk --id "$id" --json >"$WORK/renew" 2>/dev/null
rev=$(file_revision "bk held")
same "lock renew --json in the builtin: fencing_token and revision" "$rev $rev" "$(tokens "$WORK/renew" bk)"
leasejudge lock show --store "file:$WORK/locks" bk --json >"$WORK/show" 2>/dev/null
same "lock show --json in the builtin: fencing_token and revision" "$rev $rev" "$(tokens "$WORK/show" bk)"
leasejudge lock list --store "file:$WORK/locks" --json >"$WORK/list" 2>/dev/null
same "lock list --json in the builtin: fencing_token and revision" "$rev $rev" "$(tokens "$WORK/list" bk)"
leasejudge lock release --store "file:$WORK/locks" bk --id "$id" >/dev/null 2>&1

# A script run by systemd: where the shell's stderr is the journal's stream, each line
# carries its priority; JOURNAL_STREAM naming another file, none.
exec 5>"$WORK/journal"
JOURNAL_STREAM=$(stat -c '%d:%i' "$WORK/journal") leasejudge identity abc 2>&5
exec 5>&-
same "stderr the journal's stream: the usage error at priority 3" "<3>leasejudge identity: " \
  "$(head -c 24 "$WORK/journal")"
JOURNAL_STREAM=$(stat -c '%d:%i' "$WORK/journal") leasejudge identity abc 2>"$WORK/err"
same "JOURNAL_STREAM naming another file: no priority" "leasejudge identity: " "$(head -c 21 "$WORK/err")"

# --- unloading ----------------------------------------------------------------------------------

enable -d leasejudge
same "enable -d unloads it" 1 "$(type -t leasejudge >/dev/null; echo $?)"
enable -f "$BUILTIN" leasejudge
same "and it loads again" "$(ident $$)" "$(leasejudge identity)"

tap_done
