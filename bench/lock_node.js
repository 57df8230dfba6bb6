// The Node rows of the lock-judge benchmark (bench/lock_rows.sh runs it):
//
//   node lock_node.js PACKAGE_DIR MIX.tsv MIN_SECONDS [SEED.js]
//
// 1. The package's judgeHeldLock over the whole body mix leasejudge-bench-lock writes
//    (this process's pid where it says @SELF@), on this machine's evidence (the
//    default here) with an in-process describer, as the C++ rows judge.
// 2. With the seed's own module (SEED.js, transpiled TypeScript): the seed and the
//    package side by side on the process-holder mix (alive here, dead here, another
//    machine's lease running, one ended), each on its own default here, in
//    alternating rounds; the ratio of each round, and their median.
// Each verdict is checked first (the mix's break flags; the seed and the package
// alike). Rates are per second of this process's CPU time (user and system), as
// leasejudge-bench-lock's are. Prints one JSON object per row.
'use strict';
const fs = require('fs');

const [packageDir, mixPath, minText, seedPath] = process.argv.slice(2);
const lj = require(require("path").resolve(packageDir));
const minSeconds = Number(minText) > 0 ? Number(minText) : 1;
const now = new Date(Date.UTC(2024, 5, 1, 12, 0, 0));
const mix = fs.readFileSync(mixPath, 'utf8').trim().split('\n').map((line) => {
  const [name, breaks, body] = line.split('\t');
  return {name, breaks: breaks === '1', text: body.replaceAll('@SELF@', String(process.pid))};
});
const running = {
  kind: 'running'
};
const succeeded = {
  kind: 'finished',
  how: 'succeeded'
};
const cloudRun = (ref) => (ref.name.endsWith('done1') ? succeeded : running);

function check(module, bodies, what) {
  for (const b of bodies) {
    const v = module.judgeHeldLock(b.text, cloudRun, now);
    if ((v.kind === 'break') !== b.breaks) throw new Error(`${what}: ${b.name} is judged ${v.kind}: ${v.why}`);
  }
}

// CPU time of this process (user and system), in microseconds: on a machine shared
// with other work, wall time would count the time others had the CPU.
function cpuMicros() {
  const u = process.cpuUsage();
  return u.user + u.system;
}

// Judgments per CPU second of module over bodies, for about seconds of CPU.
function rate(module, bodies, seconds) {
  const texts = bodies.map((b) => b.text);
  const n = texts.length;
  let judged = 0;
  const start = cpuMicros();
  const limit = seconds * 1e6;
  let elapsed = 0;
  while (elapsed < limit) {
    for (let k = 0; k < 256; k++) module.judgeHeldLock(texts[k % n], cloudRun, now);
    judged += 256;
    elapsed = cpuMicros() - start;
  }
  return judged / (elapsed / 1e6);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

check(lj, mix, 'the package');
rate(lj, mix, Math.min(0.2, minSeconds));  // warm-up: the JIT and the library's caches
console.log(JSON.stringify({row: 'node', bodies: 'mix', judgments_per_s: Math.round(rate(lj, mix, minSeconds))}));

if (seedPath) {
  const seed = require(require("path").resolve(seedPath));
  const holders =
      mix.filter((b) => ['process/alive', 'process/dead', 'process/elsewhere', 'process/expired'].includes(b.name));
  check(seed, holders, 'the seed');
  check(lj, holders, 'the package');
  for (const b of holders) {
    const a = JSON.stringify(seed.judgeHeldLock(b.text, cloudRun, now));
    const p = JSON.stringify(lj.judgeHeldLock(b.text, cloudRun, now));
    if (a !== p) throw new Error(`${b.name}: the seed says ${a}, the package ${p}`);
  }
  const rounds = 7;
  const slice = Math.max(0.05, minSeconds / 2);
  rate(seed, holders, Math.min(0.2, minSeconds));
  rate(lj, holders, Math.min(0.2, minSeconds));
  const seedRates = [], pkgRates = [], ratios = [];
  for (let r = 0; r < rounds; r++) {
    // Alternate who goes first, so neither always runs on a warmer machine.
    let s, p;
    if (r % 2) {
      p = rate(lj, holders, slice);
      s = rate(seed, holders, slice);
    } else {
      s = rate(seed, holders, slice);
      p = rate(lj, holders, slice);
    }
    seedRates.push(s);
    pkgRates.push(p);
    ratios.push(p / s);
  }
  console.log(JSON.stringify({
    row: 'node-vs-seed',
    bodies: 'process holders',
    rounds,
    seed_judgments_per_s: Math.round(median(seedRates)),
    package_judgments_per_s: Math.round(median(pkgRates)),
    ratio_median: Number(median(ratios).toFixed(2)),
    ratio_min: Number(Math.min(...ratios).toFixed(2)),
    ratio_max: Number(Math.max(...ratios).toFixed(2)),
  }));
}
