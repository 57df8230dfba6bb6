// The Node package holding a lock on the file store: a wait that times out with the
// holder's verdict, a wait aborted through an AbortSignal (code LJ_EUSER, nothing of
// ours left), a wait that gets the lock its holder releases, the heartbeat renewing
// with the lease taken and emitting "lost" once when another writer takes the key;
// bad input on every new entry point: a clear error with its code, never a crash.
// TAP output.
"use strict";
const assert = require("assert");
const fs = require("fs");
const os = require("os");
const path = require("path");
const { spawnSync } = require("child_process");

const lj = require(process.env.LEASEJUDGE_NODE_PACKAGE);
const SKEW_MS = 300000; // LJ_LOCK_LEASE_SKEW_MS, capi/include/leasejudge/lj_lock.h

const tap = require("./tap");
// Each test on a file store of its own, closed and removed after it.
function test(name, fn) {
  return tap.test(name, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lj-node-wait-"));
    const store = lj.openStore(`file:${dir}/locks`, { create: true });
    try {
      await fn(store);
    } finally {
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function rejectsWith(promise, Type, code, message) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof Type, `${e} is no ${Type.name}`);
    assert.strictEqual(e.code, code);
    if (message) assert.match(e.message, message);
    return true;
  });
}
// The store's entry at a moment the lock's token stands still and equals its
// revision (a renewal may land between two reads); null when none came.
async function settled(lock, store, key) {
  for (let i = 0; i < 100; i++) {
    const before = lock.token;
    const entry = store.get(key);
    if (lock.token === before && entry !== null && entry.revision === before) return entry;
    await sleep(5);
  }
  return null;
}
async function until(check, ms) {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(10);
  return check();
}

