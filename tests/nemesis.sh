#!/usr/bin/env bash
# The nemesis: network faults at the kernel level for the partition tests.
#
# A lab is a network namespace of the test's own holding a bridge (br0); each cluster
# member (m0, m1, ...) and each client (c0, c1, ...) is a namespace of its own with one
# veth (eth0) whose other end is a port of br0 named after the node, and an address of
# 192.0.2.0/24 (TEST-NET-1) with no route anywhere else: nothing leaves the lab, and
# nothing outside it is touched. A control namespace (ctl) holds the test's driver on
# a link no fault cuts. Faults are nftables rules of the bridge family in the lab's
# namespace (table bridge nem): `ip netns del` takes them with it.
#
# A lab is named by its owner, the pid of the test that made it: its namespaces are
# lj<pid>-lab, lj<pid>-ctl, lj<pid>-m0, ...; its state (what runs where) is under
# $LEASEJUDGE_NEMESIS_DIR (/run/leasejudge-nemesis). A lab whose owner is gone is
# stale: `sweep`, which `up` runs first, removes it with everything that runs in it,
# so a crashed run leaves nothing behind for long.
#
# usage: nemesis.sh VERB [LAB [ARGS...]]      LAB: the owner's pid
#   up LAB [MEMBERS [CLIENTS]]  make the lab: MEMBERS (3) members, CLIENTS (2) clients
#   down LAB                    end what runs in it; delete its namespaces and rules
#   sweep                       remove every stale lab
#   run LAB NODE -- CMD [ARG]   run CMD in NODE's namespace; this process becomes CMD
#                               (its pid is the caller's child's), recorded in the lab
#   stop LAB NODE               end everything that runs in NODE's namespace
#   addr LAB NODE               NODE's address
#   status LAB                  the nodes, what runs in each, the faults in place
#   isolate LAB NODE            NODE cut from every other member and client, both ways
#                               (isolating the leader: name the node found leading)
#   split LAB NODE[,NODE...]    the nodes named on one side, every other member and
#                               client on the other (each side holds a member)
#   cut LAB FROM TO             one way: FROM's packets to TO dropped, TO's to FROM kept
#                               (FROM and TO may be comma-separated lists)
#   flap LAB NODE [MS]          NODE isolated and healed every MS ms (300), in the
#                               background, until heal
#   lose LAB A B PERCENT        on the link between A and B, PERCENT% of the packets
#                               each way dropped at random
#   heal LAB                    every fault removed, flapping stopped
# A member named in a fault must run something (a partition of a stopped member is
# refused); the driver's ctl is never cut. Exit status: 0 done; 2 bad input (nothing
# changed); 1 the system refused (the lab is then as it was, or removed by `up`).
set -uo pipefail

me=nemesis
state_root=${LEASEJUDGE_NEMESIS_DIR:-/run/leasejudge-nemesis}
script=$(readlink -f "${BASH_SOURCE[0]}")

say() { echo "$me: $*" >&2; }
bad() { say "$*"; exit 2; }
fail() { say "$*"; exit 1; }

usage() {
  sed -n '/^# usage:/,/^# A member named/p' "$script" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# --- names ------------------------------------------------------------------------

ns_of() { echo "lj$1-$2"; }  # lab, node -> namespace

# The address of a node: members 192.0.2.1.., clients 192.0.2.101.., ctl 192.0.2.254.
addr_of() {
  case $1 in
    ctl) echo 192.0.2.254 ;;
    m*) echo "192.0.2.$((1 + ${1#m}))" ;;
    c*) echo "192.0.2.$((101 + ${1#c}))" ;;
  esac
}

# The start time of a running process (field 22 of /proc/PID/stat), or nothing (a
# zombie, which its reaper may leave a while, runs nothing).
start_of() {
  local stat rest
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  rest=${stat##*) }
  set -- $rest
  [[ $1 == [ZX] ]] || echo "${20}"
}

# The labs whose namespaces or state exist, one owner pid a line.
labs() {
  {
    ip netns list 2>/dev/null | awk '{print $1}' | sed -n 's/^lj\([0-9][0-9]*\)-.*/\1/p'
    ls "$state_root" 2>/dev/null | grep -E '^[0-9]+$'
  } | sort -un
}

# The namespaces of a lab, its lab namespace last.
namespaces_of() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^lj$1-" | grep -v -- '-lab$'
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^lj$1-lab$"
  return 0
}

