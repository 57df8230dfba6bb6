#!/usr/bin/env bash
# The Node package as its users get it: a TypeScript consumer type-checks against
# index.d.ts with tsc (--strict; wrong uses must be errors), `npm pack` makes a
# tarball of exactly the package's files, and that tarball installs into a scratch
# project, where require("leasejudge") judges a lock and a strict TypeScript
# consumer compiles with only what the package declares installed beside it (its
# peer @types/node, at 18: the lowest its range takes). TypeScript and @types/node
# are the pinned ones (tests/lock_seed.sh). Run in the plain build only: the
# package is the same under the sanitizers.
set -u
src=${LEASEJUDGE_SOURCE_DIR:?}
. "$src/tests/skip.sh"
pkg=${LEASEJUDGE_NODE_PACKAGE:-}
[ -n "$pkg" ] && [ -f "$pkg/leasejudge.node" ] || skip_or_fail "the Node package is not built"
. "$src/tests/lock_seed.sh"
lock_seed_modules
node=${LEASEJUDGE_NODE:-node}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
notok() { echo "not ok - $1"; sed 's/^/# /' "$work/log"; fail=$((fail + 1)); }

# --- the types --------------------------------------------------------------------------
mkdir -p "$work/consumer/node_modules"
ln -s "$pkg" "$work/consumer/node_modules/leasejudge"
cat >"$work/consumer/consumer.ts" <<'TS'
// Written against the lock-lease module's API, the import switched to leasejudge.
import {
  CloudRunExecutionRef, ExecutionState, LEASE_SKEW_MS, LocalHost, LockBody, LockVerdict, PROCESS_LEASE_MS,
  describeExecutionArgs, judgeHeldLock, lockBody, machineId, parseExecutionState, parseLockBody, processAlive,
  renewedLockBody,
} from "leasejudge";
import * as lj from "leasejudge";

const here: LocalHost = { host: "devbox", machine: machineId(), alive: processAlive };
const describe = (ref: CloudRunExecutionRef): ExecutionState =>
  ref.name === "done" ? { kind: "finished", how: "succeeded" } : { kind: "running" };
const body: string = lockBody("deploy", new Date(), { leaseMs: PROCESS_LEASE_MS });
const parsed: LockBody | null = parseLockBody(body);
const renewed: string | null = parsed && renewedLockBody(parsed, new Date(), PROCESS_LEASE_MS + LEASE_SKEW_MS);
const v: LockVerdict = judgeHeldLock(body, describe, new Date(), here);
const manual: boolean = v.kind === "held" ? v.manualRemoval : false;
const args: string[] = describeExecutionArgs({ projectId: "p", region: "r", name: "n" });
const st: ExecutionState = parseExecutionState({ ok: true, stdout: "{}", stderr: "", exitCode: 0 });
const how: string = st.kind === "finished" ? st.how : st.kind === "unknown" ? st.error : "";

// leasejudge's own.
const j: lj.LockJudgement = lj.judgeLock(Buffer.from(body));
const code: lj.LockReasonCode = j.reason;
const n: number = lj.LockReason[code];
const store: lj.Store = lj.openStore("mem:");
const got: lj.Acquisition = lj.acquireLock(store, "k", { purpose: "p", holder: null });
const revision: number = got.lock ? got.lock.revision : got.brokeAt;
got.lock?.renew();
const reopened: lj.HeldLock = lj.openLock(store, "k", got.lock ? got.lock.id : "", lj.LOCK_LEASE_AS_TAKEN);
reopened.release();
const plan = lj.planStepLines(Buffer.from(""), { node: "n", rule: "provably-dead", now: 1n });
const ends: number = plan.summary.ends;
const lines: Buffer = plan.lines;
console.log(renewed, manual, args, how, n, revision, ends, lines.length, lj.version);
const waited: Promise<lj.Acquisition> =
    lj.acquireLockWait(store, "k", { purpose: "p", timeoutMs: 100, signal: new AbortController().signal });
