# bench/round_ratios.awk: what the stores' targets (bench/nats_targets.awk,
# bench/etcd_targets.awk) are computed with, over the rows each of them reads: rate[NAME, i]
# the i-th of count[NAME] rates of a contender, by_round[NAME, ROUND] its rate in a round.
function verdict(ok) { return ok ? "met" : "**missed**" }
function median(name,   n, i, j, x, v) {
  n = count[name]
  for (i = 1; i <= n; i++) v[i] = rate[name, i]
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { x = v[j]; v[j] = v[j - 1]; v[j - 1] = x }
  return n == 0 ? 0 : (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
}
function in_round(name, r) { return ((name SUBSEP r) in by_round) ? by_round[name, r] : 0 }
# The median over the rounds of a's rate over b's in the same round (0: none).
function ratio(a, b,   n, r, v, i, j, x) {
  n = 0
  for (r = 1; r <= 99; r++) if (in_round(a, r) > 0 && in_round(b, r) > 0) v[++n] = in_round(a, r) / in_round(b, r)
  for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { x = v[j]; v[j] = v[j - 1]; v[j - 1] = x }
  return n == 0 ? 0 : (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2)
}
