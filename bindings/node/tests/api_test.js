// The Node package's API: exact verdicts, whys and bodies on the lock fixtures
// (tests/fixtures/lock, written by hand from the JavaScript lock code), reason codes,
// execution state, stores and the lock's life, the step plan, and bad input of
// every kind: wrong types (TypeError, code LJ_EINVAL), callbacks that throw (their
// own exception comes through) or return junk (a TypeError), texts past 16 MiB (a
// RangeError), NUL and bytes that are no UTF-8. TAP output.
"use strict";
const assert = require("assert");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { spawnSync } = require("child_process");

const lj = require(process.env.LEASEJUDGE_NODE_PACKAGE);
const fixtures = path.join(process.env.LEASEJUDGE_SOURCE_DIR, "tests/fixtures/lock");
const processBody = fs.readFileSync(path.join(fixtures, "process-holder.json"), "utf8").trim();
const executionBody = fs.readFileSync(path.join(fixtures, "execution-holder.json"), "utf8").trim();

const { test, end } = require("./tap");
// fn must throw an error of type Type whose code is code (and message matches).
function throwsCode(fn, Type, code, message) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof Type, `${e} is no ${Type.name}`);
    assert.strictEqual(e.code, code);
    if (message) assert.match(e.message, message);
    return true;
  });
}

const at = (iso) => new Date(iso);
const NOW = at("2024-05-01T12:00:00.000Z");
// The judge of the fixtures: devbox, with the fixture's machine id; pid 48213 dead.
const devbox = { host: "devbox", machine: "0123456789abcdef0123456789abcdef", alive: (pid) => pid !== 48213 };
const liveDevbox = { ...devbox, alive: () => true };
const never = () => assert.fail("the describer was called for a process holder");

test("the process fixture: held, then broken once its lease has passed or its pid is gone here", () => {
  const who = "caelo state lock (on devbox, pid 48213, started 2024-05-01T11:55:00.000Z)";
  assert.deepStrictEqual(lj.judgeHeldLock(processBody, never, NOW, liveDevbox), {
    kind: "held",
    why: `held by ${who}; its lease runs until 2024-05-01T12:10:00.000Z unless renewed`,
    manualRemoval: false,
  });
  assert.deepStrictEqual(lj.judgeHeldLock(processBody, never, at("2024-05-01T12:10:00.001Z"), liveDevbox), {
    kind: "break",
    why: `${who} stopped renewing its lock; its lease ended at 2024-05-01T12:10:00.000Z`,
  });
  assert.deepStrictEqual(lj.judgeHeldLock(processBody, never, NOW, devbox), {
    kind: "break",
    why: `${who} has ended (its process is gone on this machine)`,
  });
  // Another machine's judge never trusts the dead pid; nor one without a machine id.
  assert.strictEqual(lj.judgeHeldLock(processBody, never, NOW, { ...devbox, machine: "ffff" }).kind, "held");
  assert.strictEqual(lj.judgeHeldLock(processBody, never, NOW, { ...devbox, machine: null }).kind, "held");
  // A body from before machine ids is judged by host name; a judge that states none
  // trusts no body that names one.
  const old = '{"purpose":"p","host":"devbox","pid":5}';
  assert.strictEqual(lj.judgeHeldLock(old, never, NOW, { host: "devbox", alive: () => false }).kind, "break");
  assert.strictEqual(lj.judgeHeldLock(processBody, never, NOW, { host: "devbox", alive: () => false }).kind, "held");
  assert.deepStrictEqual(lj.judgeLock(processBody, never, NOW, devbox), {
    kind: "break",
    reason: "process_gone",
    manualRemoval: false,
    why: `${who} has ended (its process is gone on this machine)`,
  });
  // An invalid Date compares false with the lease, as NaN does: held.
  assert.strictEqual(lj.judgeLock(processBody, never, new Date(NaN), liveDevbox).reason, "lease_runs");
});

