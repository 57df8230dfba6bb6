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
