# bench/nats_sync.awk: the figures of bench/nats_sync.sh's rows (bench/run's results:
# contender, threads, keys, seconds, bytes, peak RSS KiB, -, -, reps, verdicts, round,
# writes/s), read after bench/round_ratios.awk: sync_interval always against the default,
# each ratio the median over the rounds of the ratio within a round, with its range.
$1 ~ /^nats-sync-(default|always)-2\.10-/ && $4 > 0 {
  r = $3 / $4
  rate[$1, ++count[$1]] = r
  by_round[$1, $11 + 0] = r
  if ($12 != "") w[$1, $11 + 0] = $12
}
function spread(a, b,   r, lo, hi, x, n) {
  for (r = 1; r <= 99; r++) {
    if (in_round(a, r) <= 0 || in_round(b, r) <= 0) continue
    x = in_round(a, r) / in_round(b, r)
    if (n++ == 0 || x < lo) lo = x
    if (n == 1 || x > hi) hi = x
  }
  return n > 1 ? sprintf(" (%.2f-%.2fx over %d rounds)", lo, hi, n) : ""
}
function writes(name,   r, n, v, i, j, x) {
  for (r = 1; r <= 99; r++) if ((name SUBSEP r) in w) v[++n] = w[name, r]
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { x = v[j]; v[j] = v[j - 1]; v[j - 1] = x }
  return n == 0 ? 0 : (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
}
END {
  d = "nats-sync-default-2.10-"; a = "nats-sync-always-2.10-"
  if (count[a "sweep"] == 0 || count[d "sweep"] == 0) exit
  print ""
  print "NATS with `jetstream { sync_interval: always }` beside the default (a flush every two minutes),"
  print "nats-server 2.10.27, one server each, the same state (bench/nats_sync.sh): every write is"
  print "acknowledged only once it is on disk, what keeps an acknowledged lock through an OS crash."
  print ""
  printf "- full sweep: %.0f keys/s of the node with sync_interval always, %.0f by default: %.2fx%s; writes %.0f/s against %.0f/s\n", \
    median(a "sweep"), median(d "sweep"), ratio(a "sweep", d "sweep"), spread(a "sweep", d "sweep"), \
    writes(a "sweep"), writes(d "sweep")
  if (count[a "import"] > 0 && count[d "import"] > 0)
    printf "- import (every key created): %.0f keys/s with sync_interval always, %.0f by default: %.2fx%s\n", \
      median(a "import"), median(d "import"), ratio(a "import", d "import"), spread(a "import", d "import")
  printf "- bulk read (no write): %.2fx%s\n", ratio(a "scan-raw", d "scan-raw"), spread(a "scan-raw", d "scan-raw")
}
