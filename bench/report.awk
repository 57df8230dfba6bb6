# bench/report.awk: bench/run's report, from its results (tab-separated: contender, threads,
# keys, best seconds of the round, value bytes, peak RSS KiB, allocations in the first and the
# last repetition, repetitions, verdicts end/delete/leave, round; one row per contender and
# round). Every ratio is taken within a round, where both contenders ran back to back, and
# reported as the median of the rounds' ratios with their range; a contender's keys/s is the
# median of its rounds', its peak RSS the highest. ratio() serves any pair of contenders, so
# rows added to bench/run get ratios as they are. Writes the CSV (csv), the allocations
# (alloc), the charts' rows and their list (plotdir, charts: bench/plot.gp draws them) and
# the Markdown report (md, which links the charts; extras is appended to it); state_bytes
# (keys, bytes of the state's file) and loads (keys, round, load averages, cores the host
# gave) come from bench/run. A lock-judge row (one judgment a "key"; lock-judge-capi,
# -bash, -go, -node... for the bindings) goes to the CSV only.
#
# Targets (medians of per-round ratios): plan on one thread >= 25x the Go encoding/json sweep
# and >= 1.0x the raw simdjson pass; plan over 2 threads >= 1.8x one thread (on an idle
# machine: the load average is printed beside it); the Go binding's PlanBatch >= 15x the Go
# sweep; capi-lines (lj_step_plan_lines) >= 0.8x plan_batch's keys/s with a peak RSS <= 1.3x
# its input; sweep-apply >= 0.7x plan_batch's keys/s in at most 1.2 KB a key; no allocation
# per key on the plan path.

function label(c, t) { return (c == "plan" || t > 1) ? c " x" t : c }
function fmt_rate(x) {
  if (x >= 1e6) return sprintf("%.3gM", x / 1e6)
  if (x >= 1e3) return sprintf("%.3gk", x / 1e3)
  return sprintf("%.0f", x)
}
function log10(x) { return log(x) / log(10) }
function floor_(x) { return x == int(x) ? x : (x > 0 ? int(x) : int(x) - 1) }
# log10 of the largest 1, 2 or 5 times a power of ten at or below x, and of the smallest
# at or above it.
function snap_down(x,   e, m) {
  e = floor_(log10(x))
  m = x / 10 ^ e
  return e + (m >= 5 ? log10(5) : m >= 2 ? log10(2) : 0)
}
function snap_up(x,   e, m) {
  e = floor_(log10(x))
  m = x / 10 ^ e
  if (m <= 1.000001) return e
  return m <= 2 ? e + log10(2) : m <= 5 ? e + log10(5) : e + 1
}
function median_of(list, k,   i, j, x, a) {  # list[1..k], sorted in place
  for (i = 2; i <= k; i++) for (j = i; j > 1 && list[j - 1] > list[j]; j--) { x = list[j]; list[j] = list[j - 1]; list[j - 1] = x }
  return k % 2 ? list[(k + 1) / 2] : (list[k / 2] + list[k / 2 + 1]) / 2
}
# The rounds' ratios of keys/s of (a, ta) over (b, tb) at n keys: their median, or 0 when
# no round has both; rlo and rhi get the range, rn the rounds.
function ratio(a, ta, b, tb, n,   r, k, list) {
  k = 0
  for (r = 1; r <= maxround; r++)
    if (((a SUBSEP ta SUBSEP n SUBSEP r) in secs) && ((b SUBSEP tb SUBSEP n SUBSEP r) in secs))
      list[++k] = secs[b, tb, n, r] / secs[a, ta, n, r]
  rn = k
  if (k == 0) { rlo = rhi = 0; return 0 }
  rlo = rhi = list[1]
  for (r = 2; r <= k; r++) { if (list[r] < rlo) rlo = list[r]; if (list[r] > rhi) rhi = list[r] }
  return median_of(list, k)
}
function times(x) { return x >= 10 ? sprintf("%.1fx", x) : sprintf("%.2fx", x) }
function ranged(x) { return rn > 1 ? sprintf("%s (%s-%s)", times(x), times(rlo), times(rhi)) : times(x) }
function verdict(ok) { return ok ? "met" : "**missed**" }

