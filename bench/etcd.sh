# bench/etcd.sh: the sweep on a real etcd cluster, sourced by bench/run (it uses bench/run's
# settings and its agree, field and loud, bench/store_rows.sh, and bench/nats.sh's
# nats_contender row writer and free_port).
#
# etcd_sweeps KEYS starts its own cluster of three etcd members on 127.0.0.1 (free ports,
# data in a temporary directory; stopped at the end, also on a failure or an interrupt),
# generates a state of KEYS keys over the run's nodes, three in four of other nodes (so
# 400k keys hold 100k of this node: the NATS rows' state), loads it under the prefix
# "bench" and runs, in --rounds rounds (each contender that writes on keys loaded again):
#   etcd-scan-raw  the node's keys in one range read at one revision (EtcdStore::scan),
#                  handed to nothing: the bulk read alone
#   etcd-dry-run   end_stale with dry_run: the same read + the plan
#   etcd-sweep     end_stale: the same, and its ends and deletes pipelined in txns of
#                  many keys (the store's default size, 128), 1024 writes in flight (a
#                  sweep's --window, and the etcd store's own default: 8 txns)
#   etcd-sweep-w256  the same with a window of 256 writes (the default of other stores): 2 txns
#   etcd-sweep-txn1  the same sweep with a txn a write (--txn-keys 1), 256 in flight:
#                  the write path before txns of many keys
#   etcd-per-key   keys() + a get and a txn alone per key (the first round only)
#   go-etcd-seed   the seed's EndStale in Go over clientv3: Keys, then a Get and a Txn
#                  per key (the first round only; golang-etcd-server-dev)
#   etcd-import    the command's step import of the whole state under a new prefix,
#                  every key created (the first round only)
#   etcd-reimport  the same import again: every key already holds a value
#   go-etcd-load   the Go loader (go-etcd-seed -load: txns of 128 puts, 8 at once) of
#                  the whole state under a new prefix: what an import is held to
# With bench/run --etcd-unsafe-no-fsync (etcd_no_fsync=1) the read, dry run and
# sweep run again on a cluster started with etcd's --unsafe-no-fsync, labelled
# etcd-nofsync: what the members' fsyncs cost, never the default. Every contender's
# decisions are checked against the Go baseline's. The members' CPU time is read around
# the bulk read and the sweeps of round 1. A sweep's txns (how many, keys a txn, most in
# flight, writes sent again) are in its stderr, "etcd-txns {...}".

. "$src/bench/store_rows.sh"

etcd_exe() {
  local p
  for p in "${LEASEJUDGE_ETCD:-}" "$(command -v etcd 2>/dev/null)" /usr/bin/etcd; do
    [ -n "$p" ] && [ -x "$p" ] && { echo "$p"; return 0; }
  done
  return 1
}

etcd_pids=()
etcd_dirs=()
etcd_cleanup() {
  local p d
  for p in "${etcd_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${etcd_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  for d in "${etcd_dirs[@]}"; do rm -rf "$d"; done
  etcd_pids=()
  etcd_dirs=()
}

# etcd_start [ARGS...]: three members in the background, their client endpoints in
# etcd_endpoints (comma-separated); waits until the cluster answers a linearizable read.
etcd_start() {
  local c=() p=() i cluster="" dir
  for i in 0 1 2; do c+=("$(free_port)"); p+=("$(free_port)"); done
  for i in 0 1 2; do cluster+=${cluster:+,}m$i=http://127.0.0.1:${p[i]}; done
  dir=$(mktemp -d)
  etcd_dirs+=("$dir")
  for i in 0 1 2; do
    "$etcd_path" --name "m$i" --data-dir "$dir/m$i" --listen-client-urls "http://127.0.0.1:${c[i]}" \
      --advertise-client-urls "http://127.0.0.1:${c[i]}" --listen-peer-urls "http://127.0.0.1:${p[i]}" \
      --initial-advertise-peer-urls "http://127.0.0.1:${p[i]}" --initial-cluster "$cluster" \
      --initial-cluster-state new --initial-cluster-token bench --quota-backend-bytes 8589934592 \
      --log-level error "$@" >"$dir/m$i.log" 2>&1 &
    etcd_pids+=($!)
  done
  etcd_endpoints=127.0.0.1:${c[0]},127.0.0.1:${c[1]},127.0.0.1:${c[2]}
  for ((i = 0; i < 150; i++)); do
    "$bench/leasejudge-bench-etcd" --endpoints "$etcd_endpoints" --contender etcd-scan-raw --node probe \
      --owner "$owner" --now "$now" --before "$before" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  loud "the etcd cluster did not start: $(tail -3 "$dir/m0.log")"
  return 1
}

# The CPU time the running members have used so far, in clock ticks (user + system).
members_cpu() { procs_cpu "${etcd_pids[@]}"; }

