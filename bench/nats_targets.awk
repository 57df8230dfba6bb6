# bench/nats_targets.awk: the NATS sweep's targets from bench/run's results (tab-separated:
# contender, threads, keys, seconds, bytes, peak RSS KiB, -, -, reps, verdicts, round,
# writes/s). Rates are the median over the rounds; a ratio is taken within a round (the
# per-key path and the seed run in the first round only, so theirs are that round's).
#   dry run >= 200k keys/s, >= 30x the per-key path, >= 20x the seed over nats.go;
#   full sweep >= 100k keys/s; the read path's peak RSS within 2x the node's values.
# And, per server version and replication (labels nats, nats-r3, nats-2.10,
# nats-r3-2.10): on 2.10.27 R3 a full sweep >= 30k keys/s and a dry run >= 0.8x the
# R3 bulk read alone; on one replica a dry run >= 0.9x the bulk read and the bulk read
# >= 0.8x a bare nats.go ordered consumer; on 2.9.10 R3 no slower than the 1.9k keys/s
# of a full sweep before the write path followed the server's version.
$1 ~ /^(nats|go-nats-seed)/ && $4 > 0 {
  r = $3 / $4
  rate[$1, ++count[$1]] = r
  by_round[$1, $11 + 0] = r
  bytes[$1] = $5
  if ($12 != "") writes[$1, count[$1]] = $12
  if ($6 > rss[$1]) rss[$1] = $6
}
END {
  dry = median("nats-dry-run"); sweep = median("nats-sweep"); raw = median("nats-scan-raw")
  if (dry > 0) printf "- NATS dry run: %.0f keys/s of the node, median of %d rounds (target 200k: %s)\n", dry, count["nats-dry-run"], verdict(dry >= 200000)
  d1 = in_round("nats-dry-run", 1); p1 = in_round("nats-per-key", 1); s1 = in_round("go-nats-seed", 1)
  if (d1 > 0 && p1 > 0)
    printf "- NATS dry run: %.1fx the per-key path, in round 1 (target 30x: %s)\n", d1 / p1, verdict(d1 / p1 >= 30)
  if (d1 > 0 && s1 > 0)
    printf "- NATS dry run: %.1fx the seed's EndStale over nats.go, in round 1 (target 20x: %s)\n", d1 / s1, verdict(d1 / s1 >= 20)
  if (sweep > 0) {
    w1 = in_round("nats-sweep", 1)
    printf "- NATS full sweep: %.0f keys/s of the node, median (target 100k: %s)", sweep, verdict(sweep >= 100000)
    if (w1 > 0 && s1 > 0) printf "; %.1fx the seed in round 1", w1 / s1
    printf "\n"
  }
  if (dry > 0 && raw > 0)
    printf "- what bounds the dry run: the bulk read alone (nats-scan-raw, nothing planned) runs at %.0f keys/s (median); the dry run, at %.0f%% of it, is bound by the server's delivery and nats.c, not by the plan\n", \
      raw, 100 * dry / raw
  if (rss["nats-dry-run"] > 0 && bytes["nats-dry-run"] > 0)
    printf "- NATS dry run peak RSS: %.0f MiB for %.0f MB of the node's keys and values (target within 2x: %s)\n", \
      rss["nats-dry-run"] / 1024, bytes["nats-dry-run"] / 1e6, \
      verdict(rss["nats-dry-run"] * 1024 <= 2 * bytes["nats-dry-run"])
  im = in_round("nats-import", 1); re = in_round("nats-reimport", 1)
  if (im > 0)
    printf "- NATS step import of new keys: %.0f keys/s (33k before: %s)", im, verdict(im >= 33000)
  if (im > 0 && re > 0)
    printf "; a re-import of keys that exist %.0f keys/s, its time a key %.2fx the import's", re, im / re
  if (im > 0) printf "\n"
  split("nats nats-2.10 nats-r3 nats-r3-2.10", labels, " ")
  for (i = 1; i <= 4; i++) {
    l = labels[i]
    if (count[l "-dry-run"] == 0) continue
    printf "- %s: bulk read %.0f, dry run %.0f, full sweep %.0f keys/s of the node", l, median(l "-scan-raw"), \
      median(l "-dry-run"), median(l "-sweep")
    if (count[l "-go-consumer"] > 0) printf ", nats.go ordered consumer %.0f", median(l "-go-consumer")
    printf " (medians); sweep writes %.0f/s\n", wmedian(l "-sweep")
    x = ratio(l "-dry-run", l "-scan-raw")
    if (l ~ /r3-2.10/) {
      printf "  - full sweep %.0f keys/s (target 30k: %s); dry run %.2fx the bulk read (target 0.8x: %s)\n", \
        median(l "-sweep"), verdict(median(l "-sweep") >= 30000), x, verdict(x >= 0.8)
    } else if (l == "nats-r3") {
      printf "  - full sweep %.0f keys/s against 1.9k before this round's write path (target: no slower: %s)\n", \
        median(l "-sweep"), verdict(median(l "-sweep") >= 1900)
    } else {
      y = ratio(l "-scan-raw", l "-go-consumer")
      printf "  - dry run %.2fx the bulk read (target 0.9x: %s)", x, verdict(x >= 0.9)
      if (y > 0) printf "; bulk read %.2fx the nats.go consumer (target 0.8x: %s)", y, verdict(y >= 0.8)
      printf "\n"
    }
    if (count[l "-fleet8"] > 0)
      printf "  - a fleet of 8 nodes swept at once: %.0f keys/s over all of them\n", median(l "-fleet8")
  }
}
function wmedian(name,   n, i, j, x, v) {
  n = 0
  for (i = 1; i <= count[name]; i++) if ((name SUBSEP i) in writes) v[++n] = writes[name, i]
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { x = v[j]; v[j] = v[j - 1]; v[j - 1] = x }
  return n == 0 ? 0 : (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
}
