# bench/store_rows.sh: what the stores' rows share (bench/nats.sh, bench/etcd.sh), sourced
# with them; they use bench/run's settings and its agree and loud.

# store_state N: the state of N keys over the run's nodes, three in four of other nodes
# (so 400k keys hold 100k of this node), generated once; its path in $state.
store_state() {
  local n=$1 base
  base=steps-$n-seed$seed-nodes$nodes-other75
  state=$bench/states/$base-$gen_id.jsonl
  [ -s "$state" ] && return 0
  rm -f "$bench/states/$base"-*.jsonl "$bench/states/$base"-*.summary
  echo "generating $n keys (a quarter of this node) -> $state" >&2
  "$gen" --keys "$n" --nodes "$nodes" --node "$node" --owner "$owner" --now "$now" --before "$before" \
    --bound "$bound" --seed "$seed" --other-node-pct 75 --out "$state.tmp.$$" 2>"$state.tmp.$$.summary"
  mv "$state.tmp.$$.summary" "$state.summary"
  mv "$state.tmp.$$" "$state"
}

# store_reference DIR LABEL STATE: the Go baseline's decisions on the state, this node's
# keys, sorted, in DIR/LABEL.ref: the reference every contender's are checked against.
store_reference() {
  local dir=$1 label=$2 state=$3
  mkdir -p "$dir/$label"
  [ -n "$go_baseline" ] || return 0
  "$go_baseline" -state "$state" "${go_common[@]}" -decisions "$dir/$label.all" -max-reps 1 >/dev/null ||
    { loud "the Go baseline failed on $state"; failures=$((failures + 1)); }
  grep "^$node\." "$dir/$label.all" | LC_ALL=C sort >"$dir/$label.ref" || true
}

# store_agree DIR LABEL N WHAT: every contender's decisions in DIR/LABEL/*.tsv against the
# reference (WHAT names the state in the failure).
store_agree() {
  local dir=$1 label=$2 n=$3 what=$4 f
  if [ ! -s "$dir/$label.ref" ]; then
    loud "no Go baseline decisions for the $what state: the agreement check did not run"
    failures=$((failures + 1))
    return
  fi
  for f in "$dir/$label"/*.tsv; do
    [ -e "$f" ] || continue
    LC_ALL=C sort -o "$f" "$f"
    agree "$dir/$label.ref" "$f" "$(basename "$f" .tsv) ($n keys, this node's)"
  done
}

# store_go_seed TAG GOPATH_DIR CLIENT PACKAGE: the seed's EndStale over a store's Go client
# (bench/go-baseline built with the tag TAG against Debian's /usr/share/gocode, where the
# client lives in GOPATH_DIR), its path in $go_seed; empty, and a failure counted, when the
# client (CLIENT, Debian's PACKAGE) is not installed or the program does not build.
store_go_seed() {
  local tag=$1 dir=$2 client=$3 package=$4
  go_seed=""
  if [ -z "$go_exe" ] || [ ! -d "/usr/share/gocode/src/$dir" ]; then
    loud "$client ($package) is not installed: no go-$tag-seed row"
    failures=$((failures + 1))
    return
  fi
  if (cd "$src/bench/go-baseline" && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$bench/gocache" \
        "$go_exe" build -tags "$tag" -o "$bench/go-$tag-seed" .) >&2; then
    go_seed=$bench/go-$tag-seed
  else
    loud "the Go seed over $client does not build: that row is left out"
    failures=$((failures + 1))
  fi
}

# procs_cpu PID...: the CPU time the processes have used so far, in clock ticks (user +
# system).
procs_cpu() {
  local p total=0 f
  for p in "$@"; do
    [ -r "/proc/$p/stat" ] || continue
    read -ra f <"/proc/$p/stat"
    total=$((total + f[13] + f[14]))
  done
  echo "$total"
}

# store_times_table STORE [TXNS]: the table of every contender of STORE that wrote its JSON
# in the run (STORE-*.json, then the seed's go-STORE-seed.json): its read, plan and apply
# times, its writes, most writes in flight and waits; with TXNS (the prefix of the line
# "TXNS {...}" its stderr holds), also its txns, keys a txn, most txns in flight and
# writes sent again.
store_times_table() {
  local store=$1 txns=${2:-} j x t name
  if [ -n "$txns" ]; then
    echo "| contender | read s | plan s | apply s | writes | max in flight | waits | txns | keys a txn | most txns in flight | sent again |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  else
    echo "| contender | read s | plan s | apply s | writes | max in flight | waits |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
  fi
  for j in "$runs/$store"-*.json "$runs/go-$store-seed.json"; do
    [ -s "$j" ] || continue
    x=$(cat "$j")
    name=$(basename "$j" .json)
    printf '| %s | %s | %s | %s | %s | %s | %s |' "$name" "$(field "$x" read_s)" "$(field "$x" plan_s)" \
      "$(field "$x" apply_s)" "$(field "$x" writes)" "$(field "$x" max_in_flight)" "$(field "$x" waits)"
    if [ -n "$txns" ]; then
      t=$(sed -n "s/^$txns //p" "$runs/$name.err" 2>/dev/null)
      printf ' %s | %s | %s | %s |' "$(field "$t" txns)" "$(field "$t" txn_keys)" "$(field "$t" most_in_flight)" \
        "$(field "$t" resent)"
    fi
    printf '\n'
  done
}

# store_cpu_table FIRST TXNS SWEEP...: the servers' CPU (user + system) from round 1, a row
# for each SWEEP (a row named LABEL-sweep...) whose readings the run wrote (LABEL-cpu-read
# around the bulk read, LABEL-cpu-sweep... around the sweep): CPU per key read, and the
# sweep's CPU beyond a read over its writes. FIRST names the first column: "sweep" shows
# the sweep's row, anything else (a bucket) its LABEL. With TXNS other than "-" (the prefix
# of the sweep's "TXNS {...}" stderr line) also its txns and its CPU per txn.
store_cpu_table() {
  local first=$1 txns=$2 tick l c label x
  shift 2
  tick=$(getconf CLK_TCK)
  if [ "$txns" = - ]; then
    echo "| $first | keys read | CPU per key read | writes | CPU per write |"
    echo "|---|---:|---:|---:|---:|"
  else
    echo "| $first | keys read | CPU per key read | writes | txns | CPU per write | CPU per txn |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
  fi
  for l in "$@"; do
    c=${l%-sweep*}
    [ -s "$runs/$c-cpu-read" ] && [ -s "$runs/$c-cpu${l#"$c"}" ] && [ -s "$runs/$l.json" ] || continue
    label=$c
    [ "$first" != sweep ] || label=$l
    x=-
    [ "$txns" = - ] || x=$(field "$(sed -n "s/^$txns //p" "$runs/$l.err")" txns)
    awk -v l="$label" -v r="$(cat "$runs/$c-cpu-read")" -v s="$(cat "$runs/$c-cpu${l#"$c"}")" \
      -v k="$(field "$(cat "$runs/$l.json")" keys)" -v w="$(field "$(cat "$runs/$l.json")" writes)" \
      -v x="$x" -v t="$tick" 'BEGIN { c = (s - r) / t * 1e6; if (c < 0) c = 0
        printf "| %s | %d | %.1f us | %d |", l, k, (k > 0 ? r / t / k * 1e6 : 0), w
        if (x != "-") printf " %d |", x
        printf " %.1f us |", (w > 0 ? c / w : 0)
        if (x != "-") printf " %.0f us |", (x > 0 ? c / x : 0)
        printf "\n" }'
  done
}