# Whether the lab's owner still runs: its pid alive with the start time recorded.
owner_alive() {
  local now was
  now=$(start_of "$1")
  [ -n "$now" ] || return 1
  was=$(cat "$state_root/$1/owner_start" 2>/dev/null) || return 0
  [ "$now" = "$was" ]
}

lab_exists() { [ -e "/run/netns/$(ns_of "$1" lab)" ]; }

need_lab() {
  [[ $1 =~ ^[0-9]+$ ]] || bad "'$1' is no lab: a lab is named by its owner's pid"
  lab_exists "$1" || bad "there is no lab $1 (nemesis.sh up $1 makes one)"
}

# The member and client nodes of a lab, in order.
nodes_of() {
  ip netns list 2>/dev/null | awk '{print $1}' | sed -n "s/^lj$1-\([mc][0-9][0-9]*\)\$/\1/p" | sort -k1.1,1.1r -k1.2n
}

# The pids running in a namespace (those whose network namespace is it).
pids_in() { ip netns pids "$1" 2>/dev/null; }

# Whether pid runs in namespace ns.
runs_in() {
  local want have
  want=$(stat -L -c %i "/run/netns/$2" 2>/dev/null) || return 1
  have=$(readlink "/proc/$1/ns/net" 2>/dev/null) || return 1
  [ "$have" = "net:[$want]" ]
}

# A node named in a fault: a member or client of the lab, never the driver's ctl; a
# member must run something.
need_node() {
  local lab=$1 node=$2
  [ "$node" != ctl ] || bad "ctl is the driver's link: no fault cuts it"
  [[ $node =~ ^[mc](0|[1-9][0-9]?)$ ]] || bad "'$node' is no node: members are m0, m1, ..., clients c0, c1, ..."
  [ -e "/run/netns/$(ns_of "$lab" "$node")" ] ||
    bad "lab $lab has no node $node (it has: $(nodes_of "$lab" | tr '\n' ' '))"
  if [[ $node == m* ]] && [ -z "$(pids_in "$(ns_of "$lab" "$node")")" ]; then
    bad "member $node of lab $lab runs nothing: a stopped member cannot be partitioned"
  fi
}

# A comma-separated list of nodes, checked, as an nft set: { "m0", "c1" }.
node_set() {
  local lab=$1 list=$2 n out=""
  [ -n "$list" ] || bad "no node named"
  IFS=, read -ra names <<<"$list"
  for n in "${names[@]}"; do
    need_node "$lab" "$n"
    out+="${out:+, }\"$n\""
  done
  echo "{ $out }"
}

in_list() { [[ ",$2," == *",$1,"* ]]; }

# --- the lab ------------------------------------------------------------------------

labnft() { ip netns exec "$(ns_of "$1" lab)" nft "${@:2}"; }

# End every process in a namespace: SIGTERM, SIGKILL after 3 s.
end_all_in() {
  local ns=$1 pids i
  pids=$(pids_in "$ns")
  [ -n "$pids" ] || return 0
  kill -TERM $pids 2>/dev/null
  for i in $(seq 60); do
    pids=$(pids_in "$ns")
    [ -n "$pids" ] || return 0
    sleep 0.05
  done
  kill -KILL $pids 2>/dev/null
  for i in $(seq 40); do
    [ -n "$(pids_in "$ns")" ] || return 0
    sleep 0.05
  done
}

# End the recorded processes of the driver's namespace (never the driver itself: it
# joined ctl, it was not run there).
end_recorded_in_ctl() {
  local lab=$1 ns pid
  ns=$(ns_of "$lab" ctl)
  [ -f "$state_root/$lab/pids/ctl" ] || return 0
  while read -r pid; do
    runs_in "$pid" "$ns" && kill -KILL "$pid" 2>/dev/null
  done <"$state_root/$lab/pids/ctl"
  return 0
}

remove_lab() {
  local lab=$1 ns
  stop_flapping "$lab"
  for ns in $(namespaces_of "$lab"); do
    case $ns in
      *-ctl) end_recorded_in_ctl "$lab" ;;
      *) end_all_in "$ns" ;;
    esac
  done
  for ns in $(namespaces_of "$lab"); do ip netns del "$ns" 2>/dev/null || say "could not delete namespace $ns"; done
  rm -rf "${state_root:?}/$lab"
}

cmd_sweep() {
  local lab
  for lab in $(labs); do
    owner_alive "$lab" && continue
    remove_lab "$lab"
    say "removed the stale lab $lab (its owner is gone)"
  done
  return 0
}

