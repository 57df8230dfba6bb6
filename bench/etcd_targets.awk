# bench/etcd_targets.awk: the etcd sweep's targets from bench/run's results (the fields of
# bench/nats_targets.awk). Ratios are taken within one round (the per-key path and the
# seed run in the first round only, so theirs are that round's); rates are medians
# (bench/round_ratios.awk).
#   dry run >= 30x the per-key path and >= 0.8x the bulk read alone;
#   full sweep >= 20x the seed's EndStale over clientv3.
$1 ~ /^(etcd|go-etcd-seed)/ && $4 > 0 {
  r = $3 / $4
  rate[$1, ++count[$1]] = r
  by_round[$1, $11 + 0] = r
  if ($12 != "") writes[$1, $11 + 0] = $12
}
END {
  split("etcd etcd-nofsync", labels, " ")
  for (i = 1; i <= 2; i++) {
    l = labels[i]
    if (count[l "-dry-run"] == 0) continue
    printf "- %s: bulk read %.0f, dry run %.0f, full sweep %.0f keys/s of the node (medians of %d rounds); sweep writes %.0f/s in round 1\n", \
      l, median(l "-scan-raw"), median(l "-dry-run"), median(l "-sweep"), count[l "-dry-run"], writes[l "-sweep", 1]
    x = ratio(l "-dry-run", l "-scan-raw")
    printf "  - dry run %.2fx the bulk read, median of the rounds' ratios (target 0.8x: %s)\n", x, verdict(x >= 0.8)
  }
  d1 = in_round("etcd-dry-run", 1); p1 = in_round("etcd-per-key", 1)
  w1 = in_round("etcd-sweep", 1); s1 = in_round("go-etcd-seed", 1)
  if (d1 > 0 && p1 > 0)
    printf "- etcd dry run: %.1fx the per-key path (keys() + a get per key), in round 1 (target 30x: %s)\n", d1 / p1, verdict(d1 / p1 >= 30)
  if (w1 > 0 && s1 > 0)
    printf "- etcd full sweep: %.1fx the seed's EndStale over clientv3 (Keys, a Get and a Txn per key), in round 1 (target 20x: %s)\n", w1 / s1, verdict(w1 / s1 >= 20)
  if (in_round("etcd-nofsync-sweep", 1) > 0 && w1 > 0)
    printf "- what fsync costs the sweep: %.2fx its keys/s with --unsafe-no-fsync (an extra row, never the default)\n", in_round("etcd-nofsync-sweep", 1) / w1
}