# etcd_round LABEL STATE N ROUND: one round of the etcd contenders.
etcd_round() {
  local label=$1 state=$2 n=$3 round=$4 o c0
  local be=("$bench/leasejudge-bench-etcd" --endpoints "$etcd_endpoints")
  local sweep_args=(--node "$node" --owner "$owner" --now "$now" --before "$before" --bound "$bound")
  # The Go seed's loader writes txns of 128 keys (much faster than the writes one at a time
  # of leasejudge-bench-etcd's, the fallback).
  load() { if [ -n "$go_etcd_seed" ]; then
             "$go_etcd_seed" -etcd "$etcd_endpoints" -prefix bench -load -state "$state"
           else
             "${be[@]}" --contender load --state "$state"
           fi >/dev/null 2>"$runs/etcd-load.err" ||
             { loud "loading the etcd keys failed: $(tail -3 "$runs/etcd-load.err")"
               failures=$((failures + 1)); return 1; }; }
  dec() { ((round == 1)) && printf '%s\n' --decisions "$ed/$label/$1.tsv"; }
  if ((round == 1)); then load || return 1; fi
  c0=$(members_cpu)
  nats_contender "$label-scan-raw" "$n" "${be[@]}" --contender etcd-scan-raw "${sweep_args[@]}"
  ((round == 1)) && echo "$(($(members_cpu) - c0))" >"$runs/$label-cpu-read"
  mapfile -t o < <(dec "$label-dry-run")
  nats_contender "$label-dry-run" "$n" "${be[@]}" --contender etcd-dry-run "${sweep_args[@]}" "${o[@]}"
  mapfile -t o < <(dec "$label-sweep")
  c0=$(members_cpu)
  nats_contender "$label-sweep" "$n" "${be[@]}" --contender etcd-sweep --window 1024 "${sweep_args[@]}" "${o[@]}"
  ((round == 1)) && echo "$(($(members_cpu) - c0))" >"$runs/$label-cpu-sweep"
  load || return 1
  mapfile -t o < <(dec "$label-sweep-w256")
  c0=$(members_cpu)
  nats_contender "$label-sweep-w256" "$n" "${be[@]}" --contender etcd-sweep --window 256 "${sweep_args[@]}" "${o[@]}"
  ((round == 1)) && echo "$(($(members_cpu) - c0))" >"$runs/$label-cpu-sweep-w256"
  load || return 1
  mapfile -t o < <(dec "$label-sweep-txn1")
  c0=$(members_cpu)
  nats_contender "$label-sweep-txn1" "$n" "${be[@]}" --contender etcd-sweep --window 256 --txn-keys 1 \
    --txns-in-flight 256 "${sweep_args[@]}" "${o[@]}"
  ((round == 1)) && echo "$(($(members_cpu) - c0))" >"$runs/$label-cpu-sweep-txn1"
  load || return 1
  ((round == 1)) && [ "$label" = etcd ] || return 0
  etcd_import "$state" || return 1
  nats_contender etcd-per-key "$n" "${be[@]}" --contender etcd-per-key "${sweep_args[@]}" \
    --decisions "$ed/$label/etcd-per-key.tsv"
  load || return 1
  if [ -n "$go_etcd_seed" ]; then
    nats_contender go-etcd-seed "$n" "$go_etcd_seed" -etcd "$etcd_endpoints" -prefix bench "${go_common[@]}" \
      -decisions "$ed/$label/go-etcd-seed.tsv"
    load || return 1
  fi
}

# etcd_import STATE: the command's step import of the state under a new prefix (row
# etcd-import: keys created over its time), the same import again (etcd-reimport: keys
# that already held a value over its time), and the Go loader under another new prefix
# (go-etcd-load). Each prefix is removed after, untimed.
etcd_import() {
  local state=$1 url=etcd://$etcd_endpoints p=import$RANDOM g=goload$RANDOM
  [ -x "$build/leasejudge" ] || { loud "the command is not built: no etcd-import rows"; return; }
  etcd_timed etcd-import "$state" 's/.*: \([0-9]*\) keys\{0,1\} created,.*/\1/p' - \
    "$build/leasejudge" step import --store "$url/$p" "$state" || return 1
  etcd_timed etcd-reimport "$state" 's/.*created, \([0-9]*\) already held a value.*/\1/p' - \
    "$build/leasejudge" step import --store "$url/$p" "$state" || return 1
  if [ -n "$go_etcd_seed" ]; then
    etcd_timed go-etcd-load "$state" 's/.*"loaded":\([0-9]*\).*/\1/p' put_s \
      "$go_etcd_seed" -etcd "$etcd_endpoints" -prefix "$g" -load -state "$state" || return 1
  fi
  "$bench/leasejudge-bench-etcd" --endpoints "$etcd_endpoints" --prefix "$p" --contender clear >/dev/null 2>&1
  "$bench/leasejudge-bench-etcd" --endpoints "$etcd_endpoints" --prefix "$g" --contender clear >/dev/null 2>&1
  return 0
}

