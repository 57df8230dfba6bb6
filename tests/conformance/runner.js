'use strict';
// The conformance table through the Node package (bindings/node): one answer line per
// scenario, "<name>\t<JSON>" (check.py compares). The package has no owner token (no
// plan-self): that kind is answered "unsupported".
const fs = require('fs');
const os = require('os');

if (!process.env.LEASEJUDGE_NODE_PACKAGE || !fs.existsSync(process.env.LEASEJUDGE_NODE_PACKAGE + '/leasejudge.node')) {
  process.stderr.write(`the Node package is not built (${process.env.LEASEJUDGE_NODE_PACKAGE})\n`);
  process.exit(77);
}
const lj = require(process.env.LEASEJUDGE_NODE_PACKAGE);

const CLASSES = {LJ_EINVAL: 'invalid', LJ_ESTORE: 'store', LJ_EIO: 'io', LJ_EPARSE: 'parse', LJ_ENOTFOUND: 'notfound',
                 LJ_ECHANGED: 'changed'};

function errorOf(e) {
  if (CLASSES[e.code]) return {error: CLASSES[e.code]};
  if (e instanceof TypeError || e instanceof RangeError) return {error: 'invalid'};
  return {error: `${e.name}: ${e.message}`};
}

function plan(s) {
  const input = s.lines.map((l) => l + '\n').join('');
  const o = {node: s.node, now: new Date(s.now), before: new Date(s.before)};
  if ('owner' in s) o.owner = s.owner;
  if ('rule' in s) o.rule = s.rule;
  if ('min_age_ms' in s) o.minAgeMs = s.min_age_ms;
  let got;
  try {
    got = lj.planStepLines(Buffer.from(input), o);
  } catch (e) {
    return errorOf(e);
  }
  if (s.kind === 'owner') return {owner: 'accepted'};
  const rows = got.lines.toString().split('\n').filter((l) => l).map((l) => JSON.parse(l))
      .map((d) => [d.key, d.action, d.reason]);
  return {plan: rows};
}

function openStore(s) {
  let answer;
  try {
    lj.openStore(s.url, {create: s.create}).close();
    answer = {opened: true};
  } catch (e) {
    answer = errorOf(e);
  }
  if ('probe' in s) answer.exists_after = fs.existsSync(s.probe);
  return answer;
}

function lease(s) {
  const store = lj.openStore(s.url, {create: true});
  const got = lj.acquireLock(store, s.key, {purpose: 'conformance lease', holder: {leaseMs: s.lease_ms},
                                            now: new Date(s.now0)});
  const first = JSON.parse(got.lock.body).leaseUntil;
  // lease-reopen: another run renews it, knowing only the key and the acquisition id.
  const lock = s.kind === 'lease-reopen' ? lj.openLock(store, s.key, got.lock.id, lj.LOCK_LEASE_AS_TAKEN) : got.lock;
  lock.renew(new Date(s.now1));
  const answer = {leaseUntil: [first, JSON.parse(lock.body).leaseUntil]};
  store.close();
  return answer;
}

function lock(s) {
  const store = lj.openStore(s.url, {create: true});
  if (s.holder) {
    const body = JSON.stringify(s.holder).replace('{{HOST}}', os.hostname()).replace('{{MACHINE}}', lj.machineId() || '');
    store.create(s.key, body);
  }
  const got = lj.acquireLock(store, s.key, {purpose: 'conformance lock', holder: {leaseMs: s.lease_ms},
                                            now: new Date(s.now)});
  const answer = {outcome: got.outcome};
  if (got.lock) {
    answer.broke = got.brokeAt !== 0 && got.brokeAt !== 0n;
    got.lock.release();
  }
  if (got.verdict) answer.reason = got.verdict.reason;
  store.close();
  return answer;
}

async function wait(s) {
  const store = lj.openStore(s.url, {create: true});
  const body = JSON.stringify(s.holder).replace('{{HOST}}', os.hostname()).replace('{{MACHINE}}', lj.machineId() || '');
  store.create(s.key, body);
  const got = await lj.acquireLockWait(store, s.key, {purpose: 'conformance wait', holder: {leaseMs: s.lease_ms},
                                                      timeoutMs: s.wait_ms});
  const now = store.get(s.key);
  const answer = {acquired: got.lock !== null && got.lock !== undefined,
                  holder_kept: now !== null && now !== undefined && lj.parseLockBody(now.value.toString()) !== null &&
                      lj.parseLockBody(now.value.toString()).id === s.holder.id};
  if (got.lock) got.lock.release();
  store.close();
  return answer;
}

function judge(s) {
  const body = s.body.split('{{HOST}}').join(os.hostname()).split('{{MACHINE}}').join(lj.machineId() || '');
  const v = lj.judgeLock(Buffer.from(body), undefined, new Date(s.now));
  return {kind: v.kind, reason: v.reason, manual: v.manualRemoval};
}

// release: our lock released while ours, after another writer took its key (another),
// or after its key was removed (gone); loss: renewed after another writer took its key.
function release(s) {
  const store = lj.openStore(s.url, {create: true});
  const lock = lj.acquireLock(store, s.key, {purpose: 'conformance release', holder: {leaseMs: s.lease_ms}}).lock;
  try {
    const c = s.case || 'another';
    if (c === 'another') store.update(s.key, lj.lockBody('another writer', new Date()), lock.revision);
    if (c === 'gone') store.remove(s.key, lock.revision);
    if (s.kind === 'loss') {
      lock.renew();
      return {renewed: true};
    }
    lock.release();
    return {released: true};
  } catch (e) {
    return errorOf(e);
  } finally {
    store.close();
  }
}

function answer(s) {
  switch (s.kind) {
    case 'plan':
    case 'owner': return plan(s);
    case 'open': return openStore(s);
    case 'lease':
    case 'lease-reopen': return lease(s);
    case 'lock': return lock(s);
    case 'wait': return wait(s);
    case 'judge': return judge(s);
    case 'release':
    case 'loss': return release(s);
    default: return null;
  }
}

const table = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
(async () => {
for (const s of table.scenarios) {
  let a;
  try {
    a = await answer(s);
  } catch (e) {  // one scenario's failure is its answer; the others still run
    a = {exception: `${e.name}: ${e.message}`};
  }
  process.stdout.write(`${s.name}\t${a === null ? 'unsupported' : JSON.stringify(a)}\n`);
}
})();