waited.then((a) => {
  const beat: lj.Heartbeat | undefined = a.lock?.startHeartbeat((e: lj.LostError) => console.log(e.code));
  beat?.on("lost", (e) => console.log(e.message));
  const token: number | undefined = a.lock?.token;
  console.log(token, beat?.renewals, beat?.lost);
  a.lock?.release();
});

// Wrong uses are errors.
// @ts-expect-error a body is text
judgeHeldLock(42, describe, new Date());
// @ts-expect-error now is a Date
judgeHeldLock(body, describe, Date.now());
// @ts-expect-error alive answers a boolean
judgeHeldLock(body, describe, new Date(), { host: "h", alive: (pid: number) => String(pid) });
// @ts-expect-error an ExecutionState has a kind of four
const bad: ExecutionState = { kind: "done" };
// @ts-expect-error a reason code is one of the fourteen
const badCode: lj.LockReasonCode = "lease_over";
// @ts-expect-error the rule is not-self or provably-dead
lj.planStepLines("", { node: "n", rule: "everyone" });
// @ts-expect-error timeoutMs is a number of ms
lj.acquireLockWait(store, "k", { purpose: "p", timeoutMs: "1" });
// @ts-expect-error signal is an AbortSignal
lj.acquireLockWait(store, "k", { purpose: "p", signal: new AbortController() });
// @ts-expect-error openLock's lease is a number of ms
lj.openLock(store, "k", "id", "1");
// @ts-expect-error Store has no public constructor
new lj.Store();
console.log(bad, badCode);
TS
if "$node" "$NODE_MODULES/typescript/bin/tsc" --noEmit --strict --target es2022 --module commonjs \
     --moduleResolution node --types node --typeRoots "$NODE_MODULES/@types" \
     "$work/consumer/consumer.ts" >"$work/log" 2>&1; then
  ok "a TypeScript consumer type-checks against index.d.ts, its wrong uses refused"
else
  notok "tsc refuses the consumer"
fi
# And tsc does fail on a use the types do not allow.
printf 'import { judgeHeldLock } from "leasejudge";\njudgeHeldLock("{}", () => ({ kind: "running" }), "now");\n' \
  >"$work/consumer/wrong.ts"
if "$node" "$NODE_MODULES/typescript/bin/tsc" --noEmit --strict --moduleResolution node --types node \
     --typeRoots "$NODE_MODULES/@types" "$work/consumer/wrong.ts" >"$work/log" 2>&1; then
  notok "tsc takes a string for a Date"
elif grep -q "error TS2345" "$work/log"; then
  ok "tsc refuses a string for a Date (TS2345)"
else
  notok "tsc failed otherwise"
fi

# --- the tarball ------------------------------------------------------------------------
mkdir -p "$work/packed"
if (cd "$pkg" && npm pack --silent --pack-destination "$work/packed" >"$work/log" 2>&1); then
  ok "npm pack makes a tarball"
else
  notok "npm pack fails"
fi
tarball=$(ls "$work/packed"/leasejudge-*.tgz 2>/dev/null | head -1)
tar tzf "$tarball" 2>/dev/null | sort >"$work/files"
printf '%s\n' package/LICENSE package/README.md package/index.d.ts package/index.js package/leasejudge.node \
  package/libleasejudge.so.0 package/package.json >"$work/want"
if diff "$work/want" "$work/files" >"$work/log" 2>&1; then
  ok "the tarball holds the package's seven files"
else
  notok "the tarball holds other files"
fi
# The library it ships carries no debug information (the build's own copy does).
if readelf --section-headers "$pkg/libleasejudge.so.0" 2>/dev/null | grep -q '\.debug_info'; then
  notok "the packaged library is not stripped"
elif ! readelf --section-headers "$pkg/libleasejudge.so.0" >/dev/null 2>&1; then
  notok "the packaged library cannot be read"
else
  ok "the packaged library is stripped of its debug information ($(($(stat -c %s "$pkg/libleasejudge.so.0") / 1024)) KiB)"
fi

