# bench/nats_sync.sh: the NATS write path with JetStream's `sync_interval: always` beside
# its default (a flush to disk every two minutes), sourced by bench/nats.sh (it uses its
# nats_start, nats_contender, nats_import and nats_cleanup, and bench/run's settings).
#
# nats_sync_sweeps KEYS EXE ROUNDS starts two single nats-servers EXE (one version, one that
# takes the setting: 2.10.27; Debian 12's 2.9.10 refuses it), one as it comes and one with
# `jetstream { sync_interval: always }` (checked on its /varz: sync_always true), and in
# each of ROUNDS rounds, on each: loads a state of KEYS keys, reads it once untimed, then
#   LABEL-scan-raw  the node's keys in one filtered pass (the chart's baseline)
#   LABEL-sweep     end_stale: the same read, and its ends and deletes pipelined
#   LABEL-import    the command's step import of the whole state into a new bucket
# with LABEL nats-sync-default-2.10 and nats-sync-always-2.10 (round 1's sweeps checked
# against the Go baseline as nats.sh's rows are). Every write of a sweep or an
# import waits for the server's acknowledgement, and with sync_interval always the server
# acknowledges a write only once it is on disk: the ratio always/default within a round is
# what keeping the promise through an OS crash costs. nats_sync_targets prints it.

nats_sync_labels=(nats-sync-default-2.10 nats-sync-always-2.10)

# nats_sync_start LABEL: a server for LABEL (its URL in $url); 1 when it did not start or
# does not say sync_always as asked.
nats_sync_start() {
  local label=$1 port mport dir conf=() always
  port=$(free_port); mport=$(free_port); dir=$(mktemp -d); nats_dirs+=("$dir")
  if [ "$label" = nats-sync-always-2.10 ]; then
    printf 'jetstream { sync_interval: always }\n' >"$dir/sync.conf"
    conf=(-c "$dir/sync.conf")
  fi
  nats_start "$port" "$dir" -m "$mport" "${conf[@]}" || return 1
  always=$(curl -s -m 5 "http://127.0.0.1:$mport/varz" | python3 -c \
    'import json, sys; print(json.load(sys.stdin)["jetstream"]["config"].get("sync_always", False))' 2>/dev/null)
  if [ "$always" != "$([ ${#conf[@]} -gt 0 ] && echo True || echo False)" ]; then
    loud "nats-server for $label says sync_always ${always:-nothing} (its /varz)"
    return 1
  fi
  url=nats://127.0.0.1:$port
}

# nats_sync_import URL LABEL: nats_import of new keys only (which writes its row as
# nats-import into $results), its row relabelled LABEL-import.
nats_sync_import() {
  local results=$runs/nats-sync-import.tsv
  : >"$results"
  nats_import "$1" "$state" nats-import || return 1
  sed "s/^nats-import\t/$2-import\t/" "$results" >>"$rows"
}

nats_sync_sweeps() {
  local keys=$1 exe=$2 rounds_n=$3 label state url round
  [ "$keys" -gt 0 ] || return 0
  if [ -z "$exe" ]; then
    loud "no nats-server that takes sync_interval (2.10.27, bash .ci/fetch-nats-server): no nats-sync rows"
    failures=$((failures + 1))
    return
  fi
  nats_exe=$exe
  store_state "$keys"
  local rows=$results
  local urls=()
  for label in "${nats_sync_labels[@]}"; do
    nats_sync_start "$label" || { failures=$((failures + 1)); nats_cleanup; return; }
    urls+=("$url")
  done
  echo "NATS: sync_interval always beside the default, $keys keys, one server each ($("$exe" --version)):" >&2
  for label in "${nats_sync_labels[@]}"; do store_reference "$nd" "$label" "$state"; done
  local sweep_args=(--node "$node" --owner "$owner" --now "$now" --before "$before" --bound "$bound")
  for ((round = 1; round <= rounds_n; round++)); do
    ((rounds_n == 1)) || echo " round $round of $rounds_n" >&2
    local i
    for i in 0 1; do
      label=${nats_sync_labels[i]}
      local bn=("$bench/leasejudge-bench-nats" --url "${urls[i]}" --replicas 1)
      { "${bn[@]}" --contender load --state "$state" >/dev/null &&
        "${bn[@]}" --contender nats-scan-raw "${sweep_args[@]}" >/dev/null; } 2>"$runs/nats-load.err" ||
        { loud "loading the $label bucket failed: $(tail -3 "$runs/nats-load.err")"; failures=$((failures + 1)); continue; }
      nats_contender "$label-scan-raw" "$keys" "${bn[@]}" --contender nats-scan-raw "${sweep_args[@]}"
      local o=()
      ((round == 1)) && o=(--decisions "$nd/$label/$label-sweep.tsv")
      nats_contender "$label-sweep" "$keys" "${bn[@]}" --contender nats-sweep "${sweep_args[@]}" "${o[@]}"
      nats_sync_import "${urls[i]}" "$label"
    done
  done
  for label in "${nats_sync_labels[@]}"; do store_agree "$nd" "$label" "$keys" NATS; done
  nats_cleanup
}

# The figures (bench/nats_sync.awk): always against the default, the medians over the
# rounds of the ratio within a round, with their range.
nats_sync_targets() {
  awk -F'\t' -f "$src/bench/round_ratios.awk" -f "$src/bench/nats_sync.awk" "$results"
}
