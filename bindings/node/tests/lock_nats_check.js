// The Node package holding a lock on a NATS JetStream bucket (lock_nats_test.sh starts
// the server): a wait that times out, a wait aborted, a renewal failing while the
// server is stopped (SIGSTOP, shorter than the lease) that recovers once it runs
// again, a lease lost while the server stays stopped past it ("lost" once, code
// LJ_ETIMEOUT), and a lock taken by another writer ("lost" once, LJ_ECHANGED).
//   node lock_nats_check.js nats://127.0.0.1:PORT SERVER_PID
"use strict";
const assert = require("assert");
const lj = require(process.env.LEASEJUDGE_NODE_PACKAGE);
const url = process.argv[2];
const serverPid = Number(process.argv[3]);

const tap = require("./tap");
// Each test leaves the server running, whatever it paused.
async function test(name, fn) {
  await tap.test(name, fn);
  try {
    process.kill(serverPid, "SIGCONT");
  } catch (e) {
    // gone: the script's trap reports it
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
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
// The bucket, retried while JetStream starts after the port opens.
async function bucket(name) {
  const end = Date.now() + 15000;
  for (;;) {
    try {
      return lj.Store.nats({ urls: url, bucket: name, createBucket: true, requestTimeoutMs: 300,
                             reconnectWaitMs: 100 });
    } catch (e) {
      if (e.code !== "LJ_ESTORE" || Date.now() > end) throw e;
      await sleep(200);
    }
  }
}
// The server frozen for ms, then running again. The event loop sleeps meanwhile, as
// the heartbeat's thread keeps renewing.
async function stopped(ms) {
  process.kill(serverPid, "SIGSTOP");
  try {
    await sleep(ms);
  } finally {
    process.kill(serverPid, "SIGCONT");
  }
}

async function main() {
  await test("a wait times out, an abort stops one, a release ends one", async () => {
    const store = await bucket("wait");
    const first = lj.acquireLock(store, "lock.w", { purpose: "first" });
    const body = store.get("lock.w");
    const start = Date.now();
    const got = await lj.acquireLockWait(store, "lock.w", { purpose: "second", timeoutMs: 500 });
    assert.ok(Date.now() - start >= 500);
    assert.deepStrictEqual([got.outcome, got.lock, got.verdict.reason], ["held", null, "lease_runs"]);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    await assert.rejects(lj.acquireLockWait(store, "lock.w", { purpose: "second", timeoutMs: 60000,
                                                               signal: ac.signal }),
                         (e) => e.code === "LJ_EUSER");
    assert.deepStrictEqual(store.get("lock.w"), body);
    setTimeout(() => first.lock.release(), 300);
    const third = await lj.acquireLockWait(store, "lock.w", { purpose: "third", timeoutMs: 10000 });
    assert.ok(third.outcome === "acquired" && third.lock.token === store.get("lock.w").revision);
    third.lock.release();
    store.close();
  });

  await test("a renewal failing within the lease recovers", async () => {
    const store = await bucket("renew");
    const { lock } = lj.acquireLock(store, "lock.r", { purpose: "renew", holder: { leaseMs: 4000 } });
    const lost = [];
    const beat = lock.startHeartbeat((e) => lost.push(e.code));
    assert.ok(await until(() => beat.renewals >= 1, 5000)); // one renewal (every 1333 ms)
    const before = beat.renewals;
    await stopped(2000); // shorter than the lease: at least one renewal fails
    await sleep(2000);
    assert.deepStrictEqual([beat.retries >= 1, beat.renewals > before, beat.lost, lost], [true, true, false, []]);
    const entry = await settled(lock, store, "lock.r");
    assert.ok(entry !== null && JSON.parse(entry.value).id === lock.id);
    lock.release();
    assert.strictEqual(store.get("lock.r"), null);
    store.close();
  });

  await test("a lease ended while the server stops is reported once, LJ_ETIMEOUT", async () => {
    const store = await bucket("lost");
    const { lock } = lj.acquireLock(store, "lock.l", { purpose: "short", holder: { leaseMs: 1500 } });
    const lost = [];
    const beat = lock.startHeartbeat((e) => lost.push(e.code));
    await stopped(3500); // past the lease
    assert.ok(await until(() => lost.length > 0, 5000));
    await sleep(1000);
    assert.deepStrictEqual([lost, beat.lost], [["LJ_ETIMEOUT"], true]);
    beat.stop();
    store.close();
  });

  await test("a lock taken by another writer is reported once, LJ_ECHANGED", async () => {
    const store = await bucket("other");
    const { lock } = lj.acquireLock(store, "lock.o", { purpose: "mine", holder: { leaseMs: 3000 } });
    const lost = [];
    lock.startHeartbeat().on("lost", (e) => lost.push(e.code));
    const entry = store.get("lock.o");
    store.update("lock.o", '{"purpose":"another writer"}', entry.revision);
    assert.ok(await until(() => lost.length > 0, 8000)); // the next renewal, within 1 s
    await sleep(600);
    assert.deepStrictEqual(lost, ["LJ_ECHANGED"]);
    assert.throws(() => lock.release(), (e) => e.code === "LJ_ECHANGED");
    assert.strictEqual(String(store.get("lock.o").value), '{"purpose":"another writer"}');
    store.close();
  });

  tap.end();
}
main();