# etcd_timed NAME STATE SED FIELD COMMAND...: one timed run of COMMAND; its row's keys
# are what SED finds in its stdout and stderr, its time the JSON field FIELD of its stdout
# ("-": the whole run's), its writes/s the keys over that time.
etcd_timed() {
  local name=$1 state=$2 sed_keys=$3 time_field=$4 t0 t1 keys seconds err=$runs/$1.err
  shift 4
  printf '  %-18s %2s thread(s) ... ' "$name" 1 >&2
  t0=$(date +%s.%N)
  if ! "$@" >"$runs/$name.out" 2>"$err"; then
    echo "FAILED" >&2
    loud "$name failed: $(tail -3 "$err")"
    failures=$((failures + 1))
    return 1
  fi
  t1=$(date +%s.%N)
  keys=$(cat "$runs/$name.out" "$err" | sed -n "$sed_keys" | head -1)
  seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
  [ "$time_field" = - ] || seconds=$(field "$(cat "$runs/$name.out")" "$time_field")
  printf '%s\t1\t%s\t%s\t%s\t-\t-\t-\t1\t-/-/-\t%s\t%s\n' "$name" "${keys:-0}" "$seconds" "$(stat -c %s "$state")" \
    "${round:-1}" "$(awk -v k="${keys:-0}" -v s="$seconds" 'BEGIN { printf "%.0f", k / s }')" >>"$results"
  awk -v s="$seconds" -v n="${keys:-0}" 'BEGIN { printf "%.3f s, %.0f keys/s\n", s, n / s }' >&2
}

etcd_sweeps() {
  local keys=$1 spec
  etcd_path=$(etcd_exe) || { loud "etcd is not installed: no etcd rows"; failures=$((failures + 1)); return; }
  [ -x "$bench/leasejudge-bench-etcd" ] ||
    { loud "leasejudge-bench-etcd is not built (libcurl4-openssl-dev): no etcd rows"; failures=$((failures + 1)); return; }
  trap 'etcd_cleanup; nats_cleanup 2>/dev/null || true' EXIT
  trap 'etcd_cleanup; exit 130' INT TERM
  store_go_seed etcd go.etcd.io/etcd/clientv3 clientv3 golang-etcd-server-dev
  go_etcd_seed=$go_seed
  ed=$runs/etcd-decisions
  rm -rf "$ed"
  local rounds_n=$rounds
  [ "$rounds" != auto ] || rounds_n=3
  local state
  store_state "$keys"
  for spec in "etcd" "etcd-nofsync --unsafe-no-fsync"; do
    local label extra round
    read -r label extra <<<"$spec"
    # (not an ETCD_* variable: etcd reads those from its environment as its flags)
    [ "$label" = etcd ] || [ "${etcd_no_fsync:-0}" = 1 ] || continue
    etcd_start $extra || { failures=$((failures + 1)); continue; }
    echo "etcd: $keys keys over $nodes nodes, three members ($("$etcd_path" --version | head -1)${extra:+, $extra}):" >&2
    store_reference "$ed" "$label" "$state"
    for ((round = 1; round <= rounds_n; round++)); do
      ((rounds_n == 1)) || echo " round $round of $rounds_n" >&2
      etcd_round "$label" "$state" "$keys" "$round" || true
    done
    store_agree "$ed" "$label" "$keys" etcd
    etcd_cleanup
  done
  ((keep_decisions)) || rm -rf "$ed"
  trap - EXIT INT TERM
  etcd_targets >>"$extras"
}

# The etcd figures and targets, from this run's rows and each contender's JSON.
etcd_targets() {
  echo
  echo "etcd (bench/etcd.sh): three members on 127.0.0.1, the keys under one prefix; keys/s count the"
  echo "node's keys a sweep reads. etcd-scan-raw is the bulk read alone (a range read at one revision,"
  echo "page by page, handed to nothing): the ceiling of any sweep of these keys."
  echo
  store_times_table etcd etcd-txns
  echo
  awk -F'\t' -f "$src/bench/round_ratios.awk" -f "$src/bench/etcd_targets.awk" "$results"
  echo
  echo "The members' CPU (user + system, all three), from round 1 (a sweep's CPU beyond a bulk read's, over its"
  echo "writes and over its txns):"
  echo
  store_cpu_table sweep etcd-txns etcd-sweep etcd-sweep-w256 etcd-sweep-txn1 etcd-nofsync-sweep \
    etcd-nofsync-sweep-w256 etcd-nofsync-sweep-txn1
}
