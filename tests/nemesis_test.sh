#!/usr/bin/env bash
# The nemesis (tests/nemesis.sh) on a lab of its own, three members and two clients:
# a TCP connect across an isolated member's link times out while the driver's link
# and the other links carry, and carries again once healed; a split cuts exactly
# across its sides; a one-way cut stops one direction of UDP and not the other; a
# loss of 30% drops about its share of 1,000 datagrams; a flapping member answers
# some connects and not others, then all once healed; every bad input (an unknown
# node, a partition of a stopped member, a heal with nothing cut, a bad percentage,
# a lab that does not exist, ...) is refused with its message and exit 2, leaving no
# namespace and no rule behind; a lab whose owner died is swept away with what ran in
# it; after `down` nothing of the lab is left. Needs root, ip, nft and python3 (it
# fails under CI=true without them). About 15 s.
set -u
src=${LEASEJUDGE_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
. "$src/tests/skip.sh"
nemesis=$src/tests/nemesis.sh
[ "$(id -u)" = 0 ] || skip_or_fail "network namespaces need root"
for tool in ip nft python3 timeout; do
  command -v "$tool" >/dev/null || skip_or_fail "$tool is not installed"
done
# Debian's python3 where there is one: a version manager's shim takes most of a second
# to start, and this test starts it a dozen times.
python=python3
[ -x /usr/bin/python3 ] && python=/usr/bin/python3

lab=$$
work=$(mktemp -d)
owners=()
cleanup() {
  bash "$nemesis" down "$lab" 2>/dev/null
  for o in "${owners[@]}"; do
    kill -9 "$o" 2>/dev/null
    bash "$nemesis" down "$o" 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT

. "$src/tests/tap.sh"
check() { # check NAME EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then ok "$1"; else notok "$1 (expected '$2', got '$3')"; fi
}
ours() { ip netns list | awk '{print $1}' | grep -E "^lj$1-" | sort; }
rules() { ip netns exec "lj$lab-lab" nft list ruleset; }

up_started=$(date +%s%N)
bash "$nemesis" up "$lab" 3 2 || { echo "not ok - the lab could not be made"; exit 1; }
echo "# lab made in $((($(date +%s%N) - up_started) / 1000000)) ms"
check "up makes a namespace for the lab, ctl, 3 members and 2 clients" \
  "$(printf 'lj%s-%s\n' "$lab" c0 "$lab" c1 "$lab" ctl "$lab" lab "$lab" m0 "$lab" m1 "$lab" m2 | sort)" "$(ours "$lab")"
check "each member has its address" "192.0.2.2" "$(bash "$nemesis" addr "$lab" m1)"

# A TCP server on every member answering "hi"; a UDP counter started on demand.
cat >"$work/serve.py" <<'EOF'
import socket, sys
kind, addr, port, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
if kind == "tcp":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(64)
    while True:
        c, _ = s.accept()
        c.sendall(b"hi")
        c.close()
# udp: count datagrams until none came for 0.3 s after the first, or 1.5 s before it.
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
s.bind((addr, port))
open(out + ".ready", "w").close()
count = 0
s.settimeout(1.5)
while True:
    try:
        s.recv(64)
        count += 1
        s.settimeout(0.3)
    except socket.timeout:
        break
open(out, "w").write(str(count))
EOF
for m in 0 1 2; do
  bash "$nemesis" run "$lab" "m$m" -- "$python" "$work/serve.py" tcp "192.0.2.$((m + 1))" 7000 - &
done
# The address of member m<i> or client c<i>, as nemesis.sh gives them.
addr() { case $1 in m*) echo "192.0.2.$((1 + ${1#m}))" ;; c*) echo "192.0.2.$((101 + ${1#c}))" ;; esac; }
# connects FROM MEMBER [SECONDS]: "hi" when a TCP connect from FROM's namespace to
# MEMBER got its answer within SECONDS (2), "timeout" when it did not.
connects() {
  local to
  to=$(addr "$2")
  bash "$nemesis" run "$lab" "$1" -- timeout "${3:-2}" bash -c "exec 3<>/dev/tcp/$to/7000 && head -c2 <&3" 2>/dev/null ||
    echo timeout
}
# udp FROM TO COUNT: COUNT datagrams from FROM to TO; prints how many arrived.
udp() {
  local to out
  to=$(addr "$2")
  out=$work/udp-$RANDOM
  bash "$nemesis" run "$lab" "$2" -- "$python" "$work/serve.py" udp "$to" 7001 "$out" &
  for _ in $(seq 100); do [ -e "$out.ready" ] && break; sleep 0.02; done
  bash "$nemesis" run "$lab" "$1" -- bash -c "for i in \$(seq $3); do printf x >/dev/udp/$to/7001; done" 2>/dev/null
  wait $!
  cat "$out"
}
for _ in $(seq 100); do
  [ "$(connects c0 m0)$(connects c0 m1)$(connects c0 m2)" = hihihi ] && break
  sleep 0.05
