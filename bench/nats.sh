# bench/nats.sh: the sweep on a real nats-server, sourced by bench/run (it uses bench/run's
# settings and its run_contender, agree, field and loud, and bench/store_rows.sh).
#
# nats_sweeps KEYS CLUSTER_KEYS starts its own nats-server -js on 127.0.0.1 (a free port, a
# temporary store directory; stopped at the end, also on a failure or an interrupt),
# generates a state of KEYS keys over the run's nodes with three keys in four of other
# nodes (so 400k keys hold 100k of this node), loads it into a bucket and runs, in
# --rounds rounds (each contender that writes on a bucket loaded again and read once, untimed):
#   nats-scan-raw the node's keys in one filtered pass (Store::scan) handed to nothing
#   nats-dry-run  end_stale with dry_run: the same read + the plan
#   nats-sweep    end_stale: the same, and its ends and deletes pipelined
#   nats-per-key  keys() + a get and a synchronous write per key (the first round only)
#   go-nats-seed  the seed's EndStale in Go over nats.go's KV (the first round only)
#   nats-import   the command's step import of the whole state into a new bucket, its
#                 creates through the store's pipeline (the first round only)
#   nats-reimport the same import again: every key already holds a value
#   nats-go-consumer  a bare nats.go ordered consumer reading the node's keys: the
#                 server's own delivery rate (with nats.go)
# then the same read, dry run, sweep and consumer on a three-node cluster with an R3
# bucket over CLUSTER_KEYS keys (0: none), and there, in the first round, a fleet: 8
# nodes of a state of CLUSTER_KEYS keys over 8 nodes swept at once, each by a process of
# its own (nats-r3-fleet8: all the nodes' keys over the wall time, the slowest node's
# time beside it). All of it on the system's nats-server and again on Debian 13's
# 2.10.27 (.ci/fetch-nats-server; labels nats-2.10 and nats-r3-2.10), and on 2.10.27 the
# write path with sync_interval always beside the default (bench/nats_sync.sh; labels
# nats-sync-default-2.10 and nats-sync-always-2.10). Every contender's
# decisions are checked against the Go baseline's on the same state (this node's keys).
# Rows go to results.tsv with keys = the node's keys read, the round as its eleventh
# field and writes/s as a twelfth. The servers' CPU time (user + system, all of a
# cluster's servers) is read around the bulk read and the sweep of round 1, for the
# capacity figures (CPU per key read, per write).

. "$src/bench/store_rows.sh"
. "$src/bench/nats_sync.sh"

nats_server_exe() {
  local p
  for p in "${LEASEJUDGE_NATS_SERVER:-}" "$(command -v nats-server 2>/dev/null)" /usr/sbin/nats-server \
           /usr/local/sbin/nats-server; do
    [ -n "$p" ] && [ -x "$p" ] && { echo "$p"; return 0; }
  done
  return 1
}

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

nats_pids=()
nats_dirs=()
nats_cleanup() {
  local p d
  for p in "${nats_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${nats_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for d in "${nats_dirs[@]}"; do rm -rf "$d"; done
  nats_pids=()
  nats_dirs=()
}