# The nodes: a namespace each, a veth whose lab end is a port of br0 named after the
# node, its address, a MAC made from it (locally administered), and every other
# node's MAC as a permanent neighbour: no ARP
# crosses the bridge, so a one-way cut stops exactly one direction (a cut ARP reply
# would stop both).
add_nodes() {
  local lab=$1 node other ports="" a
  shift
  local -A addr mac
  for node in "$@"; do
    a=$(addr_of "$node")
    addr[$node]=$a
    printf -v "mac[$node]" '02:00:c0:00:02:%02x' "${a##*.}"
    ip netns add "$(ns_of "$lab" "$node")" || return 1
    ports+="link add $node type veth peer name eth0 netns lj$lab-$node"$'\n'
    ports+="link set $node master br0 up"$'\n'
  done
  ip -n "$(ns_of "$lab" lab)" -b - <<<"$ports" || return 1
  for node in "$@"; do
    {
      echo "link set lo up"
      echo "link set eth0 address ${mac[$node]}"
      echo "addr add ${addr[$node]}/24 dev eth0"
      echo "link set eth0 up"
      for other in "$@"; do
        [ "$other" = "$node" ] || echo "neigh replace ${addr[$other]} lladdr ${mac[$other]} dev eth0 nud permanent"
      done
    } | ip -n "lj$lab-$node" -b - || return 1
  done
}

# The lab's namespace and its bridge.
add_bridge() {
  local ns
  ns=$(ns_of "$1" lab)
  ip netns add "$ns" && ip -n "$ns" -b - <<EOF
link set lo up
link add br0 type bridge
link set br0 up
EOF
}

