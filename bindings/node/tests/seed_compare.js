// The seed's cases (tests/lock_seed_cases.js), answered in this one process by the
// seed's own module and by the package: the same kind, manual removal, why, describer
// use, execution state, parsed and renewed bodies, and new bodies byte for byte.
//
//   node seed_compare.js SEED.js PACKAGE_DIR CASES.js
//
// Where the two may differ by design, the expected value is made from the seed's
// answer by that rule alone, computed here:
//   - a lone UTF-16 surrogate in a why or an execution state's detail, and a NUL in
//     a why, come back as U+FFFD (the C ABI's texts are UTF-8 C strings): the seed's
//     answer is compared toWellFormed(), NULs replaced;
//   - a new body of a process holder (or of none) carries this process's owner
//     token, "owner":"<boot id>.<pid>.<start ms base 36>", computed here from
//     /proc as the token's definition says, and a process holder's body then its
//     lease, "leaseMs":N (leaseUntil - startedAt - 5 min, whole ms in 1..366 days);
//   - a body leasejudge parses keeps its owner (no case here has one that is a string).
'use strict';
const assert = require('assert');
const fs = require('fs');
const {execFileSync} = require('child_process');

const [seedPath, packageDir, casesPath] = process.argv.slice(2);
const seed = require(seedPath);
const lj = require(packageDir);
const {generate} = require(casesPath);

// The lease a process holder's new body records after its owner ("leaseMs", whole ms
// in 1..366 days), read from the seed's answer: leaseUntil - startedAt - the skew.
function leaseMsOf(c) {
  if (!c.holder || 'execution' in c.holder) return '';
  const body = JSON.parse(c.answer);
  const lease = Date.parse(body.leaseUntil) - Date.parse(body.startedAt) - 5 * 60 * 1000;
  return lease >= 1 && lease <= 366 * 24 * 3600 * 1000 ? `,"leaseMs":${lease}` : '';
}

// This process's owner token, from the kernel's record of its start.
function ownerToken() {
  let boot = 'no-boot-id';
  try {
    boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || boot;
  } catch {
  }
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const ticks = BigInt(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  const btime = BigInt(/^btime (\d+)$/m.exec(fs.readFileSync('/proc/stat', 'utf8'))[1]);
  const hz = BigInt(execFileSync('getconf', ['CLK_TCK'], {encoding: 'utf8'}).trim());
  const startMs = btime * 1000n + (ticks * 1000n) / hz;
  return `${boot}.${process.pid}.${startMs.toString(36)}`;
}

const well = (s) => (typeof s === 'string' ? s.toWellFormed() : s);
const wellWhy = (s) => well(s).replaceAll('\0', '\ufffd');
const wellState = (s) => {
  const out = {kind: s.kind};
  if ('how' in s) out.how = well(s.how);
  if ('error' in s) out.error = well(s.error);
  return out;
};

const {inputs, legacy} = generate(seed);
const owner = ownerToken();
const counts = {};
const failures = [];
function check(type, n, fn) {
  counts[type] = (counts[type] || 0) + 1;
  try {
    fn();
  } catch (e) {
    if (failures.length < 25)
      failures.push(`case ${n} (${type}): ${e.message}`);
    else
      failures.length++;
  }
}

inputs.forEach((c, n) => {
  if ('here' in c) {
    check('judge', n, () => {
      let called = false;
      const v = lj.judgeHeldLock(c.text, () => {
        called = true;
        return c.describe;
      }, new Date(c.now), c.here);
      const want = {...c.answer, why: wellWhy(c.answer.why)};
      assert.deepStrictEqual(v, want);
      assert.deepStrictEqual(Object.keys(v), Object.keys(c.answer));
      assert.strictEqual(called, c.called, 'the describer\'s use');
      // The seed's parse of the same text, owner aside (the schema drops it).
      const parsed = lj.parseLockBody(c.text);
      if (parsed !== null) delete parsed.owner;
      assert.deepStrictEqual(parsed, seed.parseLockBody(c.text));
    });
  } else if ('result' in c) {
    check('state', n, () => {
      assert.deepStrictEqual(lj.parseExecutionState(c.result), wellState(c.answer));
    });
  } else if ('purpose' in c) {
    check('body', n, () => {
      const body = lj.lockBody(c.purpose, new Date(c.now), c.holder, c.id);
      const want = c.holder && 'execution' in c.holder ? c.answer : c.answer.slice(0, -1) + `,"owner":"${owner}"${leaseMsOf(c)}}`;
      assert.strictEqual(body, want);
      assert.deepStrictEqual(
          lj.parseLockBody(body),
          {...seed.parseLockBody(c.answer), ...(c.holder && 'execution' in c.holder ? {} : {owner}),
           ...(leaseMsOf(c) ? {leaseMs: Number(leaseMsOf(c).slice(11))} : {})});
    });
  } else {
    check('renew', n, () => {
      const parsed = lj.parseLockBody(c.text);
      let body = 'unreadable';
      if (parsed) {
        try {
          body = lj.renewedLockBody(parsed, new Date(c.now), c.lease);
        } catch (e) {
          body = 'error';
        }
      }
      assert.strictEqual(body, c.answer);
    });
  }
});
// The other calls of the module, once each, against the seed.
check('other', inputs.length, () => {
  assert.strictEqual(lj.machineId(), seed.machineId());
  assert.strictEqual(lj.machineId({K_SERVICE: 'svc'}), null);
  assert.strictEqual(lj.machineId({CLOUD_RUN_EXECUTION: 'x'}), seed.machineId({CLOUD_RUN_EXECUTION: 'x'}));
  assert.strictEqual(lj.PROCESS_LEASE_MS, seed.PROCESS_LEASE_MS);
  assert.strictEqual(lj.LEASE_SKEW_MS, seed.LEASE_SKEW_MS);
  for (const ref
           of [{projectId: 'caelo-prod', region: 'europe-west1', name: 'job-x'},
               {projectId: 'é p', region: 'r"', name: 'a b'}])
    assert.deepStrictEqual(lj.describeExecutionArgs(ref), seed.describeExecutionArgs(ref));
  assert.strictEqual(lj.processAlive(process.pid), seed.processAlive(process.pid));
  assert.strictEqual(lj.processAlive(1), seed.processAlive(1));
  // The default here is this machine, as the seed's is.
  const mine = lj.lockBody('mine', new Date(), {leaseMs: 60000});
  const st = {kind: 'running'};
  assert.deepStrictEqual(lj.judgeHeldLock(mine, () => st, new Date()), seed.judgeHeldLock(mine, () => st, new Date()));
});

const total = Object.values(counts).reduce((a, b) => a + b, 0);
console.log(
    `# ${total} cases: ${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')}; ` +
    `${legacy} left out (a lease only V8's legacy date parser reads)`);
if (failures.length > 0) {
  for (const f of failures.slice(0, 25)) console.log(`# ${f}`);
  console.log(`not ok - the package and the seed disagree on ${failures.length} case(s)`);
  process.exit(1);
}
console.log('ok - the package answers every case as the seed does');
