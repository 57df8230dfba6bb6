#!/usr/bin/env bash
# bench/run on a small state: the CSV has its header and a row per contender, every
# leasejudge contender agreed with the Go baseline on every key (also on a state full of
# values at the edges of Go's encoding/json), the report and its charts (PNG and SVG, linked
# from report.md) are written, and a baseline that decides one key differently fails the
# run, loudly.
# Registered in the plain build only: under the sanitizers the runtime preloaded into
# bash would reach the Go programs, and the allocation counting is compiled out.
# Skips where the benchmarks or the Go baseline are not built (fails under CI=true).
set -euo pipefail
. "$(dirname "$0")/skip.sh"
src=${LEASEJUDGE_SOURCE_DIR:?}
bin=${LEASEJUDGE_BINARY_DIR:?}
if [ ! -x "$bin/bench/leasejudge-bench-sweep" ] || [ ! -x "$bin/bench/leasejudge-bench-gen" ]; then
  skip_or_fail "the benchmarks are not built here (LEASEJUDGE_BENCH=OFF)"
fi
if [ ! -x "$bin/bench/go-baseline" ] && ! command -v go >/dev/null; then
  skip_or_fail "no Go baseline and no go tool"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 1. A run that agrees (with the NATS rows on a small bucket).
bash "$src/bench/run" --build "$bin" --out "$tmp/ok" --keys 2000 --threads 2 --min-time 0.01 --max-reps 2 \
  --rounds 1 --leasedir-leases 0 --nats-keys 4000 --nats-cluster-keys 0 --etcd-keys 0 \
  >"$tmp/ok.out" 2>"$tmp/ok.err" || { cat "$tmp/ok.err" >&2; fail "bench/run exited $?"; }
csv=$tmp/ok/sweep.csv
[ "$(head -1 "$csv")" = "contender,keys,threads,keys_per_s,mb_per_s,peak_rss_mb" ] || fail "CSV header: $(head -1 "$csv")"
rows="go-encoding-json,2000,1 simdjson-raw,2000,1 plan,2000,1 plan,2000,2 capi-batch,2000,1 capi-lines,2000,1"
rows="$rows sweep-apply,2000,1"
agreed="plan-1 plan-2 capi-batch-1 capi-lines-1 sweep-apply-1"
if [ -f "$bin/bindings/go/pkgconfig/leasejudge.pc" ]; then
  rows="$rows go-planbatch,2000,1"
  agreed="$agreed go-planbatch-1"
else
  echo "note: the Go binding is not configured here: no go-planbatch row"
fi
for row in $rows; do
  grep -q "^$row,[0-9]*,[0-9.]*,[0-9.]*$" "$csv" || fail "no CSV row $row: $(cat "$csv")"
done
if [ -x "$bin/bench/leasejudge-bench-lock" ]; then
  grep -q "^lock-judge,1,1,[0-9]*,[0-9.]*,[0-9.]*$" "$csv" || fail "no lock-judge row: $(cat "$csv")"
  grep -q "^| mix | [0-9]* |$" "$tmp/ok.out" || fail "no lock judgments in the report"
fi
for c in $agreed; do
  grep -qx "$c (2000 keys)" "$tmp/ok/runs/agreed" || fail "$c did not pass the agreement check: $(cat "$tmp/ok/runs/agreed")"
done
grep -q "decides as the Go baseline on all 2000 keys" "$tmp/ok.err" || fail "no agreement line"
# The sweep on a real nats-server: its rows, each agreeing with the Go baseline on the
# node's keys, and its targets in the report.
if [ -x "$bin/bench/leasejudge-bench-nats" ]; then
  for c in nats-scan-raw nats-dry-run nats-sweep nats-per-key go-nats-seed; do
    grep -q "^$c,[1-9][0-9]*,1,[0-9]*,[0-9.]*,[0-9.]*" "$csv" || fail "no CSV row $c: $(cat "$csv")"
  done
  for c in nats-dry-run nats-sweep nats-per-key go-nats-seed; do
    grep -qx "$c (4000 keys, this node's)" "$tmp/ok/runs/agreed" || fail "$c did not pass the agreement check"
  done
  grep -q "^- NATS dry run: [0-9.]*x the per-key path" "$tmp/ok.out" || fail "no NATS targets in the report"
  grep -q "^Agreement on the NATS states: go-nats-seed" "$tmp/ok.out" || fail "no NATS agreement in the report"
  # The write path with sync_interval always beside the default, on 2.10.27.
  for c in nats-sync-default-2.10 nats-sync-always-2.10; do
    for r in sweep import; do
      grep -q "^$c-$r,[1-9][0-9]*,1,[0-9]*,[0-9.]*,[0-9.]*" "$csv" || fail "no CSV row $c-$r"
    done
    grep -qx "$c-sweep (4000 keys, this node's)" "$tmp/ok/runs/agreed" || fail "$c-sweep did not pass the agreement check"
  done
  grep -q "^- full sweep: [0-9]* keys/s of the node with sync_interval always, [0-9]* by default: [0-9.]*x" \
    "$tmp/ok.out" || fail "no sync_interval figures in the report"
else
  skip_or_fail "leasejudge-bench-nats is not built (LEASEJUDGE_NATS=OFF)"