# --- the charts: bench/plot.gp draws each from a file of rows (plotdir/NAME.tsv: y, group, name,
# keys/s, bar label; group 0 the bar the ratios are taken to, 1 the other references, 2
# leasejudge's contenders) listed in plotdir/charts.tsv (name, title, rows, x range, the
# baseline's keys/s, the y of the line between references and leasejudge's contenders).
# A store's rows: LABEL-scan-raw (its bulk read, the baseline) and LABEL-*, as bench/nats.sh
# and bench/etcd.sh name them; the seed over nats.go runs on the one-server bucket, nats,
# the seed over clientv3 and the Go loader (its txns of 128 puts) on the etcd cluster, etcd.
function store_of(c,   i, p, l, best) {
  if (c == "go-nats-seed") return ("nats-scan-raw" SUBSEP 1) in seen ? "nats" : ""
  if (c == "go-etcd-seed" || c == "go-etcd-load") return ("etcd-scan-raw" SUBSEP 1) in seen ? "etcd" : ""
  best = ""
  for (i = 1; i <= nseries; i++) {
    split(order[i], p, SUBSEP)
    if (p[1] !~ /-scan-raw$/) continue
    l = substr(p[1], 1, length(p[1]) - 9)
    if (index(c, l "-") == 1 && length(l) > length(best)) best = l
  }
  return best
}
# What bench/nats.sh's and bench/etcd.sh's labels stand for: one server or a three-node
# cluster with an R3 bucket, the system's nats-server or 2.10.27; three etcd members.
function store_text(l,   t) {
  if (l ~ /^etcd/) return "three etcd members" (l ~ /-nofsync$/ ? ", --unsafe-no-fsync" : "")
  if (l !~ /^nats/) return l
  t = l ~ /^nats-r3/ ? "three nats-servers, an R3 bucket" : "one nats-server"
  return t (l ~ /-2\.10$/ ? ", 2.10.27" : "")
}
# Adds (c, t) at n keys to the chart being built, in group g.
function entry(c, t, n, g) { ne++; ec[ne] = c; et[ne] = t; en[ne] = n; eg[ne] = g }
function memory_chart(n,   i, p, g) {
  ne = 0
  for (i = 1; i <= nseries; i++) {
    split(order[i], p, SUBSEP)
    if (!((p[1] SUBSEP p[2] SUBSEP n) in kps) || store_of(p[1]) != "") continue
    g = p[1] == "go-encoding-json" ? 0 : (p[1] == "simdjson-raw" || p[1] == "plan-floor") ? 1 : 2
    entry(p[1], p[2], n, g)
  }
  write_chart("sweep-" n, sprintf("%d keys in memory (%.0f MB of JSON lines): keys/s, %s", n, file_bytes[n] / 1e6, \
    (("go-encoding-json" SUBSEP 1 SUBSEP n) in kps) ? "x the Go encoding/json sweep" : "no Go baseline in this run"), "go-encoding-json", 1, n)
}
function store_chart(l,   i, p, q, key, n, g) {
  ne = 0
  for (i = 1; i <= nseries; i++) {
    split(order[i], p, SUBSEP)
    if (store_of(p[1]) != l) continue
    for (key in kps) {  # a store's rows have one size each
      split(key, q, SUBSEP)
      if (q[1] != p[1] || q[2] != p[2]) continue
      g = p[1] == l "-scan-raw" ? 0 : (p[1] == l "-go-consumer" || p[1] ~ /^go-(nats|etcd)-(seed|load)$/) ? 1 : 2
      entry(p[1], p[2], q[3] + 0, g)
      if (g == 0) n = q[3] + 0
    }
  }
  write_chart("sweep-" l, sprintf("%s (%s): %d keys of this node: keys/s, x the bulk read", l, store_text(l), n), l "-scan-raw", 1, n)
}
# Writes the chart of entries 1..ne, references above leasejudge's contenders, each bar
# labelled with its keys/s and its ratio to (bc, bt) at bn keys: the median of the rounds'
# ratios, or, where no round holds both (another state: nats-r3-fleet8), of the medians.
function write_chart(name, title, bc, bt, bn,   g, i, y, x, key, lo, hi, gap, out, base, txt) {
  if (ne == 0) return
  out = plotdir "/" name ".tsv"
  base = ((bc SUBSEP bt SUBSEP bn) in kps) ? kps[bc, bt, bn] : 0
  lo = 1e300; hi = 0; y = 0; gap = 0
  for (g = 0; g <= 2; g++) for (i = 1; i <= ne; i++) {
    if (eg[i] != g) continue
    if (g == 2 && !gap && y > 0) { gap = y + 0.75; y += 0.5 }
    key = ec[i] SUBSEP et[i] SUBSEP en[i]
    x = ratio(ec[i], et[i], bc, bt, bn)
    if (x <= 0 && base > 0) x = kps[key] / base
    txt = fmt_rate(kps[key]) "/s" (x >= 0.1 ? "  " times(x) : x > 0 ? sprintf("  %.2gx", x) : "")
    printf "%.2f\t%d\t%s\t%.3f\t%s\n", ++y, g, label(ec[i], et[i]), kps[key], txt > out
    if (kps[key] < lo) lo = kps[key]
    if (kps[key] > hi) hi = kps[key]
  }
  close(out)
  # The x range: from below the shortest bar, with room right of the longest for its label.
  lo = snap_down(lo / 3)
  hi = snap_up(10 ^ (log10(hi) + 0.5 * (log10(hi) - lo) + 0.2))
  chart_name[++nchart] = name; chart_title[nchart] = title
  printf "%s\t%s\t%.2f\t%.3f\t%.3f\t%.3f\t%.2f\n", name, title, y, 10 ^ lo, 10 ^ hi, base, gap > charts
}