async function main() {
  await test("a wait that times out answers the holder's verdict", async (store) => {
    const first = lj.acquireLock(store, "deploy", { purpose: "first" });
    const body = store.get("deploy");
    const start = Date.now();
    const got = await lj.acquireLockWait(store, "deploy", { purpose: "second", timeoutMs: 400 });
    const took = Date.now() - start;
    assert.deepStrictEqual([got.outcome, got.lock, got.brokeAt, got.verdict.kind, got.verdict.reason],
                           ["held", null, 0, "held", "lease_runs"]);
    assert.ok(took >= 400 && took < 3000, String(took));
    assert.deepStrictEqual(store.get("deploy"), body);
    const once = await lj.acquireLockWait(store, "deploy", { purpose: "one try", timeoutMs: 0 });
    assert.strictEqual(once.outcome, "held");
    first.lock.release();
  });

  await test("an AbortSignal stops a wait with LJ_EUSER, leaving nothing", async (store) => {
    const first = lj.acquireLock(store, "deploy", { purpose: "first" });
    const body = store.get("deploy");
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    const start = Date.now();
    await rejectsWith(lj.acquireLockWait(store, "deploy", { purpose: "second", timeoutMs: 60000, signal: ac.signal }),
                      Error, "LJ_EUSER", /cancelled/);
    const took = Date.now() - start;
    assert.ok(took >= 300 && took < 3000, String(took));
    assert.deepStrictEqual(store.get("deploy"), body);
    // Aborted before: not one try, even on a free key.
    await rejectsWith(lj.acquireLockWait(store, "free", { purpose: "never", timeoutMs: 60000, signal: ac.signal }),
                      Error, "LJ_EUSER");
    assert.strictEqual(store.get("free"), null);
    first.lock.release();
  });

  await test("a wait gets the lock its holder releases; the token is the revision", async (store) => {
    const first = lj.acquireLock(store, "deploy", { purpose: "first" });
    const old = first.lock.revision;
    setTimeout(() => first.lock.release(), 300);
    const got = await lj.acquireLockWait(store, "deploy", { purpose: "second", pollMinMs: 10, pollMaxMs: 50 });
    assert.strictEqual(got.outcome, "acquired");
    assert.ok(got.lock.token === got.lock.revision && got.lock.token === store.get("deploy").revision);
    assert.ok(got.lock.token > old);
    assert.strictEqual(JSON.parse(store.get("deploy").value).purpose, "second");
    got.lock.release();
  });

  await test("the heartbeat renews keeping the lease the lock was taken with", async (store) => {
    const { lock } = lj.acquireLock(store, "hb", { purpose: "beat", holder: { leaseMs: 600 } });
    const taken = lock.revision;
    const id = lock.id;
    const beat = lock.startHeartbeat();
    assert.strictEqual(lock.heartbeat, beat);
    assert.throws(() => lock.renew(), (e) => e.code === "LJ_EBUSY");
    assert.throws(() => lock.startHeartbeat(), (e) => e.code === "LJ_EBUSY");
    await sleep(900); // a renewal every 200 ms
    assert.ok(beat.renewals >= 2, String(beat.renewals));
    assert.deepStrictEqual([beat.retries, beat.lost, beat.running], [0, false, true]);
    const entry = await settled(lock, store, "hb");
    assert.ok(entry !== null && entry.revision > taken);
    const body = JSON.parse(entry.value);
    assert.strictEqual(body.id, id);
    const until = Date.parse(body.leaseUntil) - Date.now();
    assert.ok(until >= SKEW_MS - 50 && until <= SKEW_MS + 600, String(until));
    lock.release(); // stops the heartbeat first
    assert.deepStrictEqual([beat.running, lock.heartbeat, store.get("hb")], [false, null, null]);
    const renewals = beat.renewals;
    await sleep(300);
    assert.strictEqual(beat.renewals, renewals);
    beat.stop();
  });

  await test("a lock taken by another writer is reported once, LJ_ECHANGED", async (store) => {
    const { lock } = lj.acquireLock(store, "hb", { purpose: "beat", holder: { leaseMs: 600 } });
    const seen = [];
    const beat = lock.startHeartbeat((e) => seen.push(["callback", e.code]));
    beat.on("lost", (e) => {
      seen.push(["event", e.code, e instanceof Error]);
      beat.stop(); // on the main thread: allowed from a listener
    });
    const entry = store.get("hb");
    store.update("hb", '{"purpose":"another writer"}', entry.revision);
    assert.ok(await until(() => seen.length >= 2, 5000));
    await sleep(500);
    assert.deepStrictEqual(seen, [["callback", "LJ_ECHANGED"], ["event", "LJ_ECHANGED", true]]);
    assert.ok(beat.lost && beat.error.code === "LJ_ECHANGED" && !beat.running && lock.heartbeat === null);
    assert.throws(() => lock.release(), (e) => e.code === "LJ_ECHANGED");
    assert.strictEqual(String(store.get("hb").value), '{"purpose":"another writer"}');
  });

  await test("a process ending with heartbeats running (one lost) exits cleanly", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lj-node-exit-"));
    const child = `
      const lj = require(${JSON.stringify(process.env.LEASEJUDGE_NODE_PACKAGE)});
      const s = lj.openStore(${JSON.stringify(`file:${dir}/l`)}, { create: true });
      const k = process.argv[1];
      const a = lj.acquireLock(s, "a" + k, { purpose: "a", holder: { leaseMs: 300 } }).lock;
      const b = lj.acquireLock(s, "b" + k, { purpose: "b", holder: { leaseMs: 300 } }).lock;
      a.startHeartbeat();
      const beat = b.startHeartbeat();
      s.update("b" + k, "{}", s.get("b" + k).revision);
      setTimeout(() => console.log(a.heartbeat.renewals > 0, beat.lost), 600);`;
    try {
      for (let i = 0; i < 3; i++) {
        const r = spawnSync(process.execPath, ["-e", child, String(i)], { encoding: "utf8", timeout: 20000 });
        assert.deepStrictEqual([r.status, r.signal, r.stdout], [0, null, "true true\n"], r.stderr);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  await test("bad input on every new entry point", async (store) => {
    const noLease = lj.acquireLock(store, "none", { purpose: "p", holder: null }).lock;
    for (const bad of [undefined, null, "file:/tmp", 5, {}])
      await rejectsWith(lj.acquireLockWait(bad, "k", { purpose: "p" }), TypeError, "LJ_EINVAL", /store must be/);
    for (const bad of [undefined, null, 5, ["k"], {}])
      await rejectsWith(lj.acquireLockWait(store, bad, { purpose: "p", timeoutMs: 1 }), TypeError, "LJ_EINVAL",
                        /key must be a string/);
    await rejectsWith(lj.acquireLockWait(store, "", { purpose: "p", timeoutMs: 1 }), Error, "LJ_EINVAL");
    for (const bad of [undefined, null, "x", 5])
      await rejectsWith(lj.acquireLockWait(store, "k", bad), TypeError, "LJ_EINVAL", /options must be an object/);
    await rejectsWith(lj.acquireLockWait(store, "k", { timeoutMs: 1 }), TypeError, "LJ_EINVAL", /purpose/);
    for (const t of ["30", null, 10n, {}, true])
      await rejectsWith(lj.acquireLockWait(store, "k", { purpose: "p", timeoutMs: t }), TypeError, "LJ_EINVAL",
                        /timeoutMs must be a number/);
    for (const t of [-1, 86400001, 1e300, 2 ** 63, Number.MAX_VALUE])
      await rejectsWith(lj.acquireLockWait(store, "k", { purpose: "p", timeoutMs: t }), Error, "LJ_EINVAL");
    for (const t of [NaN, Infinity, -Infinity, 1.5])
      await rejectsWith(lj.acquireLockWait(store, "k", { purpose: "p", timeoutMs: t }), RangeError, "LJ_EINVAL");
    for (const o of [{ pollMinMs: -1 }, { pollMaxMs: -5 }, { pollMinMs: 100, pollMaxMs: 10 }])
      await rejectsWith(lj.acquireLockWait(store, "k", { purpose: "p", timeoutMs: 1, ...o }), Error, "LJ_EINVAL");
    await rejectsWith(lj.acquireLockWait(store, "k", { purpose: "p", pollMinMs: "1" }), TypeError, "LJ_EINVAL");
    for (const signal of [null, "abort", {}, new AbortController()])
      await rejectsWith(lj.acquireLockWait(store, "k", { purpose: "p", signal }), TypeError, "LJ_EINVAL",
                        /signal must be an AbortSignal/);
    await rejectsWith(lj.acquireLockWait(store, "k", { purpose: "p", holder: { leaseMs: -1 } }), Error, "LJ_EINVAL");
    await rejectsWith(lj.acquireLockWait(store, "k", { purpose: "p", holder: { leaseMs: "1" } }), TypeError,
                      "LJ_EINVAL");
    await rejectsWith(lj.acquireLockWait(store, "k", { purpose: "p", describe: () => ({}) }), TypeError, "LJ_EINVAL",
                      /judges on this machine/);
    assert.strictEqual(store.get("k"), null); // nothing written by any of these
    for (const bad of [5, "x", {}, null])
      assert.throws(() => noLease.startHeartbeat(bad), (e) => e instanceof TypeError && e.code === "LJ_EINVAL");
    assert.throws(() => noLease.startHeartbeat(), (e) => e.code === "LJ_EINVAL" && !(e instanceof TypeError));
    assert.strictEqual(noLease.heartbeat, null);
    assert.throws(() => new lj.Heartbeat(noLease), (e) => e instanceof TypeError && e.code === "LJ_EINVAL");
    const closed = lj.openStore("mem:");
    closed.close();
    await rejectsWith(lj.acquireLockWait(closed, "k", { purpose: "p" }), Error, "LJ_EINVAL", /store is closed/);
    noLease.release();
  });

  tap.end();
}
main();