# --- a scratch project ------------------------------------------------------------------------
mkdir -p "$work/scratch"
printf '{"name":"scratch","version":"1.0.0","private":true}\n' >"$work/scratch/package.json"
# Its peer dependency is not fetched here: the registry's newest is no pinned version.
if (cd "$work/scratch" && timeout 300 npm install --no-audit --no-fund --silent --legacy-peer-deps "$tarball" \
     >"$work/log" 2>&1); then
  ok "the tarball installs into a scratch project"
else
  notok "npm install of the tarball fails"
fi
cat >"$work/scratch/judge.js" <<'JS'
const { judgeHeldLock, lockBody } = require("leasejudge");
const body = '{"purpose":"deploy","host":"devbox","machine":"m-1","pid":48213,"leaseUntil":"2024-05-01T12:10:00.000Z"}';
const v = judgeHeldLock(body, () => ({ kind: "running" }), new Date("2024-05-01T12:10:00.001Z"),
                        { host: "devbox", machine: "m-1", alive: () => true });
console.log(JSON.stringify(v));
console.log(require.resolve("leasejudge").startsWith(__dirname + "/node_modules/"), typeof lockBody);
JS
want='{"kind":"break","why":"deploy (on devbox, pid 48213) stopped renewing its lock; its lease ended at 2024-05-01T12:10:00.000Z"}
true function'
got=$(cd "$work/scratch" && "$node" judge.js 2>"$work/log")
if [ "$got" = "$want" ]; then
  ok "the installed package judges a lock"
else
  printf 'got: %s\n' "$got" >>"$work/log"
  notok "the installed package judged otherwise"
fi

# The license: Apache-2.0 in package.json, its text as the source tree's LICENSE.
if [ "$("$node" -p 'require(process.argv[1]).license' "$work/scratch/node_modules/leasejudge/package.json")" = \
     Apache-2.0 ] && cmp -s "$src/LICENSE" "$work/scratch/node_modules/leasejudge/LICENSE"; then
  ok "the installed package declares Apache-2.0 and ships its text"
else
  notok "the installed package's license"
fi

# --- a strict TypeScript consumer with only the declared dependencies ----------------------
declared=$("$node" -p 'const p = require(process.argv[1]);
  JSON.stringify([Object.keys(p.dependencies || {}), p.peerDependencies || {}])' \
  "$work/scratch/node_modules/leasejudge/package.json" 2>"$work/log")
if [ "$declared" = '[[],{"@types/node":">=18"}]' ]; then
  ok "the package declares only the peer @types/node >=18"
else
  printf 'declared: %s\n' "$declared" >>"$work/log"
  notok "the package declares other dependencies"
fi
cat >"$work/scratch/strict.ts" <<'TS'
import { judgeLock, openStore, acquireLock, LockJudgement, Acquisition } from "leasejudge";
const j: LockJudgement = judgeLock(Buffer.from("{}"));
const got: Acquisition = acquireLock(openStore("mem:"), "k", { purpose: "p" });
console.log(j.reason, got.outcome);
TS
tsc() { (cd "$work/scratch" && "$node" "$NODE_MODULES/typescript/bin/tsc" --strict --noEmit strict.ts >"$work/log" 2>&1); }
if tsc; then
  notok "tsc compiles the consumer without @types/node"
elif grep -q "error TS2688: Cannot find type definition file for 'node'" "$work/log"; then
  ok "without its peer the consumer does not compile (TS2688): the declaration is needed"
else
  notok "tsc failed otherwise without @types/node"
fi
mkdir -p "$work/scratch/node_modules/@types"
cp -r "$NODE_MODULES/@types/node-18" "$work/scratch/node_modules/@types/node"
if (cd "$work/scratch" && npm ls --all >"$work/log" 2>&1); then
  ok "@types/node $("$node" -p 'require(process.argv[1]).version' "$work/scratch/node_modules/@types/node/package.json") meets the declared peer range (npm ls)"
else
  notok "npm ls finds the peer unmet"
fi
if tsc; then
  ok "with only its declared peer installed a strict consumer compiles"
else
  notok "tsc --strict refuses the consumer with the declared peer installed"
fi

echo "1..$((pass + fail))"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