# nats_start PORT DIR [ARGS...]: a server in the background; waits until it accepts.
nats_start() {
  local port=$1 dir=$2
  shift 2
  mkdir -p "$dir"
  "$nats_exe" -a 127.0.0.1 -p "$port" -js -sd "$dir/store" "$@" >"$dir/server.log" 2>&1 &
  nats_pids+=($!)
  local i
  for ((i = 0; i < 150; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.1
  done
  loud "nats-server on port $port did not start: $(tail -3 "$dir/server.log")"
  return 1
}

# nats_round URL LABEL STATE N ROUND REPLICAS: one round of the NATS contenders.
nats_round() {
  local url=$1 label=$2 state=$3 n=$4 round=$5 replicas=$6 o
  local bn=("$bench/leasejudge-bench-nats" --url "$url" --replicas "$replicas")
  local sweep_args=(--node "$node" --owner "$owner" --now "$now" --before "$before" --bound "$bound")
  # Each load is followed by one untimed read: the server's first read of a stream just
  # written in bulk pays a one-time cost (here 0.8-1.3 s where the reads after it take
  # 0.4-0.6 s, idle or not), which a bucket in service has long paid. So every contender,
  # the first after a load too, reads a settled bucket.
  load() { { "${bn[@]}" --contender load --state "$state" >/dev/null &&
             "${bn[@]}" --contender nats-scan-raw "${sweep_args[@]}" >/dev/null; } 2>"$runs/nats-load.err" ||
             { loud "loading the bucket or its first read failed: $(tail -3 "$runs/nats-load.err")"
               failures=$((failures + 1)); return 1; }; }
  dec() { ((round == 1)) && printf '%s\n' --decisions "$nd/$label/$1.tsv"; }
  load || return 1
  local c0
  c0=$(servers_cpu)
  nats_contender "$label-scan-raw" "$n" "${bn[@]}" --contender nats-scan-raw "${sweep_args[@]}"
  ((round == 1)) && echo "$(($(servers_cpu) - c0))" >"$runs/$label-cpu-read"
  [ -z "$go_nats_seed" ] ||
    nats_contender "$label-go-consumer" "$n" "$go_nats_seed" -nats "$url" -bucket bench -node "$node" -consume
  mapfile -t o < <(dec "$label-dry-run")
  nats_contender "$label-dry-run" "$n" "${bn[@]}" --contender nats-dry-run "${sweep_args[@]}" "${o[@]}"
  load || return 1
  mapfile -t o < <(dec "$label-sweep")
  c0=$(servers_cpu)
  nats_contender "$label-sweep" "$n" "${bn[@]}" --contender nats-sweep "${sweep_args[@]}" "${o[@]}"
  ((round == 1)) && echo "$(($(servers_cpu) - c0))" >"$runs/$label-cpu-sweep"
  ((round == 1 && replicas > 1)) && nats_fleet "$url" "$label" "$n"
  ((round == 1)) && [ "$label" = nats ] || return 0
  nats_import "$url" "$state"
  load || return 1
  nats_contender nats-per-key "$n" "${bn[@]}" --contender nats-per-key "${sweep_args[@]}" \
    --decisions "$nd/$label/nats-per-key.tsv"
  if [ -n "$go_nats_seed" ]; then
    load || return 1
    nats_contender go-nats-seed "$n" "$go_nats_seed" -nats "$url" -bucket bench "${go_common[@]}" \
      -decisions "$nd/$label/go-nats-seed.tsv"
  fi
}

# The CPU time the running servers have used so far, in clock ticks (user + system).
servers_cpu() { procs_cpu "${nats_pids[@]}"; }

# nats_fleet URL LABEL N: 8 nodes of an 8-node state of N keys swept at once, each by a
# process of its own; one row: every node's keys over the wall time.
nats_fleet() {
  local url=$1 label=$2 n=$3 i pids=() t0 t1 keys=0 slowest=0
  local state=$bench/states/steps-$n-seed$seed-nodes8-other75-$gen_id.jsonl
  if [ ! -s "$state" ]; then
    "$gen" --keys "$n" --nodes 8 --node "$node" --owner "$owner" --now "$now" --before "$before" \
      --bound "$bound" --seed "$seed" --other-node-pct 75 --out "$state.tmp.$$" 2>/dev/null && mv "$state.tmp.$$" "$state"
  fi
  local bn=("$bench/leasejudge-bench-nats" --url "$url" --replicas 3)
  "${bn[@]}" --contender load --state "$state" >/dev/null 2>"$runs/nats-fleet.err" ||
    { loud "loading the fleet's bucket failed: $(tail -3 "$runs/nats-fleet.err")"; failures=$((failures + 1)); return 1; }
  local names=("$node")
  for i in 2 3 4 5 6 7 8; do names+=("build-node-$i"); done
  printf '  %-18s %2s process(es) ... ' "$label-fleet8" 8 >&2
  t0=$(date +%s.%N)
  for i in "${!names[@]}"; do
    "${bn[@]}" --contender nats-sweep --node "${names[i]}" --owner "$owner" --now "$now" --before "$before" \
      --bound "$bound" >"$runs/fleet-$i.json" 2>"$runs/fleet-$i.err" &
    pids+=($!)
  done
  local ok=1
  for i in "${!pids[@]}"; do wait "${pids[i]}" || ok=0; done
  t1=$(date +%s.%N)
  if ((!ok)); then
    echo "FAILED" >&2
    loud "a fleet sweep failed: $(cat "$runs"/fleet-*.err | tail -5)"
    failures=$((failures + 1))
    return 1
  fi
  local x s
  for i in "${!names[@]}"; do
    x=$(cat "$runs/fleet-$i.json")
    keys=$((keys + $(field "$x" keys)))
    s=$(field "$x" seconds)
    slowest=$(awk -v a="$slowest" -v b="$s" 'BEGIN { print (b > a ? b : a) }')
  done
  local wall
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
  printf '%s\t8\t%s\t%s\t-\t-\t-\t-\t1\t-/-/-\t1\t0\n' "$label-fleet8" "$keys" "$wall" >>"$results"
  echo "$label-fleet8 $keys $wall $slowest" >>"$runs/fleets"
  awk -v k="$keys" -v w="$wall" -v s="$slowest" \
    'BEGIN { printf "%.0f keys/s over all 8 nodes (%d keys in %.2f s; the slowest node %.2f s)\n", k / w, k, w, s }' >&2
}

# nats_import URL STATE [ROWS]: the command's step import of the state (its keys NATS can hold)
# into a new bucket of the server (every key created, through the store's pipeline): row
# nats-import, whose keys and writes/s are the keys created; then the same import again,
# nats-reimport, whose keys are those that already held a value. ROWS (default
# "nats-import nats-reimport") picks which of the two run.
nats_import() {
  local url=$1 err=$runs/nats-import.err bucket=import$RANDOM t0 t1 keys seconds
  [ -x "$build/leasejudge" ] || { loud "the command is not built: no nats-import row"; return; }
  # The state's lines whose keys NATS can hold (a key with an empty node or token is
  # refused, and stops an import), made once, untimed.
  local state=$2.nats-keys
  if [ ! -s "$state" ]; then
    python3 - "$2" >"$state.tmp.$$" <<'PY' && mv "$state.tmp.$$" "$state"
import json, re, sys
nats_key = re.compile(r"[-/_=a-zA-Z0-9]+(\.[-/_=a-zA-Z0-9]+)*")
with open(sys.argv[1], "rb") as f:
    for line in f:
        try:
            key = json.loads(line)["key"]
        except (ValueError, KeyError, TypeError):
            continue
        if isinstance(key, str) and nats_key.fullmatch(key):
            sys.stdout.buffer.write(line)
PY
  fi
  local name counted
  for name in ${3:-nats-import nats-reimport}; do
    counted='s/.*: \([0-9]*\) keys\{0,1\} created,.*/\1/p'
    [ "$name" = nats-import ] || counted='s/.*created, \([0-9]*\) already held a value.*/\1/p'
    err=$runs/$name.err
    printf '  %-18s %2s thread(s) ... ' "$name" 1 >&2
    t0=$(date +%s.%N)
    if ! "$build/leasejudge" step import --store "$url/$bucket" --create-bucket "$state" >/dev/null 2>"$err"; then
      echo "FAILED" >&2
      loud "$name failed: $(tail -3 "$err")"
      failures=$((failures + 1))
      return 1
    fi
    t1=$(date +%s.%N)
    keys=$(sed -n "$counted" "$err")
    seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
    printf '%s\t1\t%s\t%s\t%s\t-\t-\t-\t1\t-/-/-\t%s\t%s\n' "$name" "$keys" "$seconds" "$(stat -c %s "$state")" \
      "${round:-1}" "$(awk -v k="$keys" -v s="$seconds" 'BEGIN { printf "%.0f", k / s }')" >>"$results"
    awk -v s="$seconds" -v n="$keys" 'BEGIN { printf "%.3f s, %.0f keys/s\n", s, n / s }' >&2
  done
}

# nats_contender NAME KEYS command...: run_contender for a row whose keys are the node's
# keys (known only once it ran), with writes/s appended to its row.
nats_contender() {
  local name=$1 n=$2 out err=$runs/$1.err
  shift 2
  printf '  %-18s %2s thread(s) ... ' "$name" 1 >&2
  if ! out=$("$@" 2>"$err"); then
    echo "FAILED" >&2
    loud "$name failed: $(tail -5 "$err")"
    failures=$((failures + 1))
    return 1
  fi
  echo "$out" >"$runs/$name.json"
  local keys seconds
  keys=$(field "$out" keys); seconds=$(field "$out" seconds)
  printf '%s\t1\t%s\t%s\t%s\t%s\t-\t-\t1\t%s/%s/%s\t%s\t%s\n' "$name" "$keys" "$seconds" \
    "$(field "$out" value_bytes)" "$(field "$out" peak_rss_kb)" "$(field "$out" end)" "$(field "$out" delete)" \
    "$(field "$out" leave)" "${round:-1}" "$(field "$out" writes_per_s)" >>"$results"
  awk -v s="$seconds" -v n="$keys" -v w="$(field "$out" writes_per_s)" \
    'BEGIN { printf "%.3f s, %.0f keys/s of the node%s\n", s, n / s, (w > 0 ? sprintf(", %.0f writes/s", w) : "") }' >&2
}

nats_sweeps() {
  local keys=$1 cluster_keys=$2
  nats_exe=$(nats_server_exe) || { loud "nats-server is not installed: no NATS rows"; failures=$((failures + 1)); return; }
  [ -x "$bench/leasejudge-bench-nats" ] || { loud "leasejudge-bench-nats is not built: no NATS rows"; failures=$((failures + 1)); return; }
  trap 'nats_cleanup' EXIT
  trap 'nats_cleanup; exit 130' INT TERM
  store_go_seed nats github.com/nats-io/nats.go nats.go golang-github-nats-io-go-nats-dev
  go_nats_seed=$go_seed
  nd=$runs/nats-decisions
  rm -rf "$nd"
  local rounds_n=$rounds
  [ "$rounds" != auto ] || rounds_n=3
  local spec
  local system_exe=$nats_exe
  local second_exe=${LEASEJUDGE_NATS_SERVER_2_10:-$src/build/nats-server-2.10.27/usr/sbin/nats-server}
  if [ ! -x "$second_exe" ]; then
    loud "nats-server 2.10.27 is not at $second_exe (bash .ci/fetch-nats-server): no 2.10 rows"
    failures=$((failures + 1))
    second_exe=""
  fi
  for spec in "nats $keys 1 system" "nats-r3 $cluster_keys 3 system" "nats-2.10 $keys 1 second" \
              "nats-r3-2.10 $cluster_keys 3 second"; do
    local label n replicas which
    read -r label n replicas which <<<"$spec"
    ((n > 0)) || continue
    if [ "$which" = second ]; then
      [ -n "$second_exe" ] || continue
      nats_exe=$second_exe
    else
      nats_exe=$system_exe
    fi
    local state
    store_state "$n"
    local url
    if ((replicas == 1)); then
      local port dir
      port=$(free_port); dir=$(mktemp -d); nats_dirs+=("$dir")
      nats_start "$port" "$dir" || { failures=$((failures + 1)); continue; }
      url=nats://127.0.0.1:$port
      echo "NATS: $n keys over $nodes nodes in one nats-server ($url, $("$nats_exe" --version)):" >&2
    else
      local c=() r=() i routes="" dir
      for i in 0 1 2; do c+=("$(free_port)"); r+=("$(free_port)"); done
      for i in 0 1 2; do routes+=${routes:+,}nats://127.0.0.1:${r[i]}; done
      for i in 0 1 2; do
        dir=$(mktemp -d); nats_dirs+=("$dir")
        nats_start "${c[i]}" "$dir" -n "bench-$i" --cluster_name bench --cluster "nats://127.0.0.1:${r[i]}" \
          --routes "$routes" || { failures=$((failures + 1)); continue 2; }
      done
      url=nats://127.0.0.1:${c[0]},nats://127.0.0.1:${c[1]},nats://127.0.0.1:${c[2]}
      sleep 2  # the cluster elects its JetStream leaders
      echo "NATS: $n keys over $nodes nodes in a three-node cluster, an R3 bucket ($("$nats_exe" --version)):" >&2
    fi
    store_reference "$nd" "$label" "$state"
    local round
    for ((round = 1; round <= rounds_n; round++)); do
      ((rounds_n == 1)) || echo " round $round of $rounds_n" >&2
      nats_round "${url%%,*}" "$label" "$state" "$n" "$round" "$replicas" || true
    done
    store_agree "$nd" "$label" "$n" NATS
    nats_cleanup
  done
  nats_sync_sweeps "$keys" "$second_exe" "$rounds_n" || true
  ((keep_decisions)) || rm -rf "$nd"
  trap - EXIT INT TERM
  nats_targets >>"$extras"
  nats_sync_targets >>"$extras"
}

# What the servers spent, from round 1: CPU per key read (the bulk read) and per write
# (the sweep's CPU beyond a read, over its writes), all of a cluster's servers together.
nats_capacity() {
  echo "The servers' CPU (user + system, every server of the cluster), from round 1:"
  echo
  store_cpu_table bucket - nats-sweep nats-r3-sweep nats-2.10-sweep nats-r3-2.10-sweep
}

# The NATS figures and targets, from this run's rows (results.tsv) and each contender's
# JSON (read, plan and apply times): ratios within the run, and what bounds a miss.
nats_targets() {
  echo
  echo "NATS (bench/nats.sh): keys/s count the node's keys a sweep reads; MB/s their keys' and values'"
  echo "bytes; writes/s the ends and deletes over the time spent sending them and waiting for their"
  echo "acknowledgements. nats-scan-raw is the bulk read alone, handing each batch to nothing: what the"
  echo "server and nats.c deliver, the ceiling of any sweep over this bucket. Every contender reads a"
  echo "settled bucket: each load is followed by one untimed read (the server's first read of a stream"
  echo "just written in bulk pays a one-time cost, about twice a later read's time)."
  echo
  store_times_table nats
  echo
  awk -F'\t' -f "$src/bench/round_ratios.awk" -f "$src/bench/nats_targets.awk" "$results"
  echo
  nats_capacity
  echo
  if grep -q 'this node' "$runs/agreed" 2>/dev/null; then
    echo "Agreement on the NATS states: $(grep 'this node' "$runs/agreed" | paste -sd, | sed 's/,/, /g') decided"
    echo "every key of this node as the Go baseline did (action, why, what is said of the owner)."
  else
    echo "Agreement on the NATS states: **not shown**."
  fi
}