done
check "before any fault a client reaches every member" "hihihi" "$(connects c0 m0)$(connects c0 m1)$(connects c0 m2)"
bash "$nemesis" status "$lab" | grep -q "^m1 192.0.2.2 runs: [0-9]" && ok "status says what runs on m1" ||
  notok "status says what runs on m1: $(bash "$nemesis" status "$lab")"

# Isolation.
bash "$nemesis" isolate "$lab" m1
check "an isolated member: a client's connect times out" timeout "$(connects c0 m1 0.5)"
check "an isolated member: the other members' links carry" hihi "$(connects c0 m0)$(connects c1 m2)"
check "an isolated member: the driver's link carries" hi "$(connects ctl m1)"
bash "$nemesis" heal "$lab"
check "healed: the client's connect is answered again" hi "$(connects c0 m1)"

# A split: m0 and c0 on one side.
bash "$nemesis" split "$lab" m0,c0
check "a split: each side reaches its own and not the other" "hi timeout timeout hi" \
  "$(connects c0 m0) $(connects c0 m1 0.5) $(connects c1 m0 0.5) $(connects c1 m2)"
bash "$nemesis" heal "$lab"
check "healed split" "hihi" "$(connects c1 m0)$(connects c0 m2)"

# A one-way cut: c0's packets to m1 dropped, m1's to c0 carried.
bash "$nemesis" cut "$lab" c0 m1
check "one way cut: nothing from c0 reaches m1" 0 "$(udp c0 m1 50)"
check "one way cut: all from m1 reaches c0" 50 "$(udp m1 c0 50)"
check "one way cut: a TCP connect from c0 to m1 times out" timeout "$(connects c0 m1 0.5)"
bash "$nemesis" heal "$lab"
check "healed one-way cut" 50 "$(udp c0 m1 50)"

# Loss: 30% of 1,000 datagrams; 700 arrive on average, 14.5 the standard deviation:
# 640..760 is more than 4 of them each way.
bash "$nemesis" lose "$lab" c0 m1 30
got=$(udp c0 m1 1000)
echo "# lose 30%: $got of 1000 datagrams arrived"
if [ "$got" -ge 640 ] && [ "$got" -le 760 ]; then ok "30% loss drops about its share ($got of 1000 arrived)"; else
  notok "30% loss drops about its share: $got of 1000 arrived, not 640..760"
fi
check "a loss is on its link only" 200 "$(udp c1 m1 200)"
bash "$nemesis" heal "$lab"

# Flapping every 200 ms: of 12 connects 50 ms apart, some are answered, some not.
bash "$nemesis" flap "$lab" m1 200
answered=0 lost=0
for _ in $(seq 12); do
  if [ "$(connects c0 m1 0.1)" = hi ]; then answered=$((answered + 1)); else lost=$((lost + 1)); fi
  sleep 0.05
done
echo "# flapping: $answered of 12 connects answered"
[ "$answered" -gt 0 ] && [ "$lost" -gt 0 ] && ok "a flapping member answers some connects and not others" ||
  notok "a flapping member answers some connects and not others ($answered answered, $lost not)"
bash "$nemesis" heal "$lab"
check "flapping stopped by heal" "hihihi" "$(connects c0 m1)$(connects c0 m1)$(connects c0 m1)"
check "flapping stopped: no flapper left" "" "$(pgrep -f "nemesis.sh _flapper $lab " || true)"

