# bench/etcd_targets.awk: the etcd sweep's targets from bench/run's results (the fields of
# bench/nats_targets.awk). Ratios are taken within one round (the per-key path, the seed,
# the imports and the Go loader run in the first round only, so theirs are that round's);
# rates are medians (bench/round_ratios.awk).
#   dry run >= 30x the per-key path and >= 0.8x the bulk read alone;
#   full sweep (1024 writes in flight) >= 20x the seed's EndStale over clientv3, and its
#   writes/s >= 10x those of the same sweep with a txn a write (etcd-sweep-txn1, 256 in
#   flight, as the path before);
#   step import of new keys >= 0.5x the Go loader's txns of 128 puts (keys/s); a
#   re-import of keys that exist within 2x the import's time a key.
$1 ~ /^(etcd|go-etcd-seed|go-etcd-load)/ && $4 > 0 {
  r = $3 / $4
  rate[$1, ++count[$1]] = r
  by_round[$1, $11 + 0] = r
  if ($12 != "") writes[$1, $11 + 0] = $12
}
# The median over the rounds of a's writes/s over b's in the same round (0: none).
function writes_ratio(a, b,   n, r, v, i, j, x) {
  n = 0
  for (r = 1; r <= 99; r++)
    if (((a SUBSEP r) in writes) && ((b SUBSEP r) in writes) && writes[b, r] > 0) v[++n] = writes[a, r] / writes[b, r]
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { x = v[j]; v[j] = v[j - 1]; v[j - 1] = x }
  return n == 0 ? 0 : (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
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
    if (count[l "-sweep-txn1"] > 0) {
      x = writes_ratio(l "-sweep", l "-sweep-txn1")
      printf "  - full sweep %.0f keys/s against %.0f with a txn a write (%.2fx); its writes/s %.1fx those of a txn a write, median of the rounds' ratios (target 10x: %s)\n", \
        median(l "-sweep"), median(l "-sweep-txn1"), ratio(l "-sweep", l "-sweep-txn1"), x, verdict(x >= 10)
      if (count[l "-sweep-w256"] > 0)
        printf "  - with a sweep's default window (256 writes, 2 txns in flight): %.0f keys/s, its writes/s %.1fx those of a txn a write\n", \
          median(l "-sweep-w256"), writes_ratio(l "-sweep-w256", l "-sweep-txn1")
    }
  }
  d1 = in_round("etcd-dry-run", 1); p1 = in_round("etcd-per-key", 1)
  w1 = in_round("etcd-sweep", 1); s1 = in_round("go-etcd-seed", 1); t1 = in_round("etcd-sweep-txn1", 1)
  if (d1 > 0 && p1 > 0)
    printf "- etcd dry run: %.1fx the per-key path (keys() + a get per key), in round 1 (target 30x: %s)\n", d1 / p1, verdict(d1 / p1 >= 30)
  if (w1 > 0 && s1 > 0)
    printf "- etcd full sweep: %.1fx the seed's EndStale over clientv3 (Keys, a Get and a Txn per key), in round 1 (target 20x: %s); with a txn a write %.1fx\n", w1 / s1, verdict(w1 / s1 >= 20), t1 / s1
  im = in_round("etcd-import", 1); re = in_round("etcd-reimport", 1); gl = in_round("go-etcd-load", 1)
  if (im > 0 && gl > 0)
    printf "- etcd step import of new keys: %.0f keys/s, %.2fx the Go loader's txns of 128 puts (%.0f keys/s; target 0.5x: %s)\n", im, im / gl, gl, verdict(im / gl >= 0.5)
  if (im > 0 && re > 0)
    printf "- etcd re-import of keys that exist: %.0f keys/s, its time a key %.2fx the import's (target within 2x: %s)\n", re, im / re, verdict(im / re <= 2)
  if (in_round("etcd-nofsync-sweep", 1) > 0 && w1 > 0)
    printf "- what fsync costs the sweep: %.2fx its keys/s with --unsafe-no-fsync (an extra row, never the default)\n", in_round("etcd-nofsync-sweep", 1) / w1
}
