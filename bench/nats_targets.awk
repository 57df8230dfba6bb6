# bench/nats_targets.awk: the NATS sweep's targets from bench/run's results (tab-separated:
# contender, threads, keys, seconds, bytes, peak RSS KiB, -, -, reps, verdicts, writes/s);
# each contender's best round counts. Ratios are within this run.
#   dry run >= 200k keys/s, >= 30x the per-key path, >= 20x the seed over nats.go;
#   full sweep >= 100k keys/s; the read path's peak RSS within 2x the node's values.
function verdict(ok) { return ok ? "met" : "**missed**" }
$1 ~ /^(nats|go-nats-seed)/ && $4 > 0 {
  r = $3 / $4
  if (!($1 in best) || r > best[$1]) { best[$1] = r; bytes[$1] = $5; w[$1] = $11 }
  if ($6 > rss[$1]) rss[$1] = $6
}
END {
  dry = best["nats-dry-run"]; sweep = best["nats-sweep"]; perkey = best["nats-per-key"]
  seed = best["go-nats-seed"]; raw = best["nats-scan-raw"]
  if (dry > 0) printf "- NATS dry run: %.0f keys/s of the node (target 200k: %s)\n", dry, verdict(dry >= 200000)
  if (dry > 0 && perkey > 0)
    printf "- NATS dry run: %.1fx the per-key path (target 30x: %s)\n", dry / perkey, verdict(dry / perkey >= 30)
  if (dry > 0 && seed > 0)
    printf "- NATS dry run: %.1fx the seed's EndStale over nats.go (target 20x: %s)\n", dry / seed, verdict(dry / seed >= 20)
  if (sweep > 0)
    printf "- NATS full sweep: %.0f keys/s of the node, %.0f writes/s (target 100k keys/s: %s); %.1fx the seed\n", \
      sweep, w["nats-sweep"], verdict(sweep >= 100000), seed > 0 ? sweep / seed : 0
  if (dry > 0 && raw > 0)
    printf "- what bounds the dry run: the bulk read alone (nats-scan-raw, nothing planned) runs at %.0f keys/s; the dry run, at %.0f%% of it, is bound by the server's delivery and nats.c, not by the plan\n", \
      raw, 100 * dry / raw
  if (rss["nats-dry-run"] > 0 && bytes["nats-dry-run"] > 0)
    printf "- NATS dry run peak RSS: %.0f MiB for %.0f MB of the node's keys and values (target within 2x: %s)\n", \
      rss["nats-dry-run"] / 1024, bytes["nats-dry-run"] / 1e6, \
      verdict(rss["nats-dry-run"] * 1024 <= 2 * bytes["nats-dry-run"])
  if (best["nats-r3-dry-run"] > 0)
    printf "- NATS R3 cluster: dry run %.0f keys/s, full sweep %.0f keys/s\n", best["nats-r3-dry-run"], best["nats-r3-sweep"]
}