fi
grep -q "^| plan | 1 |" "$tmp/ok.out" || fail "no table on stdout"
# Beside the two-thread figure, how many of the cores the host gave two busy processes,
# measured before the round: 1 to 2, give or take the host's changes of speed.
given=$(sed -n 's/^- 2000 keys: plan over 2 threads is .*; cores the host gave 2 busy processes at once before each round: \([0-9.]*\))$/\1/p' "$tmp/ok.out")
[ -n "$given" ] || fail "no cores given beside the two-thread figure: $(grep 'over 2 threads' "$tmp/ok.out")"
awk -v g="$given" 'BEGIN { exit !(g >= 0.5 && g <= 3) }' || fail "cores given out of range: $given"
grep -q "^contender,keys,threads,allocations_first_batch,allocations_per_batch,allocations_per_key$" \
  "$tmp/ok/allocations.csv" || fail "allocations.csv header"
if grep -q "^plan," "$tmp/ok/allocations.csv"; then
  grep -q "^plan,2000,1,[0-9]*,0,0.000000$" "$tmp/ok/allocations.csv" || fail "plan allocated when warm: $(cat "$tmp/ok/allocations.csv")"
else
  fail "no allocation count for plan"
fi
# The charts (gnuplot): one for the 2000 keys in memory, one per NATS store, each a PNG and
# an SVG that report.md links, each bar's words naming its contender and its ratio.
charts="sweep-2000"
[ -x "$bin/bench/leasejudge-bench-nats" ] && charts="$charts sweep-nats"
for c in $charts; do
  png=$tmp/ok/$c.png svg=$tmp/ok/$c.svg
  [ -s "$png" ] || fail "no $c.png, or an empty one"
  [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$c.png is no PNG"
  [ -s "$svg" ] || fail "no $c.svg, or an empty one"
  python3 - "$svg" <<'PY' || fail "$c.svg is no SVG"
import sys, xml.dom.minidom
root = xml.dom.minidom.parse(sys.argv[1]).documentElement
sys.exit(0 if root.tagName == "svg" else 1)
PY
  grep -q "<svg" "$svg" || fail "$c.svg has no <svg element"
  grep -qF "]($c.png)" "$tmp/ok/report.md" || fail "report.md does not show $c.png"
  grep -qF "]($c.svg)" "$tmp/ok/report.md" || fail "report.md does not link $c.svg"
done
grep -q ">go-encoding-json<" "$tmp/ok/sweep-2000.svg" || fail "the chart does not name the Go baseline"
grep -q ">plan x2<" "$tmp/ok/sweep-2000.svg" || fail "the chart does not name plan over two threads"
grep -q "/s  1\.00x<" "$tmp/ok/sweep-2000.svg" || fail "the Go baseline's bar is not labelled 1.00x"
[ ! -e "$tmp/ok/sweep.svg" ] || fail "the hand-drawn sweep.svg is still written"

# 2. Values at the edges of Go's encoding/json: every contender still decides as Go does.
bash "$src/bench/run" --build "$bin" --out "$tmp/edges" --keys 1500 --edge-pct 60 --threads 2 --min-time 0.01 \
  --max-reps 2 --rounds 1 --leasedir-leases 0 --nats-keys 0 --nats-cluster-keys 0 \
  --contenders go-encoding-json,plan,capi-batch,capi-lines,go-planbatch,sweep-apply \
  >"$tmp/edges.out" 2>"$tmp/edges.err" || { cat "$tmp/edges.err" >&2; fail "bench/run --edge-pct 60 exited $?"; }
for c in plan-1 plan-2 capi-batch-1 capi-lines-1 sweep-apply-1; do
  grep -qx "$c (1500 keys)" "$tmp/edges/runs/agreed" || fail "$c disagrees on the edge values"
done
grep -q "at the edges of encoding/json" "$tmp/edges.out" || fail "the edge state holds no edge values"

# 3. A baseline that decides one key otherwise: the run must fail and say where.
real=$bin/bench/go-baseline
cat >"$tmp/lying-baseline" <<LIE
#!/usr/bin/env bash
set -euo pipefail
"$real" "\$@"
args=("\$@")
for ((i = 0; i < \${#args[@]}; i++)); do
  if [ "\${args[i]}" = -decisions ]; then
    f=\${args[i+1]}
    # The first key it would end, left instead.
    awk -F'\t' 'BEGIN { OFS = "\t" } !done && \$2 == "end" { \$2 = "leave"; \$3 = ""; \$4 = ""; done = 1 } { print }' "\$f" >"\$f.lie"
    mv "\$f.lie" "\$f"
  fi
done
LIE
chmod +x "$tmp/lying-baseline"
[ -x "$real" ] || fail "no $real to wrap"
if LEASEJUDGE_BENCH_GO_BASELINE=$tmp/lying-baseline bash "$src/bench/run" --build "$bin" --out "$tmp/lie" \
     --keys 2000 --threads 1 --min-time 0.01 --max-reps 1 --rounds 1 --contenders go-encoding-json,plan >"$tmp/lie.out" 2>"$tmp/lie.err"; then
  fail "bench/run passed with a baseline that disagrees"
fi
grep -q "DISAGREEMENT: plan-1 (2000 keys)" "$tmp/lie.err" || { cat "$tmp/lie.err" >&2; fail "no DISAGREEMENT message"; }
grep -q "^< .*	end	" "$tmp/lie.err" && fail "the diff shows the wrong side"
grep -q "^> .*	end	the build module restarted while it ran\|^> .*	end	past the step bound" "$tmp/lie.err" \
  || { cat "$tmp/lie.err" >&2; fail "the diff does not show the key"; }
echo "ok: bench/run on 2000 keys, agreement checked both ways"