test("the execution fixture: every state Cloud Run may give", () => {
  const who = "caelo upgrader (run caelo-upgrader-x7k2p, started 2024-05-01T11:30:00.000Z)";
  const refs = [];
  const ask = (state) => (ref) => {
    refs.push(ref);
    return state;
  };
  assert.deepStrictEqual(lj.judgeHeldLock(executionBody, ask({ kind: "finished", how: "succeeded" }), NOW),
                         { kind: "break", why: `${who} has succeeded, but its lock was left behind` });
  assert.deepStrictEqual(refs, [{ projectId: "caelo-prod", region: "europe-west1", name: "caelo-upgrader-x7k2p" }]);
  assert.deepStrictEqual(lj.judgeHeldLock(executionBody, ask({ kind: "running" }), at("2030-01-01T00:00:00Z")),
                         { kind: "held", why: `${who} is still running`, manualRemoval: false });
  assert.deepStrictEqual(lj.judgeHeldLock(executionBody, ask({ kind: "not-found" }), NOW), {
    kind: "held",
    why: `${who} is unknown to Cloud Run, but its lease runs until 2024-05-01T12:35:00.000Z`,
    manualRemoval: false,
  });
  assert.deepStrictEqual(lj.judgeLock(executionBody, ask({ kind: "not-found" }), at("2024-05-01T12:35:00.001Z")), {
    kind: "break",
    reason: "execution_not_found_lease_ended",
    manualRemoval: false,
    why: `${who} is unknown to Cloud Run and its lease ended at 2024-05-01T12:35:00.000Z`,
  });
  assert.deepStrictEqual(lj.judgeHeldLock(executionBody, ask({ kind: "unknown", error: "PERMISSION_DENIED" }), NOW),
                         { kind: "unknown", why: `could not check whether ${who} is still running: PERMISSION_DENIED` });
});

test("bodies that are no lock: held for a person, quoting the text", () => {
  const cases = [
    ["", "the lock's holder is not readable (empty)"],
    ["   ", "the lock's holder is not readable (empty)"],
    ["[]", "the lock's holder is not readable ([])"],
    ['{"purpose":1}', 'the lock\'s holder is not readable ({"purpose":1})'],
    ['{"purpose":"a\u0000b"', 'the lock\'s holder is not readable ({"purpose":"a\ufffdb")'],
  ];
  for (const [text, why] of cases)
    assert.deepStrictEqual(lj.judgeHeldLock(text, never, NOW, devbox), { kind: "held", why, manualRemoval: true });
  // Bytes that are no UTF-8 read as U+FFFD, as Buffer.toString does.
  const v = lj.judgeLock(Buffer.from([0x7b, 0xff, 0x7d]), never, NOW, devbox);
  assert.deepStrictEqual(v, { kind: "held", reason: "not_readable", manualRemoval: true,
                              why: "the lock's holder is not readable ({\ufffd})" });
  // A NUL inside a string is kept in the body and shown as U+FFFD in the why.
  const nul = lj.judgeHeldLock('{"purpose":"a\\u0000b"}', never, NOW, devbox);
  assert.deepStrictEqual(nul, { kind: "held", why: "held by a\ufffdb", manualRemoval: true });
  assert.strictEqual(lj.parseLockBody('{"purpose":"a\\u0000b\\ud800"}').purpose, "a\u0000b\ud800");
});

test("reason codes are the C ABI's numbers", () => {
  assert.strictEqual(lj.LockReason.not_readable, 1);
  assert.strictEqual(lj.LockReason.lease_ended, 11);
  assert.strictEqual(lj.LockReason.pid_reused, 14);
  assert.strictEqual(lj.LockReason.store_lease_ended, 15);
  assert.strictEqual(lj.LockReason.store_lease_unknown, 16);
  assert.strictEqual(Object.keys(lj.LockReason).length, 16);
  assert.ok(Object.isFrozen(lj.LockReason));
});