cmd_up() {
  [ $# -ge 1 ] && [ $# -le 3 ] || usage
  local lab=$1 members=${2:-3} clients=${3:-2} i
  [[ $lab =~ ^[0-9]+$ ]] || bad "'$lab' is no lab: a lab is named by its owner's pid"
  [[ $members =~ ^[1-9]$ ]] || bad "'$members' members: a lab holds 1 to 9"
  [[ $clients =~ ^(0|[1-9][0-9]?)$ ]] && [ "$clients" -le 50 ] || bad "'$clients' clients: a lab holds 0 to 50"
  [ "$lab" -gt 1 ] || bad "pid $lab owns no lab: a lab belongs to the test that makes it"
  [ -n "$(start_of "$lab")" ] || bad "no process $lab runs: a lab belongs to the live test that makes it"
  command -v nft >/dev/null || fail "nft is not installed (apt-get install nftables)"
  cmd_sweep
  lab_exists "$lab" && bad "lab $lab exists already"
  mkdir -p "$state_root/$lab/pids" || fail "cannot write $state_root/$lab"
  start_of "$lab" >"$state_root/$lab/owner_start"
  if ! add_bridge "$lab"; then
    remove_lab "$lab"
    fail "could not make the lab's namespace and bridge"
  fi
  # Faults are rules of two chains: cut (every fault but flapping) and flap (the
  # flapper's own, so that it never touches the others).
  if ! labnft "$lab" -f - <<EOF; then
table bridge nem {
  chain cut { type filter hook forward priority 0; policy accept; }
  chain flap { type filter hook forward priority 1; policy accept; }
}
EOF
    remove_lab "$lab"
    fail "nftables refused the lab's table (is nf_tables in the kernel?)"
  fi
  local nodes=(ctl)
  for ((i = 0; i < members; i++)); do nodes+=("m$i"); done
  for ((i = 0; i < clients; i++)); do nodes+=("c$i"); done
  if ! add_nodes "$lab" "${nodes[@]}"; then
    remove_lab "$lab"
    fail "could not make the lab's nodes"
  fi
}

cmd_down() {
  [ $# -eq 1 ] || usage
  [[ $1 =~ ^[0-9]+$ ]] || bad "'$1' is no lab: a lab is named by its owner's pid"
  [ -n "$(namespaces_of "$1")" ] || [ -d "$state_root/$1" ] || bad "there is no lab $1"
  remove_lab "$1"
}

cmd_run() {
  [ $# -ge 4 ] && [ "$3" = "--" ] || usage
  local lab=$1 node=$2 ns
  need_lab "$lab"
  ns=$(ns_of "$lab" "$node")
  [[ $node =~ ^([mc](0|[1-9][0-9]?)|ctl)$ ]] && [ -e "/run/netns/$ns" ] ||
    bad "lab $lab has no node $node (it has: ctl $(nodes_of "$lab" | tr '\n' ' '))"
  echo $$ >>"$state_root/$lab/pids/$node"
  exec ip netns exec "$ns" "${@:4}"
}

cmd_stop() {
  [ $# -eq 2 ] || usage
  need_lab "$1"
  [ "$2" != ctl ] || bad "ctl holds the driver: stop its own processes there"
  [ -e "/run/netns/$(ns_of "$1" "$2")" ] || bad "lab $1 has no node $2"
  end_all_in "$(ns_of "$1" "$2")"
}

cmd_addr() {
  [ $# -eq 2 ] || usage
  need_lab "$1"
  [ -e "/run/netns/$(ns_of "$1" "$2")" ] || bad "lab $1 has no node $2"
  addr_of "$2"
}

cmd_status() {
  [ $# -eq 1 ] || usage
  need_lab "$1"
  local node
  for node in ctl $(nodes_of "$1"); do
    echo "$node $(addr_of "$node") runs: $(pids_in "$(ns_of "$1" "$node")" | tr '\n' ' ')"
  done
  flapper_running "$1" && echo "flapping: pid $(cat "$state_root/$1/flap.pid")"
  labnft "$1" list table bridge nem | grep -E 'drop' | sed 's/^[[:space:]]*/fault: /'
  return 0
}

# --- faults -------------------------------------------------------------------------

# Add rules to the cut chain, all or none (one nft transaction).
add_rules() {
  local lab=$1
  shift
  local text="" r
  for r in "$@"; do text+="add rule bridge nem cut $r"$'\n'; done
  labnft "$lab" -f - <<<"$text" || fail "nftables refused the rules"
}

# Every member and client of the lab not in the comma-separated list, as an nft set;
# nothing when none is left.
others_set() {
  local lab=$1 list=$2 n out=""
  for n in $(nodes_of "$lab"); do
    in_list "$n" "$list" || out+="${out:+, }\"$n\""
  done
  [ -n "$out" ] && echo "{ $out }"
}

cmd_isolate() {
  [ $# -eq 2 ] || usage
  need_lab "$1"
  local lab=$1 node=$2 one rest
  [[ $node != *,* ]] || bad "isolate takes one node (split cuts several off)"
  one=$(node_set "$lab" "$node") || exit
  rest=$(others_set "$lab" "$node") || bad "lab $lab has no other node to cut $node from"
  add_rules "$lab" "iifname $one oifname $rest drop comment \"isolate $node\"" \
    "iifname $rest oifname $one drop comment \"isolate $node\""
}

cmd_split() {
  [ $# -eq 2 ] || usage
  need_lab "$1"
  local lab=$1 side=$2 a b n members_a=0 members_b=0
  a=$(node_set "$lab" "$side") || exit
  b=$(others_set "$lab" "$side") || bad "every node is on one side: nothing to split"
  for n in $(nodes_of "$lab"); do
    [[ $n == m* ]] || continue
    if in_list "$n" "$side"; then members_a=$((members_a + 1)); else members_b=$((members_b + 1)); fi
  done
  [ "$members_a" -gt 0 ] && [ "$members_b" -gt 0 ] ||
    bad "a split leaves members on both sides: $side and the others"
  add_rules "$lab" "iifname $a oifname $b drop comment \"split $side\"" \
    "iifname $b oifname $a drop comment \"split $side\""
}

cmd_cut() {
  [ $# -eq 3 ] || usage
  need_lab "$1"
  local lab=$1 from to n
  from=$(node_set "$lab" "$2") || exit
  to=$(node_set "$lab" "$3") || exit
  IFS=, read -ra names <<<"$2"
  for n in "${names[@]}"; do in_list "$n" "$3" && bad "$n is on both ends of the cut"; done
  add_rules "$lab" "iifname $from oifname $to drop comment \"cut $2 to $3\""
}

cmd_lose() {
  [ $# -eq 4 ] || usage
  need_lab "$1"
  local lab=$1 a=$2 b=$3 p=$4
  [[ $p =~ ^([1-9][0-9]?|100)$ ]] || bad "'$p' is no percentage of packets to lose: a whole number from 1 to 100"
  [[ $a != *,* && $b != *,* ]] || bad "a link joins two nodes: lose LAB A B PERCENT"
  [ "$a" != "$b" ] || bad "a link joins two nodes, not $a and itself"
  need_node "$lab" "$a"
  need_node "$lab" "$b"
  add_rules "$lab" "iifname \"$a\" oifname \"$b\" numgen random mod 100 < $p drop comment \"lose $p% $a-$b\"" \
    "iifname \"$b\" oifname \"$a\" numgen random mod 100 < $p drop comment \"lose $p% $a-$b\""
}

flapper_running() {
  local pid
  pid=$(cat "$state_root/$1/flap.pid" 2>/dev/null) || return 1
  runs_in "$pid" "$(ns_of "$1" lab)"
}

# Whether a process of group pgid runs (a zombie, which its reaper may leave a while,
# runs nothing).
group_alive() {
  ps -eo pgid=,stat= | awk -v g="$1" '$1 == g && $2 !~ /^Z/ { found = 1 } END { exit !found }'
}

stop_flapping() {
  local pid i
  flapper_running "$1" || return 1
  pid=$(cat "$state_root/$1/flap.pid")
  # Its whole process group, so that no rule of an nft call in flight lands after.
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
  for i in $(seq 100); do
    group_alive "$pid" || break
    sleep 0.02
  done
  kill -KILL -- "-$pid" 2>/dev/null
  rm -f "$state_root/$1/flap.pid"
  return 0
}

cmd_flap() {
  [ $# -ge 2 ] && [ $# -le 3 ] || usage
  need_lab "$1"
  local lab=$1 node=$2 ms=${3:-300} one rest i
  [[ $ms =~ ^[1-9][0-9]{1,4}$ ]] && [ "$ms" -ge 50 ] && [ "$ms" -le 60000 ] ||
    bad "'$ms' ms: flapping takes a period of 50 to 60000 ms"
  [[ $node != *,* ]] || bad "flap takes one node"
  one=$(node_set "$lab" "$node") || exit
  rest=$(others_set "$lab" "$node") || bad "lab $lab has no other node to cut $node from"
  flapper_running "$lab" && bad "lab $lab is flapping already (heal stops it)"
  rm -f "$state_root/$lab/flap.pid"
  # In the lab's namespace and a session of its own: down ends it with the lab, heal
  # ends its whole group.
  setsid ip netns exec "$(ns_of "$lab" lab)" bash "$script" _flapper "$lab" "$one" "$rest" "$ms" "$node" \
    </dev/null >/dev/null 2>&1 &
  for i in $(seq 100); do
    flapper_running "$lab" && return 0
    sleep 0.02
  done
  fail "the flapper did not start"
}

# The flapper, in the lab's namespace: cut, wait, heal, wait, until stopped or the
# lab's owner is gone.
flapper() {
  local lab=$1 one=$2 rest=$3 ms=$4 node=$5 s
  echo $$ >"$state_root/$lab/flap.pid"
  s=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
  trap 'exit 0' TERM
  while owner_alive "$lab"; do
    nft -f - <<EOF
add rule bridge nem flap iifname $one oifname $rest drop comment "flap $node"
add rule bridge nem flap iifname $rest oifname $one drop comment "flap $node"
EOF
    sleep "$s"
    nft flush chain bridge nem flap
    sleep "$s"
  done
}

cmd_heal() {
  [ $# -eq 1 ] || usage
  need_lab "$1"
  local lab=$1 had=false
  stop_flapping "$lab" && had=true
  local rules
  rules=$(labnft "$lab" list table bridge nem) || fail "nftables cannot list the lab's faults"
  [[ $rules != *" drop"* ]] || had=true
  labnft "$lab" -f - <<EOF || fail "nftables refused to flush the faults"
flush chain bridge nem cut
flush chain bridge nem flap
EOF
  $had || bad "nothing to heal in lab $lab: no fault is in place"
}

verb=${1:-}
[ $# -gt 0 ] && shift
case $verb in
  up) cmd_up "$@" ;;
  down) cmd_down "$@" ;;
  sweep) [ $# -eq 0 ] || usage; cmd_sweep ;;
  run) cmd_run "$@" ;;
  stop) cmd_stop "$@" ;;
  addr) cmd_addr "$@" ;;
  status) cmd_status "$@" ;;
  isolate) cmd_isolate "$@" ;;
  split) cmd_split "$@" ;;
  cut) cmd_cut "$@" ;;
  flap) cmd_flap "$@" ;;
  lose) cmd_lose "$@" ;;
  heal) cmd_heal "$@" ;;
  _flapper) flapper "$@" ;;
  -h | --help | help) usage ;;
  "") usage ;;
  *) say "unknown verb '$verb'"; usage ;;
esac
