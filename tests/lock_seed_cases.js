// The lock seed's fidelity cases: lock bodies, gcloud answers, new and renewed bodies
// made by a seeded random walk (LJ_LOCK_SEED_RANDOM, default fixed, so a failure can
// be replayed) and answered by the seed itself.
//
// generate(seed) gives { records, inputs, legacy }: records are the JSON lines that
// lock_test's seed driver reads (text as hex bytes); inputs[i] holds what records[i]
// gave the seed as JavaScript values, and what the seed answered, for a judge in
// this same process (bindings/node/tests/seed_compare.js). legacy counts the bodies
// left out because only V8's legacy date parser reads their lease.
//
// As a program: node lock_seed_cases.js SEED.js > cases.jsonl (tests/lock_seed_test.sh).
'use strict';
const os = require('os');

function generate(seed) {
  let state = Number(process.env.LJ_LOCK_SEED_RANDOM || 20240501) | 0;
  function rnd() {  // mulberry32: the same cases for the same seed
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const chance = (p) => rnd() < p;
  const hex = (s) => Buffer.from(s, 'utf8').toString('hex');
  const out = [];
  const inputs = [];
  const NOW = Date.UTC(2024, 4, 1, 12, 0, 0);
  const iso = (ms) => new Date(ms).toISOString();

  const texts = [
    'deploy', 'caelo state lock', '', ' ', 'a"b\\c/d', 'é ü 😀', '\u0000x', 'line\nbreak\ttab', '\ud800lone', 'x\udfff',
    '\u2028\u00a0', 'x'.repeat(300), 'job-abc', 'Ünïcödé', '\u001f\u007f'
  ];
  const numbers = [
    100, 200, 300, 0, -0, 1.5, -1, 1e21, 1e-7, 2147483648, 123456789.125, 5e-324, 1e400, -1e400,
    123456789012345678901234567890, 0.1, 1e300, -2.5e-8, 48213
  ];
  const deltas = [-86400000, -900001, -900000, -1, 0, 1, 900000, 900001, 3600000, 86400000 * 3];
  function leaseText() {
    const d = pick(deltas);
    switch (Math.floor(rnd() * 14)) {
      case 0:
        return 'soon';
      case 1:
        return '';
      case 2:
        return iso(NOW + d).replace('.000Z', 'Z');
      case 3:
        return iso(NOW + d).replace('Z', '+00:00');
      case 4:
        return '2024-05-01T14:00:00.000+02:00';
      case 5:
        return '2024-05-01';
      case 6:
        return '2024-05-01T12:00:00';  // local time: TZ=UTC here and there
      case 7:
        return '+002024-05-01T12:00:00.000Z';
      case 8:
        return '2024-05-01T12:00:00.0001Z';
      case 9:
        return '2024-02-30T12:00:00Z';
      case 10:
        return '2024-05-01T24:00:00Z';
      case 11:
        return '2024-05-01T11:59:59.999999999Z';
      default:
        return iso(NOW + d);
    }
  }
  const json = (v) => JSON.stringify(v);
  function numberText(n) {
    if (n === 1e400) return '1e400';
    if (n === -1e400) return '-1e400';
    if (n === 123456789012345678901234567890) return '123456789012345678901234567890';
    if (Object.is(n, -0)) return '-0';
    return json(n);
  }
  function wrongValue() { return pick(['1', 'null', 'true', '[]', '{}', '"s"', '-0.5']); }
  function executionValue() {
    if (chance(0.15)) return wrongValue();
    const parts = [];
    for (const k of ['projectId', 'region', 'name']) {
      if (chance(0.06)) continue;
      parts.push(
          [k, chance(0.06) ? (chance(0.5) ? '""' : wrongValue()) : json(pick(['p', 'r', 'job-abc', 'é', '\ud800']))]);
    }
    if (chance(0.2)) parts.push(['extra', wrongValue()]);
    if (chance(0.1)) parts.push(['name', json('dup-name')]);
    shuffle(parts);
    return '{' + parts.map(([k, v]) => json(k) + ':' + v).join(',') + '}';
  }
  function shuffle(a) {
    for (let i = a.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [a[i], a[j]] = [a[j], a[i]];
    }
  }
  function bodyText(allowOwner) {
    const f = [];
    const add = (k, v, p) => {
      if (chance(p)) f.push([k, v]);
    };
    add('purpose', chance(0.96) ? json(pick(texts)) : wrongValue(), 0.97);
    add('id', chance(0.95) ? json(pick(['i-1', '5f0c6f7e-3a1b-4c2d-9e8f-0a1b2c3d4e5f'])) : wrongValue(), 0.6);
    add('host', chance(0.95) ? json(pick(['build-7', 'build-8', '', 'localhost'])) : wrongValue(), 0.7);
    add('machine', chance(0.95) ? pick(['null', '"m-aaa"', '"m-bbb"', '""']) : wrongValue(), 0.6);
    add('pid', chance(0.95) ? numberText(pick(numbers)) : pick(['"200"', 'null', 'true']), 0.7);
    add('startedAt', chance(0.95) ? json(pick(['2024-05-01T11:00:00.000Z', '', 'T'])) : wrongValue(), 0.6);
    add('execution', executionValue(), 0.35);
    add('leaseUntil', chance(0.95) ? json(leaseText()) : wrongValue(), 0.7);
    if (allowOwner) add('owner', pick(['"tok"', '5']), 0.1);
    add('unknown', pick(['[1,{"a":[true,false,null]}]', '"x"', '{"purpose":1}', '1e999']), 0.2);
    if (chance(0.08) && f.length > 0) {
      const [k] = pick(f);
      f.push([k, pick([wrongValue(), json('later')])]);
    }
    if (chance(0.08) && f.length > 0) {
      const [k, v] = pick(f);
      f.unshift([k, wrongValue()]);
      f.push([k, v]);
    }
    shuffle(f);
    const ws = () => pick(['', '', '', ' ', '\n', '\t', '\r\n ']);
    const key = (k) => (k === 'purpose' && chance(0.05) ? '"p\\u0075rpose"' : json(k));
    return ws() + '{' + f.map(([k, v]) => ws() + key(k) + ws() + ':' + ws() + v + ws()).join(',') + '}' + ws();
  }
  function mutate(bytes) {
    const b = Buffer.from(bytes);
    switch (Math.floor(rnd() * 9)) {
      case 0:
        return b.subarray(0, Math.floor(rnd() * b.length));
      case 1: {
        const i = Math.floor(rnd() * b.length);
        return Buffer.concat(
            [b.subarray(0, i), Buffer.from(pick(['x', ',', ']', '}', '"', '\\', '\u0000', '\u00a0'])), b.subarray(i)]);
      }
      case 2:
        return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b]);
      case 3: {
        const i = Math.floor(rnd() * b.length);
        return Buffer.concat([
          b.subarray(0, i), Buffer.from(pick([[0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xf0, 0x9f, 0x98]])),
          b.subarray(i)
        ]);
      }
      case 4:
        return Buffer.concat([Buffer.from('['), b, Buffer.from(']')]);
      case 5:
        return Buffer.from(pick(['', '   ', 'null', '42', '"text"', '[]', 'not json', '\u00a0\ufeff x \u3000']));
      case 6:
        return Buffer.concat([b, Buffer.from(pick([' x', '}', ' {}', '\u0000']))]);
      default: {
        const i = Math.floor(rnd() * b.length);
        const c = Buffer.from(b);
        if (c.length) c[i] = pick([0x22, 0x5c, 0x2c, 0x3a, 0x20]);
        return c;
      }
    }
  }

  // Judging. A lease that only V8's legacy fallback reads ("2024-05-01 14:00", "May 1")
  // is no readable lease in leasejudge by design (DESIGN.md, "Times"): such cases are
  // left out and counted. ISO-like: what V8's ISO reader could take.
  const ISO_LIKE =
      /^(?:[+-]\d{6}|\d{4})(?:-\d{2}(?:-\d{2})?)?(?:[Tt]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?)?$/;
  let legacy = 0;
  function legacyLease(text) {
    const body = seed.parseLockBody(text);
    return body !== null && typeof body.leaseUntil === 'string' && !Number.isNaN(Date.parse(body.leaseUntil)) &&
        !ISO_LIKE.test(body.leaseUntil.split('\u0000')[0]);
  }
  const HOSTS = [
    ['build-7', 'id', 'm-aaa'], ['build-7', 'absent', null], ['build-7', 'none', null], ['build-8', 'id', 'm-bbb'],
    ['localhost', 'id', 'm-aaa']
  ];
  const DEAD = [[200, 1.5, 1e21, -1, 0], [], [100, 200, 300, 48213]];
  const NOWS = [NOW, NOW - 1, NOW + 1, NOW + 900000, NOW + 900001, NOW + 86400000];
  for (let i = 0; i < 20000; i++) {
    let bytes = Buffer.from(bodyText(true), 'utf8');
    if (chance(0.15)) bytes = mutate(bytes);
    if (chance(0.005)) bytes = Buffer.from(JSON.stringify({purpose: 'p'.repeat(200000), leaseUntil: iso(NOW)}));
    const text = bytes.toString('utf8');  // a JS string decodes as the seed's caller does
    if (legacyLease(text)) {
      legacy++;
      i--;
      continue;
    }
    const [host, machineKind, machine] = pick(HOSTS);
    const dead = pick(DEAD);
    const here = {host, alive: (pid) => !dead.includes(pid)};
    if (machineKind === 'id') here.machine = machine;
    if (machineKind === 'none') here.machine = null;
    const st = pick([
      {kind: 'finished', how: pick(['succeeded', 'cancelled', 'nonzeroexitcode', '', 'é\ud800'])}, {kind: 'running'},
      {kind: 'not-found'}, {kind: 'unknown', error: pick(['PERMISSION_DENIED', 'gcloud exited 1', ''])}
    ]);
    let called = false;
    const now = pick(NOWS);
    const v = seed.judgeHeldLock(text, () => {
      called = true;
      return st;
    }, new Date(now), here);
    inputs.push({text, describe: st, now, here, answer: v, called});
    out.push({
      t: 'judge',
      text: bytes.toString('hex'),
      now,
      host: hex(host),
      machineKind,
      machine,
      dead,
      describe: {kind: st.kind, detail: hex(st.how ?? st.error ?? '')},
      expect: {kind: v.kind, manualRemoval: v.manualRemoval === true, called, why: hex(v.why)}
    });
  }

  // Execution state.
  function condition() {
    if (chance(0.05)) return wrongValue();
    const p = [];
    if (chance(0.95))
      p.push([
        'type', chance(0.95) ? json(pick(['Completed', 'Ready', 'completed', 'ResourcesAvailable'])) : wrongValue()
      ]);
    if (chance(0.95))
      p.push(['status', chance(0.95) ? json(pick(['True', 'False', 'Unknown', 'true'])) : wrongValue()]);
    if (chance(0.5))
      p.push([
        'reason',
        chance(0.9) ? json(pick([
          'Cancelled', 'NonZeroExitCode', '', 'ÉCHEC', 'Running', 'ΣΊΣΥΦΟΣ', 'İSTANBUL', 'ДА', 'ΑΣ.Σ', 'Σ', '\ud800X'
        ])) :
                      wrongValue()
      ]);
    if (chance(0.3)) p.push(['message', json('m')]);
    shuffle(p);
    return '{' + p.map(([k, v]) => json(k) + ':' + v).join(',') + '}';
  }
  function stateText() {
    if (chance(0.1)) return pick(['', 'Listed 0 items.', '[]', 'null', '{"status":{}} x', '{', '"s"']);
    const status = [];
    if (chance(0.5))
      status.push(['completionTime', chance(0.9) ? json(pick(['2024-05-01T11:40:00Z', ''])) : wrongValue()]);
    if (chance(0.8)) {
      if (chance(0.05))
        status.push(['conditions', wrongValue()]);
      else {
        const n = Math.floor(rnd() * 4);
        const cs = [];
        for (let k = 0; k < n; k++) cs.push(condition());
        status.push(['conditions', '[' + cs.join(',') + ']']);
      }
    }
    if (chance(0.2)) status.push(['runningCount', '1']);
    const top = [];
    if (chance(0.9))
      top.push(
          ['status', chance(0.95) ? '{' + status.map(([k, v]) => json(k) + ':' + v).join(',') + '}' : wrongValue()]);
    if (chance(0.3)) top.push(['metadata', '{"name":"job-x","labels":{"a":"b"}}']);
    shuffle(top);
    return '{' + top.map(([k, v]) => json(k) + ':' + v).join(',') + '}';
  }
  const ERRS = [
    '', ' \n', 'ERROR: NOT_FOUND: x', 'Execution not found', 'It Could Not Be Found', 'job does not exist',
    'PERMISSION_DENIED: denied', '\u00a0 boom \u3000', 'not_found', 'NotFound', 'does not exists'
  ];
  for (let i = 0; i < 6000; i++) {
    const ok = chance(0.75);
    const result =
        {ok, stdout: ok ? stateText() : '', stderr: ok ? '' : pick(ERRS), exitCode: ok ? 0 : pick([1, 2, 127])};
    const s = seed.parseExecutionState(result);
    inputs.push({result, answer: s});
    out.push({
      t: 'state',
      ok,
      out: hex(result.stdout),
      err: hex(result.stderr),
      code: result.exitCode,
      expect: {kind: s.kind, detail: hex(s.how ?? s.error ?? '')}
    });
  }

  // New bodies: the seed writes with its own host, machine id and pid.
  const author = {host: os.hostname(), machine: seed.machineId(), pid: process.pid};
  for (let i = 0; i < 2000; i++) {
    const purpose =
        pick(texts.filter((t) => !/[\ud800-\udfff]/.test(t.replace(/[\ud800-\udbff][\udc00-\udfff]/g, ''))));
    const now = NOW + Math.floor(rnd() * 1e9) - 5e8;
    const kind = pick(['none', 'process', 'execution']);
    const lease = pick([600000, 1000, 0, 3600000, 86400000]);
    const ex = {
      projectId: pick(['caelo-prod', 'p']),
      region: pick(['europe-west1', 'é']),
      name: pick(['job-x', 'a"b'])
    };
    const holder = kind === 'none' ? undefined :
        kind === 'process'         ? {leaseMs: lease} :
                                     {execution: ex, maxRuntimeMs: lease};
    const id = pick(['5f0c6f7e-3a1b-4c2d-9e8f-0a1b2c3d4e5f', 'i-1', '\u00e9']);
    const body = seed.lockBody(purpose, new Date(now), holder, id);
    inputs.push({purpose, now, holder, id, answer: body});
    out.push({
      t: 'body',
      purpose: hex(purpose),
      now,
      id,
      author: {host: hex(author.host), machine: author.machine, pid: author.pid},
      holder: {kind, lease, project: hex(ex.projectId), region: hex(ex.region), name: hex(ex.name)},
      expect: {body: hex(body)}
    });
  }

  // Renewed bodies (the seed drops unknown keys; leasejudge keeps only its owner, left out here).
  for (let i = 0; i < 6000; i++) {
    let bytes = Buffer.from(bodyText(false), 'utf8');
    if (chance(0.05)) bytes = mutate(bytes);
    const parsed = seed.parseLockBody(bytes.toString('utf8'));
    const now = pick(NOWS);
    const lease = pick([600000, 0, 1000]);
    let body = 'unreadable';
    if (parsed) {
      try {
        body = hex(seed.renewedLockBody(parsed, new Date(now), lease));
      } catch (e) {
        body = 'error';
      }
    }
    inputs.push({
      text: bytes.toString('utf8'),
      now,
      lease,
      answer: body === 'unreadable' || body === 'error' ? body : Buffer.from(body, 'hex').toString('utf8')
    });
    out.push({t: 'renew', text: bytes.toString('hex'), now, lease, expect: {body}});
  }
  return {records: out, inputs, legacy};
}

module.exports = {generate};

if (require.main === module) {
  const {records, legacy} = generate(require(process.argv[2]));
  process.stdout.write(records.map((c) => JSON.stringify(c)).join('\n') + '\n');
  process.stderr.write(`# left out: ${legacy} bodies whose lease only V8's legacy date parser reads\n`);
}