{
  c = $1; t = $2 + 0; n = $3 + 0; s = $4 + 0; r = ($11 == "" ? 1 : $11 + 0)
  if (s <= 0) next
  if (c ~ /^lock-judge/) {  # not a sweep: the CSV only (one judgment per "key")
    lock_rows[++nlock] = sprintf("%s,%d,%d,%.0f,%.1f,%.1f", c, n, t, n / s, $5 / s / 1e6, ($6 == "" ? 0 : $6 / 1024))
    next
  }
  key = c SUBSEP t SUBSEP n
  secs[key, r] = s
  if (r > maxround) maxround = r
  rss_r = ($6 == "" ? 0 : $6 / 1024)
  if (!(key in vbytes)) { rows[++nrows] = key; rss[key] = rss_r }
  if (rss_r > rss[key]) rss[key] = rss_r
  vbytes[key] = $5
  nrounds[key]++
  rate_list[key, nrounds[key]] = n / s
  afirst[key] = $7; alast[key] = $8; verdicts[key] = $10
  if (!((c SUBSEP t) in seen)) { seen[c, t] = 1; order[++nseries] = c SUBSEP t }
  if (!(n in sized)) { sized[n] = 1; sizes[++nsizes] = n }
}

END {
  while ((getline l < state_bytes) > 0) { split(l, f, "\t"); file_bytes[f[1]] = f[2] }
  while ((getline l < loads) > 0) { split(l, f, "\t"); load_at[f[1], f[2]] = f[3]; given_at[f[1], f[2]] = f[4] }
  # a contender's keys/s: the median of its rounds'
  for (i = 1; i <= nrows; i++) {
    key = rows[i]
    for (k = 1; k <= nrounds[key]; k++) tmp[k] = rate_list[key, k]
    kps[key] = median_of(tmp, nrounds[key])
    split(key, p, SUBSEP)
    mbps[key] = kps[key] * vbytes[key] / p[3] / 1e6
  }
  # sizes ascending
  for (i = 2; i <= nsizes; i++) for (j = i; j > 1 && sizes[j - 1] > sizes[j]; j--) { x = sizes[j]; sizes[j] = sizes[j - 1]; sizes[j - 1] = x }

  print "contender,keys,threads,keys_per_s,mb_per_s,peak_rss_mb" > csv
  print "contender,keys,threads,allocations_first_batch,allocations_per_batch,allocations_per_key" > alloc
  for (i = 1; i <= nrows; i++) {
    split(rows[i], p, SUBSEP)
    printf "%s,%d,%d,%.0f,%.1f,%.1f\n", p[1], p[3], p[2], kps[rows[i]], mbps[rows[i]], rss[rows[i]] > csv
    if (alast[rows[i]] != "-" && alast[rows[i]] != "")
      printf "%s,%d,%d,%d,%d,%.6f\n", p[1], p[3], p[2], afirst[rows[i]], alast[rows[i]], alast[rows[i]] / p[3] > alloc
  }
  for (i = 1; i <= nlock; i++) print lock_rows[i] > csv
  close(csv); close(alloc)

  # --- the charts, drawn by bench/plot.gp: one per state size and one per store -------------------
  for (k = 1; k <= nsizes; k++) memory_chart(sizes[k])
  for (i = 1; i <= nseries; i++) {
    split(order[i], p, SUBSEP)
    if (p[1] ~ /-scan-raw$/) store_chart(substr(p[1], 1, length(p[1]) - 9))
  }
  close(charts)

  # --- the table -----------------------------------------------------------------------------
  print "# Sweep throughput" > md
  print "" > md
  print "Each contender ran in its own process on the same generated steps state, every contender of a" > md
  print "size once per round, back to back; times are the best repetition of the decide loop only" > md
  print "(reading the JSON lines into memory is not timed, except by capi-lines-fd, which streams the" > md
  print "file). keys/s is the median of the rounds'; MB/s counts the values' bytes (10^6 bytes a MB);" > md
  print "peak RSS (MiB) is the process's, state in memory included (the highest of the rounds)." > md
  print "\"x Go\", \"x raw\" and \"x floor\" are keys/s over the Go encoding/json sweep's, the raw simdjson" > md
  print "pass's and the plan-like floor's, each taken within a round: the median of the rounds' ratios" > md
  print "(their range in the targets below). Allocations are those made during one repetition (the" > md
  print "last; the first in parentheses when it differs: buffers warming): every malloc and new of the" > md
  print "process for the C++ and C contenders, Go heap objects (runtime.MemStats.Mallocs) for the two Go" > md
  print "programs." > md
  if (nchart > 0) {
    print "" > md
    print "## Charts" > md
    print "" > md
    print "keys/s on a log scale, one chart per state size and one per store; grey bars are the references" > md
    print "(not leasejudge), the darkest the one each bar's ratio is taken to; blue bars are leasejudge's." > md
    for (i = 1; i <= nchart; i++)
      printf "\n![%s](%s.png)\n\n[%s.svg](%s.svg)\n", chart_title[i], chart_name[i], chart_name[i], chart_name[i] > md
  }
  for (k = 1; k <= nsizes; k++) {
    n = sizes[k]
    print "" > md
    printf "## %d keys (%.0f MB of JSON lines, %d round%s)\n\n", n, file_bytes[n] / 1e6, maxround, (maxround > 1 ? "s" : "") > md
    print "| contender | threads | keys/s | MB/s | peak RSS MiB | x Go | x raw | x floor | allocations | end / delete / leave |" > md
    print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" > md
    for (i = 1; i <= nseries; i++) {
      split(order[i], p, SUBSEP)
      key = p[1] SUBSEP p[2] SUBSEP n
      if (!(key in kps)) continue
      xg = ratio(p[1], p[2], "go-encoding-json", 1, n); xg = xg > 0 ? times(xg) : "-"
      xr = ratio(p[1], p[2], "simdjson-raw", 1, n); xr = xr > 0 ? times(xr) : "-"
      xf = ratio(p[1], p[2], "plan-floor", 1, n); xf = xf > 0 ? times(xf) : "-"
      al = alast[key]
      if (al != "-" && afirst[key] != al) al = al " (" afirst[key] ")"
      vd = verdicts[key] == "" ? "-" : verdicts[key]
      printf "| %s | %d | %s | %.0f | %.0f | %s | %s | %s | %s | %s |\n", p[1], p[2], fmt_rate(kps[key]), mbps[key], rss[key], xg, xr, xf, al, vd > md
    }
  }

  # --- targets ---------------------------------------------------------------------------------
  print "" > md
  print "## Targets (medians of the rounds' ratios, range in parentheses)" > md
  print "" > md
  for (k = 1; k <= nsizes; k++) {
    n = sizes[k]
    if ((x = ratio("plan", 1, "go-encoding-json", 1, n)) > 0)
      printf "- %d keys: plan, one thread, is %s the Go encoding/json sweep (target 25x: %s)\n", n, ranged(x), verdict(x >= 25) > md
    if ((x = ratio("plan", 1, "simdjson-raw", 1, n)) > 0)
      printf "- %d keys: plan, one thread, is %s the raw simdjson pass that reads every field (target 1.0x: %s)\n", n, ranged(x), verdict(x >= 1.0) > md
    if ((x = ratio("plan", 1, "plan-floor", 1, n)) > 0)
      printf "- %d keys: plan, one thread, is %s the plan-like floor that reads what the rules read and checks nothing: what validation costs\n", n, ranged(x) > md
    if ((x = ratio("simdjson-raw", 1, "go-encoding-json", 1, n)) > 0)
      printf "- %d keys: for scale, the raw simdjson pass (which only reads) is %s the Go sweep\n", n, ranged(x) > md
    for (i = 1; i <= nseries; i++) {
      split(order[i], p, SUBSEP)
      if (p[1] != "plan" || p[2] < 2 || (x = ratio("plan", p[2], "plan", 1, n)) <= 0) continue
      loadtext = giventext = ""
      for (r = 1; r <= maxround; r++) {
        if ((n SUBSEP r) in load_at) loadtext = loadtext sprintf("%s%s", loadtext == "" ? "" : "; ", load_at[n, r])
        if (given_at[n, r] != "") giventext = giventext sprintf("%s%s", giventext == "" ? "" : "; ", given_at[n, r])
      }
      if (giventext != "") giventext = sprintf("; cores the host gave %d busy processes at once before each round: %s", p[2], giventext)
      printf "- %d keys: plan over %d threads is %s one thread (target 1.8x on an idle machine: %s; load average 1/5/15 min before each round: %s, on %s cores%s)\n", n, p[2], ranged(x), verdict(x >= 1.8), loadtext, ncores, giventext > md
    }
    if ((x = ratio("go-planbatch", 1, "go-encoding-json", 1, n)) > 0)
      printf "- %d keys: the Go binding's PlanBatch is %s the Go encoding/json sweep (target 15x: %s)\n", n, ranged(x), verdict(x >= 15) > md
    if ((x = ratio("capi-lines", 1, "plan", 1, n)) > 0)
      printf "- %d keys: capi-lines (lj_step_plan_lines, JSON lines in and out) is %s plan_batch's keys/s (target 0.8x: %s)\n", n, ranged(x), verdict(x >= 0.8) > md
    for (i = 1; i <= nseries; i++) {
      split(order[i], p, SUBSEP)
      if (p[1] != "capi-lines" || p[2] < 2 || (x = ratio("capi-lines", p[2], "capi-lines", 1, n)) <= 0) continue
      printf "- %d keys: capi-lines over %d threads (each piece of lines shared between them) is %s one thread\n", n, p[2], ranged(x) > md
    }
    key = "capi-lines" SUBSEP 1 SUBSEP n
    if ((key in rss) && file_bytes[n] > 0) {
      x = rss[key] * 1048576 / file_bytes[n]
      printf "- %d keys: capi-lines holds its input: peak RSS %.0f MiB, %.2fx the input's %.0f MB (target 1.3x: %s)\n", n, rss[key], x, file_bytes[n] / 1e6, verdict(x <= 1.3) > md
    }
    # The command's target is for what a user runs: its default, one thread a processor
    # (the most threads measured); its one-thread figure is said beside it.
    cmd_threads = 0
    for (i = 1; i <= nseries; i++) {
      split(order[i], p, SUBSEP)
      if (p[1] == "command" && p[2] + 0 > cmd_threads && ratio("command", p[2], "plan", 1, n) > 0) cmd_threads = p[2] + 0
    }
    if (cmd_threads > 0) {
      x = ratio("command", cmd_threads, "plan", 1, n)
      xtext = ranged(x)
      onetext = ""
      if (cmd_threads > 1 && (one = ratio("command", 1, "plan", 1, n)) > 0) onetext = "; over one thread (--threads 1) " ranged(one)
      printf "- %d keys: the command (leasejudge step plan FILE, the whole process: start, read, plan, write) over %d thread%s, its default on %s cores, is %s plan_batch's keys/s on one (target 0.8x: %s)%s\n", n, cmd_threads, cmd_threads == 1 ? "" : "s", ncores, xtext, verdict(x >= 0.8), onetext > md
    }
    if ((x = ratio("sweep-apply", 1, "plan", 1, n)) > 0)
      printf "- %d keys: sweep-apply (end_stale on the memory store: scan, plan, ends and deletes written, logged) is %s plan_batch's keys/s (target 0.7x: %s)\n", n, ranged(x), verdict(x >= 0.7) > md
    key = "sweep-apply" SUBSEP 1 SUBSEP n
    if (key in rss) {
      x = rss[key] * 1048576 / n / 1000
      printf "- %d keys: sweep-apply's peak RSS is %.0f MiB, %.2f KB (10^3 bytes) a key, the state in memory included (target 1.2 KB: %s)\n", n, rss[key], x, verdict(x <= 1.2) > md
    }
    key = "capi-lines-fd" SUBSEP 1 SUBSEP n
    if ((key in rss) && file_bytes[n] > 0) {
      x = ratio("capi-lines-fd", 1, "plan", 1, n)
      printf "- %d keys: capi-lines-fd (lj_step_plan_lines_fd, streamed) is %s plan_batch's keys/s with a peak RSS of %.0f MiB (%.3fx its %.0f MB input): bounded, whatever the input's size\n", n, ranged(x), rss[key], rss[key] * 1048576 / file_bytes[n], file_bytes[n] / 1e6 > md
    }
  }
  # Allocation on the plan path: the last repetition's count must not grow with the keys.
  for (i = 1; i <= nseries; i++) {
    split(order[i], p, SUBSEP)
    if (p[1] != "plan" && p[1] != "capi-batch") continue
    line = ""; most = -1; least = -1
    for (k = 1; k <= nsizes; k++) {
      key = p[1] SUBSEP p[2] SUBSEP sizes[k]
      if (!(key in alast) || alast[key] == "-") continue
      a = alast[key] + 0
      line = line sprintf("%s%d at %d keys", line == "" ? "" : ", ", a, sizes[k])
      if (a > most) most = a
      if (least < 0 || a < least) least = a
      lastn = sizes[k]
    }
    if (line == "") continue
    # O(1) per batch: at most a few allocations per thread, whatever the number of keys.
    ok = most <= 64 * p[2]
    printf "- %s: allocations per batch %s (no allocation per key: %s)\n", label(p[1], p[2]), line, verdict(ok) > md
  }

  while ((getline l < extras) > 0) { if (!hdr++) { print "" > md; print "## States, agreement, other figures" > md; print "" > md } print l > md }
  close(md)

}
