// The Node package on a real etcd (etcd_test.sh starts it): a lock acquired, judged
// and released over an etcd:// URL; bad etcd:// URLs are LJ_EINVAL.
//   node etcd_check.js HOST:PORT
"use strict";
const assert = require("assert");
const lj = require(process.env.LEASEJUDGE_NODE_PACKAGE);
const endpoint = process.argv[2];

const { test, end } = require("./tap");

test("a lock acquired, judged and released on etcd", () => {
  const store = lj.openStore(`etcd://${endpoint}/node-doors`);
  try {
    const got = lj.acquireLock(store, "locks/deploy", { purpose: "deploy" });
    assert.strictEqual(got.outcome, "acquired");
    const entry = store.get("locks/deploy");
    assert.ok(got.lock.token > 0 && entry.revision === got.lock.token);
    // Ours: this process is alive and its lease has ten minutes to run.
    const v = lj.judgeLock(entry.value);
    assert.deepStrictEqual([v.kind, v.reason, v.manualRemoval], ["held", "lease_runs", false]);
    const again = lj.acquireLock(store, "locks/deploy", { purpose: "deploy" });
    assert.deepStrictEqual([again.outcome, again.verdict.reason], ["held", "lease_runs"]);
    got.lock.release();
    assert.strictEqual(store.get("locks/deploy"), null);
  } finally {
    store.close();
  }
});

for (const url of [`etcd://${endpoint}`, `etcd://${endpoint}/`, "etcd://127.0.0.1:99999/p",
                   "etcd://127.0.0.1:abc/p", "etcd:///p", "etcd://:2379/p"]) {
  test(`${url} is LJ_EINVAL`, () => {
    assert.throws(() => lj.openStore(url), (e) => e.code === "LJ_EINVAL" &&
        e.message.includes("is not etcd://[user:pass@]host:port[,host:port...]/PREFIX"));
  });
}

end();