test("bodies: new, parsed, renewed", () => {
  const body = lj.lockBody("deploy", NOW, { leaseMs: 1000 }, "id-9");
  const parsed = JSON.parse(body);
  assert.deepStrictEqual(Object.keys(parsed), ["purpose", "id", "host", "machine", "pid", "startedAt", "leaseUntil",
                                               "owner", "leaseMs"]);
  assert.strictEqual(parsed.leaseMs, 1000);
  assert.strictEqual(parsed.host, os.hostname());
  assert.strictEqual(parsed.pid, process.pid);
  assert.strictEqual(parsed.machine, lj.machineId());
  assert.strictEqual(parsed.leaseUntil, "2024-05-01T12:05:01.000Z");
  assert.match(parsed.owner, new RegExp(`^[0-9a-f-]{36}\\.${process.pid}\\.[0-9a-z]+$`));
  assert.deepStrictEqual(lj.parseLockBody(body), parsed);
  const renewed = JSON.parse(lj.renewedLockBody(lj.parseLockBody(body), at("2024-05-01T13:00:00Z"), 600000));
  assert.deepStrictEqual(renewed, { ...parsed, leaseUntil: "2024-05-01T13:15:00.000Z", leaseMs: 600000 });
  // A fraction of a ms is cut as a Date cuts it.
  assert.strictEqual(JSON.parse(lj.lockBody("p", NOW, { leaseMs: 1.9 })).leaseUntil, "2024-05-01T12:05:00.001Z");
  const exec = JSON.parse(lj.lockBody("up", NOW, { execution: { projectId: "p", region: "r", name: "n" },
                                                   maxRuntimeMs: 3600000 }));
  assert.deepStrictEqual(exec.execution, { projectId: "p", region: "r", name: "n" });
  assert.strictEqual(exec.owner, undefined);
  assert.match(JSON.parse(lj.lockBody("p", NOW)).id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.strictEqual(JSON.parse(lj.lockBody("p", NOW)).leaseUntil, undefined);
  assert.strictEqual(lj.parseLockBody("nope"), null);
  assert.strictEqual(lj.parseLockBody('{"purpose":"p","pid":"1"}'), null);
  assert.ok(Object.is(lj.parseLockBody('{"purpose":"p","pid":-0}').pid, -0));
  throwsCode(() => lj.renewedLockBody({ purpose: 1 }, NOW, 1000), Error, "LJ_EPARSE", /purpose is not a string/);
  throwsCode(() => lj.lockBody("p", at("+275760-09-13T00:00:00.000Z"), { leaseMs: 1 }), RangeError, "LJ_EINVAL");
  throwsCode(() => lj.lockBody("p", new Date(NaN)), RangeError, "LJ_EINVAL", /Invalid time value/);
  throwsCode(() => lj.lockBody("p", NOW, { execution: { projectId: "", region: "r", name: "n" }, maxRuntimeMs: 1 }),
             Error, "LJ_EINVAL", /project, region and name/);
});

test("execution state and gcloud's arguments", () => {
  const ok = (stdout) => lj.parseExecutionState({ ok: true, stdout, stderr: "", exitCode: 0 });
  assert.deepStrictEqual(ok('{"status":{"conditions":[{"type":"Completed","status":"True"}]}}'),
                         { kind: "finished", how: "succeeded" });
  assert.deepStrictEqual(ok('{"status":{"conditions":[{"type":"Completed","status":"False","reason":"ÉCHEC"}]}}'),
                         { kind: "finished", how: "échec" });
  assert.deepStrictEqual(ok('{"status":{}}'), { kind: "running" });
  assert.deepStrictEqual(ok("Listed 0 items."), { kind: "unknown", error: "gcloud returned no JSON for the execution" });
  assert.deepStrictEqual(lj.parseExecutionState({ ok: false, stdout: "", stderr: "ERROR: NOT_FOUND", exitCode: 1 }),
                         { kind: "not-found" });
  assert.deepStrictEqual(lj.parseExecutionState({ ok: false, stdout: "", stderr: " \n", exitCode: 2 }),
                         { kind: "unknown", error: "gcloud exited 2" });
  assert.deepStrictEqual(lj.describeExecutionArgs({ projectId: "p", region: "r", name: "n" }),
                         ["run", "jobs", "executions", "describe", "n", "--region=r", "--project=p", "--format=json"]);
  // The library's own describer, with a gcloud that is not there: unknown, not an error.
  const saved = process.env.PATH;
  process.env.PATH = "/nonexistent";
  try {
    const st = lj.describeExecution({ projectId: "p", region: "r", name: "n" }, 1000);
    assert.strictEqual(st.kind, "unknown");
  } finally {
    process.env.PATH = saved;
  }
});

test("wrong argument types: a TypeError with code LJ_EINVAL", () => {
  const here = liveDevbox;
  const describe = () => ({ kind: "running" });
  const calls = [
    () => lj.judgeHeldLock(42, describe, NOW, here),
    () => lj.judgeHeldLock(Buffer.from("{}"), describe, NOW, here),
    () => lj.judgeHeldLock(processBody, "describe", NOW, here),
    () => lj.judgeHeldLock(processBody, describe, "2024-05-01", here),
    () => lj.judgeHeldLock(processBody, describe, NOW, null),
    () => lj.judgeHeldLock(processBody, describe, NOW, "here"),
    () => lj.judgeHeldLock(processBody, describe, NOW, { ...here, host: 7 }),
    () => lj.judgeHeldLock(processBody, describe, NOW, { ...here, machine: 7 }),
    () => lj.judgeHeldLock(processBody, describe, NOW, { host: "devbox" }),
    () => lj.judgeLock({}, describe, NOW),
    () => lj.judgeLock(processBody, 5, NOW),
    () => lj.parseLockBody(null),
    () => lj.parseLockBody(undefined),
    () => lj.lockBody(5, NOW),
    () => lj.lockBody("p", 5),
    () => lj.lockBody("p", NOW, { leaseMs: "1000" }),
    () => lj.lockBody("p", NOW, { execution: null, maxRuntimeMs: 1 }),
    () => lj.lockBody("p", NOW, { execution: { projectId: 1, region: "r", name: "n" }, maxRuntimeMs: 1 }),
    () => lj.lockBody("p", NOW, undefined, 7),
    () => lj.renewedLockBody(null, NOW, 1),
    () => lj.renewedLockBody({ purpose: "p" }, NOW, null),
    () => lj.processAlive("1"),
    () => lj.processAlive(),
    () => lj.machineId(5),
    () => lj.parseExecutionState(null),
    () => lj.parseExecutionState({ ok: "yes", stdout: "", stderr: "", exitCode: 0 }),
    () => lj.parseExecutionState({ ok: true, stdout: 1, stderr: "", exitCode: 0 }),
    () => lj.describeExecutionArgs({ projectId: "p", region: "r" }),
    () => lj.describeExecutionArgs(undefined),
    () => lj.openStore(5),
    () => lj.acquireLock({}, "k", { purpose: "p" }),
    () => lj.planStepLines(5, { node: "n" }),
    () => lj.planStepLines("", { node: 5 }),
    () => lj.planStepLines("", { node: "n", rule: "nobody" }),
    () => lj.planStepLines("", { node: "n", now: "today" }),
    () => lj.planStepLines(new Uint16Array(4), { node: "n" }),
  ];
  calls.forEach((call, i) => {
    try {
      throwsCode(call, TypeError, "LJ_EINVAL");
    } catch (e) {
      throw new Error(`call ${i} (${call}): ${e.message}`);
    }
  });
});

test("a callback that throws: its own exception comes through, each time", () => {
  const boom = new Error("describer down");
  for (let i = 0; i < 3; i++) {
    assert.throws(() => lj.judgeHeldLock(executionBody, () => { throw boom; }, NOW), (e) => e === boom);
  }
  const bad = new RangeError("alive failed");
  const here = { ...devbox, alive: () => { throw bad; } };
  assert.throws(() => lj.judgeHeldLock(processBody, never, NOW, here), (e) => e === bad);
  // this of alive is the LocalHost, as here.alive(pid) has it.
  const seen = [];
  const host = { ...devbox, alive(pid) { seen.push([this, pid]); return true; } };
  lj.judgeHeldLock(processBody, never, NOW, host);
  assert.deepStrictEqual(seen, [[host, 48213]]);
  // After all that, judging still works.
  assert.strictEqual(lj.judgeHeldLock(processBody, never, NOW, liveDevbox).kind, "held");
});

test("a callback that returns junk: a TypeError, never a verdict", () => {
  for (const junk of [undefined, null, 42, "running", {}, { kind: "done" }, { kind: "finished" },
                      { kind: "finished", how: 5 }, { kind: "unknown" }, { kind: 3 }]) {
    throwsCode(() => lj.judgeHeldLock(executionBody, () => junk, NOW), TypeError, "LJ_EINVAL", /ExecutionState/);
  }
  for (const junk of [undefined, null, 1, 0, "yes", {}]) {
    throwsCode(() => lj.judgeHeldLock(processBody, never, NOW, { ...devbox, alive: () => junk }), TypeError,
               "LJ_EINVAL", /true or false/);
  }
});

test("a 64 MiB body: a RangeError, and the next judgement works", () => {
  const huge = "x".repeat(64 << 20);
  throwsCode(() => lj.judgeHeldLock(huge, never, NOW, devbox), RangeError, "LJ_EINVAL", /longer than 16 MiB/);
  throwsCode(() => lj.parseLockBody(huge), RangeError, "LJ_EINVAL");
  throwsCode(() => lj.judgeLock(Buffer.alloc(64 << 20, 0x20), never, NOW, devbox), RangeError, "LJ_EINVAL");
  throwsCode(() => lj.lockBody(huge, NOW), RangeError, "LJ_EINVAL");
  // Under the limit, a large body is judged: a 15 MiB purpose.
  const big = JSON.stringify({ purpose: "p".repeat(15 << 20), leaseUntil: "2024-05-01T12:00:00.000Z" });
  const v = lj.judgeLock(big, never, NOW, devbox);
  assert.strictEqual(v.reason, "lease_runs");
  assert.strictEqual(v.why.length, (15 << 20) + 70);
  assert.strictEqual(lj.judgeHeldLock(processBody, never, NOW, liveDevbox).kind, "held");
});

test("processAlive and machineId", () => {
  assert.strictEqual(lj.processAlive(process.pid), true);
  const child = spawnSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" });
  const gone = Number(child.stdout.trim());
  assert.strictEqual(lj.processAlive(gone), false);
  for (const notAPid of [0, -1, 1.5, 2 ** 31, Number.NaN, Infinity]) assert.strictEqual(lj.processAlive(notAPid), true);
  assert.match(String(lj.machineId()), /^([0-9a-f]{32}|null)$/);
  assert.strictEqual(lj.machineId({ CLOUD_RUN_EXECUTION: "x" }), null);
  assert.strictEqual(lj.machineId({ K_SERVICE: "" }), lj.machineId());
});

test("stores: create, get, update, remove, keys, with lost races as errors", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lj-node-"));
  try {
    // A file: directory that is not there is refused, and nothing is made, unless asked.
    throwsCode(() => lj.openStore(`file:${dir}/typo`), Error, "LJ_ESTORE", /does not exist/);
    assert.strictEqual(fs.existsSync(path.join(dir, "typo")), false);
    for (const store of [lj.openStore("mem:"), lj.openStore(`file:${dir}/store`, {create: true}), lj.Store.memory()]) {
      const r1 = store.create("a.b", "one");
      assert.ok(r1 > 0);
      throwsCode(() => store.create("a.b", "again"), Error, "LJ_EEXISTS");
      assert.deepStrictEqual(store.get("a.b"), { value: Buffer.from("one"), revision: r1 });
      const r2 = store.update("a.b", Buffer.from([0, 0xff, 1]), r1);
      assert.ok(r2 > r1);
      throwsCode(() => store.update("a.b", "stale", r1), Error, "LJ_ECHANGED");
      assert.deepStrictEqual(store.get("a.b").value, Buffer.from([0, 0xff, 1]));
      assert.deepStrictEqual(store.keys(), ["a.b"]);
      throwsCode(() => store.remove("a.b", r1), Error, "LJ_ECHANGED");
      store.remove("a.b", BigInt(r2));
      assert.strictEqual(store.get("a.b"), null);
      throwsCode(() => store.update("a.b", "x", -1), RangeError, "LJ_EINVAL");
      throwsCode(() => store.get(5), TypeError, "LJ_EINVAL");
      store.close();
      throwsCode(() => store.get("a.b"), Error, "LJ_EINVAL", /closed/);
    }
    throwsCode(() => lj.openStore("redis://x"), RangeError, "LJ_EINVAL");
    throwsCode(() => lj.openStore("nats://127.0.0.1:1"), RangeError, "LJ_EINVAL", /BUCKET/);
    throwsCode(() => lj.openStore("mem:\0"), RangeError, "LJ_EINVAL", /NUL/);
    throwsCode(() => lj.openStore("mem:", 5), TypeError, "LJ_EINVAL");
    throwsCode(() => lj.openStore("mem:", {tlsCaFile: 5}), TypeError, "LJ_EINVAL");
    throwsCode(() => lj.openStore(undefined), TypeError, "LJ_EINVAL");
    fs.writeFileSync(path.join(dir, "plain"), "");
    throwsCode(() => lj.Store.file(path.join(dir, "plain")), Error, "LJ_EIO");
    assert.throws(() => new lj.Store(), TypeError);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("the lock's life: acquire, held, renew, release, and a dead holder broken", () => {
  const store = lj.Store.memory();
  const t0 = at("2024-05-01T12:00:00Z");
  const got = lj.acquireLock(store, "deploy", { purpose: "deploy", now: t0 });
  assert.strictEqual(got.outcome, "acquired");
  assert.strictEqual(got.verdict, null);
  assert.strictEqual(got.brokeAt, 0);
  const lock = got.lock;
  assert.ok(lock instanceof lj.HeldLock);
  assert.strictEqual(lock.renewIntervalMs, 200000);
  assert.strictEqual(JSON.parse(lock.body).leaseUntil, "2024-05-01T12:15:00.000Z");
  assert.strictEqual(lock.revision, store.get("deploy").revision);
  // We live: another taker finds it held.
  const again = lj.acquireLock(store, "deploy", { purpose: "other", now: t0 });
  assert.strictEqual(again.outcome, "held");
  assert.strictEqual(again.verdict.reason, "lease_runs");
  assert.strictEqual(again.lock, null);
  const before = lock.revision;
  lock.renew(at("2024-05-01T12:05:00Z"));
  assert.ok(lock.revision > before);
  assert.strictEqual(JSON.parse(store.get("deploy").value.toString()).leaseUntil, "2024-05-01T12:20:00.000Z");
  lock.release();
  throwsCode(() => lock.release(), Error, "LJ_ENOTFOUND");
  // A holder whose pid is gone on this machine: broken at the revision judged.
  const dead = lj.acquireLock(store, "deploy", { purpose: "old", now: t0, here: { host: os.hostname(),
    machine: lj.machineId(), alive: () => true } }).lock;
  const deadRevision = dead.revision;
  const taken = lj.acquireLock(store, "deploy", { purpose: "new", now: t0,
    here: { host: os.hostname(), machine: lj.machineId(), alive: () => false } });
  assert.strictEqual(taken.outcome, "acquired");
  assert.strictEqual(taken.verdict.kind, "break");
  assert.strictEqual(taken.verdict.reason, "process_gone");
  assert.strictEqual(taken.brokeAt, deadRevision);
  throwsCode(() => dead.renew(t0), Error, "LJ_ECHANGED");
  // A lock without a lease; an execution holder whose describer throws.
  const none = lj.acquireLock(store, "local", { purpose: "p", holder: null, now: t0 });
  assert.strictEqual(none.lock.renewIntervalMs, 0);
  throwsCode(() => none.lock.renew(t0), Error, "LJ_EINVAL");
  store.create("exec", executionBody);
  const boom = new Error("cloud down");
  assert.throws(() => lj.acquireLock(store, "exec", { purpose: "p", now: NOW, describe: () => { throw boom; } }),
                (e) => e === boom);
  const unknown = lj.acquireLock(store, "exec", { purpose: "p", now: NOW,
    describe: () => ({ kind: "unknown", error: "denied" }) });
  assert.strictEqual(unknown.outcome, "unknown");
  throwsCode(() => lj.acquireLock(store, "k", { purpose: 5 }), TypeError, "LJ_EINVAL");
  throwsCode(() => lj.acquireLock(store, "k", { purpose: "p", holder: { leaseMs: 1.5 } }), RangeError, "LJ_EINVAL");
  throwsCode(() => lj.acquireLock(store, "", { purpose: "p" }), Error, "LJ_EINVAL");
  // A lock keeps its store alive after close: releasing still works.
  const kept = lj.acquireLock(store, "kept", { purpose: "p" }).lock;
  store.close();
  kept.release();
});

test("the addon's handles: one kind where another is asked for is a TypeError", () => {
  // The addon itself, below the package's classes, which never mix handles.
  const native = require(path.join(process.env.LEASEJUDGE_NODE_PACKAGE, "leasejudge.node"));
  const store = native.storeMemory();
  const got = native.lockAcquire(store, "k", "p", 0, 0, undefined, undefined, undefined, 0, undefined,
                                 undefined, undefined, 0, undefined, undefined, 0);
  const lock = got.lock;
  assert.strictEqual(got.outcome, 0);
  throwsCode(() => native.storeGet(lock, "k"), TypeError, "LJ_EINVAL", /^store must be a Store$/);
  throwsCode(() => native.lockRenew(store, 0), TypeError, "LJ_EINVAL", /^lock must be a HeldLock$/);
  throwsCode(() => native.lockRelease({}), TypeError, "LJ_EINVAL", /^lock must be a HeldLock$/);
  throwsCode(() => native.lockWaitCancel(lock), TypeError, "LJ_EINVAL", /^the handle must be a wait's cancel handle$/);
  throwsCode(() => native.lockWaitCancel(), TypeError, "LJ_EINVAL", /^the handle must be a wait's cancel handle$/);
  native.lockRelease(lock);
  assert.strictEqual(native.storeGet(store, "k"), null);
  native.storeClose(store);
  throwsCode(() => native.storeGet(store, "k"), Error, "LJ_EINVAL", /^the store is closed$/);
});

test("the step plan over JSON lines", () => {
  const owner = "0f6d2c1e-8a3b-4c5d-9e7f-a1b2c3d4e5f6.4242.lxb2k3a0";
  const line = (key, value) => JSON.stringify({ key, revision: 3, value });
  const input = [
    line("n.a", { id: "a", tool: "t", state: "running", owner: "x.1.1" }),
    line("n.b", { id: "b", tool: "t", state: "succeeded" }),
    line("m.c", { id: "c", tool: "t", state: "running" }),
    "not json",
    "",
  ].join("\n");
  const plan = lj.planStepLines(Buffer.from(input), { node: "n", owner, now: at("2024-06-01T12:00:00Z"),
                                                      before: 1717243200000000000n });
  const lines = plan.lines.toString().trim().split("\n").map((l) => JSON.parse(l));
  assert.strictEqual(lines.length, 4);
  assert.deepStrictEqual(lines[0].key, "n.a");
  assert.strictEqual(lines[0].action, "end");
  assert.deepStrictEqual(lines[1], { key: "n.b", action: "leave", reason: "not-running", why: "the step is not running" });
  assert.deepStrictEqual(lines[2], { key: "m.c", action: "leave", reason: "other-node",
                                     why: "the key is no step key of this node" });
  assert.strictEqual(lines[3].key, null);
  assert.deepStrictEqual(plan.summary, { ends: 1, deletes: 0, leaves: 1, noStep: 0, otherNode: 1, malformed: 1 });
  // The same from a string; nothing from nothing.
  assert.deepStrictEqual(lj.planStepLines(input, { node: "n", owner, now: at("2024-06-01T12:00:00Z") }).summary,
                         plan.summary);
  assert.strictEqual(lj.planStepLines("", { node: "n" }).lines.length, 0);
  // With no owner named the library's default rule is provably-dead: "x.1.1", which
  // cannot be proven gone, keeps its step; "not-self" needs the owner named.
  const unnamed = lj.planStepLines(input, { node: "n", now: at("2024-06-01T12:00:00Z") });
  assert.strictEqual(unnamed.summary.ends, 0);
  assert.deepStrictEqual(JSON.parse(unnamed.lines.toString().split("\n")[0]).reason, "owner-unknown");
  assert.deepStrictEqual(lj.planStepLines(input, { node: "n", owner, rule: "by-owner",
                                                   now: at("2024-06-01T12:00:00Z") }).summary, plan.summary);
  // minAgeMs: a step another owner started a minute ago is left under two minutes.
  const young = line("n.y", { id: "y", tool: "t", state: "running", owner: "x.1.1", started: "2024-06-01T11:59:00Z" });
  const minAged = (ms) => JSON.parse(lj.planStepLines(young, { node: "n", owner, now: at("2024-06-01T12:00:00Z"),
                                                               minAgeMs: ms }).lines.toString());
  assert.deepStrictEqual(minAged(120000), { key: "n.y", action: "leave", reason: "under-min-age",
                                            why: "it started less than the minimum age (--min-age) ago" });
  assert.strictEqual(minAged(30000).reason, "owner-not-self");
  throwsCode(() => lj.planStepLines(input, { node: "n", rule: "not-self" }), Error, "LJ_EINVAL");
  throwsCode(() => lj.planStepLines("", { node: "" }), Error, "LJ_EINVAL");
  throwsCode(() => lj.planStepLines("", { node: "n", now: 2n ** 64n }), RangeError, "LJ_EINVAL");
  // The rule chosen and why, from the same rules a plan takes.
  const gone = "only owners proven gone (dead, recycled, rebooted) are ended";
  assert.deepStrictEqual(lj.resolveRules({ node: "n", owner }),
                         { rule: "not-self", owner, why: `rule not-self: every owner but ${owner} is taken for gone` });
  assert.deepStrictEqual(lj.resolveRules({ node: "n", owner, rule: "provably-dead" }),
                         { rule: "provably-dead", owner, why: `rule provably-dead: ${gone}` });
  const self = lj.resolveRules({ node: "n", selfPid: process.pid });
  assert.deepStrictEqual([self.rule, self.why], ["provably-dead", `rule provably-dead (no owner named): ${gone}, ` +
                                                 "never a step whose owner is alive on this node"]);
  assert.deepStrictEqual(lj.resolveRules({ node: "n" }), self);
  for (const bad of [{}, { node: "a.b" }, { node: "n", rule: "not-self" }, { node: "n", owner: "x" },
                     { node: "n", boundMs: -1 }, { node: "n", minAgeMs: -1 }, { node: "n", selfPid: -1 },
                     { node: "n", selfPid: 2 ** 40 }])
    throwsCode(() => lj.resolveRules(bad), Error, "LJ_EINVAL");
  throwsCode(() => lj.resolveRules({ node: "n", selfPid: 2 ** 31 - 2 }), Error, "LJ_ENOTFOUND");
  for (const bad of [5, null, { node: 5 }, { node: "n", rule: "nobody" }, { node: "n", selfPid: "1" }])
    throwsCode(() => lj.resolveRules(bad), TypeError, "LJ_EINVAL");
});

end({ summary: true, exit: true });