# Bad input: refused, exit 2, a message saying what, and nothing changed.
bash "$nemesis" stop "$lab" m2
before_ns=$(ours "$lab")
before_rules=$(rules)
refused() { # refused NAME MESSAGE ARGS...
  local name=$1 message=$2 out rc
  shift 2
  out=$(bash "$nemesis" "$@" 2>&1)
  rc=$?
  if [ "$rc" = 2 ] && [[ $out == *"$message"* ]]; then ok "refused: $name"; else
    notok "refused: $name (exit $rc, said: $out)"
  fi
}
refused "an unknown member" "lab $lab has no node m7" isolate "$lab" m7
refused "an unknown node name" "'db1' is no node" isolate "$lab" db1
refused "a partition of a stopped member" "member m2 of lab $lab runs nothing" isolate "$lab" m2
refused "a split with a stopped member" "member m2 of lab $lab runs nothing" split "$lab" m2,c0
refused "a heal with nothing cut" "nothing to heal in lab $lab" heal "$lab"
refused "a percentage of 0" "'0' is no percentage" lose "$lab" c0 m1 0
refused "a percentage of 101" "'101' is no percentage" lose "$lab" c0 m1 101
refused "a percentage that is no whole number" "'2.5' is no percentage" lose "$lab" c0 m1 2.5
refused "a percentage that is no number" "'ten' is no percentage" lose "$lab" c0 m1 ten
refused "a loss on a node and itself" "not m1 and itself" lose "$lab" m1 m1 5
refused "a cut of the driver's link" "no fault cuts it" isolate "$lab" ctl
refused "a split with every member on one side" "members on both sides" split "$lab" c0,c1
refused "a cut with a node on both ends" "m1 is on both ends" cut "$lab" m1,c0 m1
refused "a flapping period too short" "'10' ms" flap "$lab" m1 10
refused "a lab that does not exist" "there is no lab 999999999" isolate 999999999 m1
refused "a heal of a lab that does not exist" "there is no lab 999999999" heal 999999999
refused "a lab named by no pid" "'abc' is no lab" isolate abc m1
refused "a second lab of one owner" "lab $lab exists already" up "$lab"
refused "an unknown verb" "unknown verb 'partition'" partition "$lab" m1
check "bad input left the namespaces as they were" "$before_ns" "$(ours "$lab")"
check "bad input left no rule" "$before_rules" "$(rules)"
check "no rule is in place after the faults healed" "" "$(rules | grep drop || true)"

# A stale lab: its owner died; the sweep ends what ran in it and removes it.
sleep 60 &
stale=$!
owners+=("$stale")
bash "$nemesis" up "$stale" 1 1
bash "$nemesis" run "$stale" m0 -- sleep 60 &
orphan=$!
for _ in $(seq 100); do [ -n "$(ip netns pids "lj$stale-m0")" ] && break; sleep 0.02; done
kill -9 "$stale"
wait "$stale" 2>/dev/null
bash "$nemesis" sweep 2>"$work/sweep"
check "the sweep says what it removed" "nemesis: removed the stale lab $stale (its owner is gone)" "$(cat "$work/sweep")"
check "the stale lab's namespaces are gone" "" "$(ours "$stale")"
wait "$orphan" 2>/dev/null
kill -0 "$orphan" 2>/dev/null && notok "what ran in the stale lab ended" || ok "what ran in the stale lab ended"
check "the stale lab's state is gone" "" "$(ls -d "${LEASEJUDGE_NEMESIS_DIR:-/run/leasejudge-nemesis}/$stale" 2>/dev/null)"

# Down: nothing left.
bash "$nemesis" down "$lab"
check "down leaves no namespace" "" "$(ours "$lab")"
check "down ends what ran in the lab" "" "$(pgrep -f "$work/serve.py" || true)"
check "down leaves no state" "" "$(ls -d "${LEASEJUDGE_NEMESIS_DIR:-/run/leasejudge-nemesis}/$lab" 2>/dev/null)"
refused "a lab taken down" "there is no lab $lab" down "$lab"
echo "1..$n"
[ "$failed" -eq 0 ]
