// The Node package's openLock: a lock taken before, opened by its key and acquisition
// id, renewed with the lease it was taken with or another, and released; a lock gone or
// someone else's; bad input of every kind (undefined, wrong types, empty, past 16 MiB,
// NUL, lone surrogates) answered with its error, never a crash. TAP output.
"use strict";
const assert = require("assert");

const lj = require(process.env.LEASEJUDGE_NODE_PACKAGE);

const { test, end } = require("./tap");
function throwsCode(fn, Type, code) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof Type, `${e} is no ${Type.name}`);
    assert.strictEqual(e.code, code);
    return true;
  });
}

const at = (iso) => new Date(iso);
// A lock taken at 12:00:00 with a 30 s lease: its lease runs to now + lease + the
// 5-minute skew (lj_lock.h), so 12:05:30; renewed at 12:00:10, to 12:05:40.
function taken(store, key) {
  const got = lj.acquireLock(store, key, { purpose: "deploy", holder: { leaseMs: 30000 },
                                           now: at("2024-06-01T12:00:00.000Z") });
  assert.strictEqual(got.outcome, "acquired");
  return got.lock;
}
const until = (lock) => JSON.parse(lock.body).leaseUntil;

test("LOCK_LEASE_AS_TAKEN is the C ABI's -1", () => {
  assert.strictEqual(lj.LOCK_LEASE_AS_TAKEN, -1);
});

test("opened by key and id, renewed with the lease it was taken with, released", () => {
  const store = lj.openStore("mem:");
  const first = taken(store, "k");
  const opened = lj.openLock(store, "k", first.id, lj.LOCK_LEASE_AS_TAKEN);
  assert.ok(opened instanceof lj.HeldLock);
  assert.deepStrictEqual([opened.id, opened.key, opened.revision], [first.id, "k", first.revision]);
  assert.strictEqual(until(opened), "2024-06-01T12:05:30.000Z");
  opened.renew(at("2024-06-01T12:00:10.000Z"));
  assert.strictEqual(until(opened), "2024-06-01T12:05:40.000Z");
  assert.strictEqual(JSON.parse(store.get("k").value.toString()).leaseUntil, "2024-06-01T12:05:40.000Z");
  assert.ok(opened.revision > first.revision);
  opened.release();
  assert.strictEqual(store.get("k"), null);
  store.close();
});

test("renewed with a lease of its own: 60 s from 12:00:10 and the skew, 12:06:10", () => {
  const store = lj.openStore("mem:");
  const first = taken(store, "k");
  const opened = lj.openLock(store, "k", first.id, 60000);
  opened.renew(at("2024-06-01T12:00:10.000Z"));
  assert.strictEqual(until(opened), "2024-06-01T12:06:10.000Z");
  store.close();
});

test("no lock there: LJ_ENOTFOUND; another acquisition's body: LJ_ECHANGED", () => {
  const store = lj.openStore("mem:");
  throwsCode(() => lj.openLock(store, "absent", "some-id", 0), Error, "LJ_ENOTFOUND");
  taken(store, "k");
  throwsCode(() => lj.openLock(store, "k", "0b6f1c2e-5a4d-4c3b-9e8f-1a2b3c4d5e6f", 0), Error, "LJ_ECHANGED");
  store.close();
});

test("bad input: undefined, wrong types, empty, huge, NUL, lone surrogates", () => {
  const store = lj.openStore("mem:");
  const id = taken(store, "k").id;
  const huge = "k".repeat(16 * 1024 * 1024 + 1);
  throwsCode(() => lj.openLock(undefined, "k", id, 0), TypeError, "LJ_EINVAL");
  throwsCode(() => lj.openLock({}, "k", id, 0), TypeError, "LJ_EINVAL");
  throwsCode(() => lj.openLock(store), TypeError, "LJ_EINVAL");
  throwsCode(() => lj.openLock(store, undefined, id, 0), TypeError, "LJ_EINVAL");
  throwsCode(() => lj.openLock(store, 42, id, 0), TypeError, "LJ_EINVAL");
  throwsCode(() => lj.openLock(store, "k", null, 0), TypeError, "LJ_EINVAL");
  throwsCode(() => lj.openLock(store, "k", id, "0"), TypeError, "LJ_EINVAL");
  throwsCode(() => lj.openLock(store, "k", id, undefined), TypeError, "LJ_EINVAL");
  throwsCode(() => lj.openLock(store, "k", id, 1.5), RangeError, "LJ_EINVAL");
  throwsCode(() => lj.openLock(store, "k", id, -2), Error, "LJ_EINVAL");
  throwsCode(() => lj.openLock(store, "", id, 0), Error, "LJ_EINVAL");
  throwsCode(() => lj.openLock(store, "k", "", 0), Error, "LJ_EINVAL");
  throwsCode(() => lj.openLock(store, huge, id, 0), RangeError, "LJ_EINVAL");
  throwsCode(() => lj.openLock(store, "k", huge, 0), RangeError, "LJ_EINVAL");
  // No lock at a key with a NUL or a lone surrogate in it, nor with such an id.
  throwsCode(() => lj.openLock(store, "k\0x", id, 0), Error, "LJ_ENOTFOUND");
  throwsCode(() => lj.openLock(store, "k\ud800", id, 0), Error, "LJ_ENOTFOUND");
  throwsCode(() => lj.openLock(store, "k", id + "\0", 0), Error, "LJ_ECHANGED");
  store.close();
  throwsCode(() => lj.openLock(store, "k", id, 0), Error, "LJ_EINVAL");
});

end();
