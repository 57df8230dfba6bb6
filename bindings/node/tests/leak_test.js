// No leak over a million calls: every call of the lock API in turn (judging with
// callbacks, bytes, parses, new and renewed bodies, gcloud answers, a throwing
// callback, a callback returning junk, a store's get), one million in all. The
// resident set after the first fifth (the heap and the allocator warmed up) and at
// the end may differ by no more than 16 MiB: a leak of 21 bytes a call shows.
// Under the sanitizers (a hundred times slower; their allocator holds freed memory in
// a quarantine, which CMake keeps to 4 MiB for this test) 100,000 calls, the last
// half within 32 MiB. TAP output.
"use strict";
const lj = require(process.env.LEASEJUDGE_NODE_PACKAGE);

const sanitized = process.env.LEASEJUDGE_SANITIZE === "ON";
const CALLS = sanitized ? 100_000 : 1_000_000;
const MiB = 1 << 20;
const bound = (sanitized ? 32 : 16) * MiB;

const now = new Date("2024-05-01T12:00:00.000Z");
const processBody = '{"purpose":"caelo state lock","id":"5f0c6f7e-3a1b-4c2d-9e8f-0a1b2c3d4e5f","host":"devbox",' +
  '"machine":"0123456789abcdef0123456789abcdef","pid":48213,"startedAt":"2024-05-01T11:55:00.000Z",' +
  '"leaseUntil":"2024-05-01T12:10:00.000Z"}';
const executionBody = '{"purpose":"caelo upgrader","host":"localhost","machine":null,"pid":1,' +
  '"execution":{"projectId":"caelo-prod","region":"europe-west1","name":"caelo-upgrader-x7k2p"},' +
  '"leaseUntil":"2024-05-01T12:35:00.000Z"}';
const here = { host: "devbox", machine: "0123456789abcdef0123456789abcdef", alive: (pid) => pid !== 48213 };
const finished = { kind: "finished", how: "succeeded" };
const bytes = Buffer.from(processBody);
const gcloud = { ok: true, stdout: '{"status":{"conditions":[{"type":"Completed","status":"False","reason":"X"}]}}',
                 stderr: "", exitCode: 0 };
const store = lj.Store.memory();
store.create("k", processBody);
const boom = new Error("boom");

const ops = [
  () => lj.judgeHeldLock(processBody, () => finished, now, here),
  () => lj.judgeHeldLock(executionBody, () => finished, now),
  () => lj.judgeLock(bytes, null, now, here),
  () => lj.renewedLockBody(lj.parseLockBody(processBody), now, 600000),
  () => lj.lockBody("deploy", now, { leaseMs: 1000 }),
  () => lj.parseExecutionState(gcloud),
  () => {
    try {
      lj.judgeHeldLock(executionBody, () => { throw boom; }, now);
    } catch (e) {
      if (e !== boom) throw e;
    }
  },
  () => {
    try {
      lj.judgeHeldLock(processBody, () => finished, now, { ...here, alive: () => "junk" });
    } catch (e) {
      if (!(e instanceof TypeError)) throw e;
    }
  },
  () => store.get("k"),
];

function run(n, from) {
  for (let i = from; i < from + n; i++) ops[i % ops.length]();
}

const warm = sanitized ? CALLS / 2 : CALLS / 5;
run(warm, 0);
const before = process.memoryUsage().rss;
run(CALLS - warm, warm);
const after = process.memoryUsage().rss;
const grew = after - before;
console.log(`# ${CALLS} calls; resident ${(before / MiB).toFixed(1)} MiB after ${warm}, ` +
            `${(after / MiB).toFixed(1)} MiB at the end (bound ${bound / MiB} MiB)`);
console.log("1..1");
if (grew <= bound) {
  console.log(`ok - the resident set grew ${(grew / MiB).toFixed(1)} MiB over ${CALLS - warm} calls`);
  process.exit(0);
}
console.log(`not ok - the resident set grew ${(grew / MiB).toFixed(1)} MiB over ${CALLS - warm} calls`);
process.exit(1);
