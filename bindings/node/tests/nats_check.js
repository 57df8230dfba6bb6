// The Node package on a NATS JetStream bucket (nats_test.sh starts the server):
//   node nats_check.js nats://127.0.0.1:PORT
"use strict";
const assert = require("assert");
const os = require("os");
const lj = require(process.env.LEASEJUDGE_NODE_PACKAGE);
const url = process.argv[2];

const { test, end } = require("./tap");
const code = (c) => (e) => e.code === c;

test("a missing bucket is a store error, not a crash", () => {
  assert.throws(() => lj.openStore(`${url}/missing`), code("LJ_ESTORE"));
  assert.throws(() => lj.Store.nats({ urls: "nats://127.0.0.1:1", bucket: "b", connectTimeoutMs: 200 }),
                code("LJ_ESTORE"));
  assert.throws(() => lj.Store.nats({ urls: url, bucket: "no spaces" }), code("LJ_EINVAL"));
  assert.throws(() => lj.Store.nats({ urls: url }), code("LJ_EINVAL"));
  assert.throws(() => lj.Store.nats({ urls: url, bucket: "b", history: "3" }), TypeError);
});

test("the bucket's operations, each write at the revision read", () => {
  const store = lj.Store.nats({ urls: url, bucket: "locks", createBucket: true });
  const r1 = store.create("deploy.a", "one");
  assert.throws(() => store.create("deploy.a", "two"), code("LJ_EEXISTS"));
  assert.deepStrictEqual(store.get("deploy.a"), { value: Buffer.from("one"), revision: r1 });
  const r2 = store.update("deploy.a", "two", r1);
  assert.ok(r2 > r1);
  assert.throws(() => store.update("deploy.a", "three", r1), code("LJ_ECHANGED"));
  assert.throws(() => store.remove("deploy.a", r1), code("LJ_ECHANGED"));
  assert.deepStrictEqual(store.keys(), ["deploy.a"]);
  store.remove("deploy.a", r2);
  assert.strictEqual(store.get("deploy.a"), null);
  assert.throws(() => store.create("bad key", "x"), code("LJ_EINVAL"));
  store.close();
});

test("the lock's life on the bucket, by URL", () => {
  const store = lj.openStore(`${url}/locks`);
  const t0 = new Date("2024-05-01T12:00:00Z");
  const mine = { host: os.hostname(), machine: lj.machineId(), alive: () => true };
  const first = lj.acquireLock(store, "state", { purpose: "deploy", now: t0, here: mine });
  assert.strictEqual(first.outcome, "acquired");
  const held = lj.acquireLock(store, "state", { purpose: "other", now: t0, here: mine });
  assert.strictEqual(held.outcome, "held");
  assert.strictEqual(held.verdict.reason, "lease_runs");
  first.lock.renew(new Date("2024-05-01T12:05:00Z"));
  const renewedAt = first.lock.revision;
  // Its holder gone on this machine: broken at the revision judged, then ours.
  const taken = lj.acquireLock(store, "state", { purpose: "next", now: t0,
    here: { ...mine, alive: () => false } });
  assert.strictEqual(taken.outcome, "acquired");
  assert.strictEqual(taken.verdict.reason, "process_gone");
  assert.strictEqual(taken.brokeAt, renewedAt);
  assert.throws(() => first.lock.renew(t0), code("LJ_ECHANGED"));
  assert.throws(() => first.lock.release(), code("LJ_ECHANGED"));
  taken.lock.release();
  assert.strictEqual(store.get("state"), null);
  store.close();
});

end({ summary: true, exit: true });
