// leasejudge for Node: the lock-lease module's API under its own names and shapes
// (lockBody, renewedLockBody, processAlive, machineId, parseLockBody,
// parseExecutionState, describeExecutionArgs, judgeHeldLock, PROCESS_LEASE_MS,
// LEASE_SKEW_MS), answered by libleasejudge through its C ABI, plus the reason codes,
// the lock's life on a store (memory, file, NATS: acquire, a wait for it on a worker
// thread, the library's heartbeat, release) and the step plan over JSON lines.
//
// This file only adapts: it checks JavaScript types, turns Dates into milliseconds
// and objects into the addon's arguments, and builds the result objects the
// JavaScript code returns. Every rule lives in the library.
'use strict';

const {EventEmitter} = require('events');
const native = require('./leasejudge.node');

const numbers = native.numbers;

/** The lease of a process holder's lock; renewed every third of it. */
const PROCESS_LEASE_MS = native.processLeaseMs;
/** Added to every lease for clock skew between the holder and its judge. */
const LEASE_SKEW_MS = native.leaseSkewMs;
/** openLock's leaseMs for the lease the lock was taken with (LJ_LOCK_LEASE_AS_TAKEN). */
const LOCK_LEASE_AS_TAKEN = native.lockLeaseAsTaken;

// JavaScript's Date range, in ms either side of the epoch.
const DATE_LIMIT = 8.64e15;
// The library's "now": LJ_TIME_DEFAULT.
const LIBRARY_NOW = -(2 ** 63);

function typeError(message) {
  const e = new TypeError(message);
  e.code = 'LJ_EINVAL';
  return e;
}

function rangeError(message) {
  const e = new RangeError(message);
  e.code = 'LJ_EINVAL';
  return e;
}

// A time a body is written with: a valid Date, as toISOString() needs one.
function writeTime(now, what) {
  if (!(now instanceof Date)) throw typeError(`${what} must be a Date`);
  const ms = now.getTime();
  if (Number.isNaN(ms)) throw rangeError('Invalid time value');
  return ms;
}

// A judge's now. An invalid Date compares false with every lease, as NaN does in the
// JavaScript code: it judges as a time before every lease.
function judgeTime(now) {
  if (!(now instanceof Date)) throw typeError('now must be a Date');
  const ms = now.getTime();
  // An invalid Date (NaN) compares false with every lease end, as JavaScript compares
  // it; so does the earliest time a Date can hold (every judgement asks now > end).
  return Number.isNaN(ms) ? -DATE_LIMIT : ms;
}

// The lease the library adds to now so that the end is new Date(now + leaseMs +
// LEASE_SKEW_MS) exactly (a Date truncates a fraction toward zero).
function leaseOf(nowMs, leaseMs, what) {
  if (typeof leaseMs !== 'number') throw typeError(`${what} must be a number`);
  const until = nowMs + leaseMs + LEASE_SKEW_MS;
  if (!(Math.abs(until) <= DATE_LIMIT)) throw rangeError('Invalid time value');
  return Math.trunc(until) - nowMs - LEASE_SKEW_MS;
}

function objectOf(value, what) {
  if (value === null || typeof value !== 'object') throw typeError(`${what} must be an object`);
  return value;
}

// --- the lock body ----------------------------------------------------------------------

/**
 * The body a new lock is written with, for this process: host, machine id, pid,
 * startedAt now and, with a holder, its lease (now + lease + LEASE_SKEW_MS); a process
 * holder's body (or one without a holder) also carries this process's owner token
 * ("owner"), which the JavaScript schema ignores.
 */
function lockBody(purpose, now, holder, id) {
  const nowMs = writeTime(now, 'now');
  if (id !== undefined && typeof id !== 'string') throw typeError('id must be a string');
  if (!holder) return native.newBody(purpose, nowMs, 0, 0, undefined, undefined, undefined, id);
  objectOf(holder, 'holder');
  if ('execution' in holder) {
    const ex = objectOf(holder.execution, 'holder.execution');
    const lease = leaseOf(nowMs, holder.maxRuntimeMs, 'holder.maxRuntimeMs');
    return native.newBody(purpose, nowMs, 2, lease, ex.projectId, ex.region, ex.name, id);
  }
  return native.newBody(
      purpose, nowMs, 1, leaseOf(nowMs, holder.leaseMs, 'holder.leaseMs'), undefined, undefined, undefined, id);
}

/** The same body with its lease moved to now + leaseMs + LEASE_SKEW_MS. */
function renewedLockBody(body, now, leaseMs) {
  objectOf(body, 'body');
  const nowMs = writeTime(now, 'now');
  return native.renewBody(JSON.stringify(body), nowMs, leaseOf(nowMs, leaseMs, 'leaseMs'));
}

/** Parse a lock body; null when it is not one (not JSON, not the schema). */
function parseLockBody(text) {
  if (typeof text !== 'string') throw typeError('text must be a string');
  const json = native.parseBody(text);
  return json === null ? null : JSON.parse(json);
}

// --- this machine -----------------------------------------------------------------------

/** Whether process pid may live on this machine: false only when it is provably gone. */
function processAlive(pid) { return native.processAlive(pid); }

/**
 * This machine's id (host, pid namespace, network cards); null inside Cloud Run or
 *  without a network card.
 */
function machineId(env) {
  const e = env === undefined ? process.env : objectOf(env, 'env');
  if (e.CLOUD_RUN_EXECUTION || e.K_SERVICE) return null;
  return native.machineId();
}

// --- execution state ----------------------------------------------------------------------

function stateOf(kind, detail) {
  switch (kind) {
    case 0:
      return {kind: 'running'};
    case 1:
      return {kind: 'finished', how: detail};
    case 2:
      return {kind: 'not-found'};
    default:
      return {kind: 'unknown', error: detail};
  }
}

/** Read an execution's state from `gcloud run jobs executions describe --format=json`. */
function parseExecutionState(result) {
  objectOf(result, 'result');
  const {ok, stdout, stderr, exitCode} = result;
  if (typeof ok !== 'boolean') throw typeError('result.ok must be a boolean');
  // The library reads exit code 0 as success: a failure needs another number.
  const code = ok ? 0 : Number.isInteger(exitCode) && exitCode !== 0 && Math.abs(exitCode) < 2 ** 31 ? exitCode : -1;
  const detail = native.executionState(code, stdout, stderr);
  return stateOf(numbers[0], detail);
}

/** The arguments after `gcloud` that describe an execution. */
function describeExecutionArgs(ref) {
  objectOf(ref, 'ref');
  return native.describeArgs(ref.projectId, ref.region, ref.name);
}

/**
 * Ask Cloud Run about ref now, through gcloud on PATH (no shell), waiting at most
 *  timeoutMs (0: 60 s). A gcloud that cannot run is { kind: "unknown", error }.
 */
function describeExecution(ref, timeoutMs = 0) {
  objectOf(ref, 'ref');
  const detail = native.describeExecution(ref.projectId, ref.region, ref.name, timeoutMs);
  return stateOf(numbers[0], detail);
}

// --- the verdict --------------------------------------------------------------------------

const KINDS = ['break', 'held', 'unknown'];
const REASON_CODES = [''];
for (let n = 1; native.reasonCode(n) !== ''; n++) REASON_CODES.push(native.reasonCode(n));
/** The stable reason codes and their numbers (the C ABI's LJ_LOCK_*). */
const LockReason = Object.freeze(Object.fromEntries(REASON_CODES.slice(1).map((code, i) => [code, i + 1])));

function machineKindOf(machine) { return machine === undefined ? 0 : machine === null ? 1 : 2; }

// The addon's judge, with here unpacked; the verdict's numbers are left in numbers.
function judgeWith(text, describe, nowMs, here) {
  if (here === undefined) return native.judge(text, nowMs, describe, undefined, undefined, 0, undefined, undefined);
  objectOf(here, 'here');
  const machine = here.machine;
  return native.judge(text, nowMs, describe, here, here.host, machineKindOf(machine), machine, here.alive);
}

/**
 * Decide whether the lock with body text may be broken: the JavaScript code's own
 * verdict shapes. describe is called only when the body names an execution; here
 * (default: this machine) says whose pids can be checked.
 */
function judgeHeldLock(text, describe, now, here) {
  if (typeof text !== 'string') throw typeError('text must be a string');
  if (typeof describe !== 'function') throw typeError('describe must be a function');
  const why = judgeWith(text, describe, judgeTime(now), here);
  switch (numbers[0]) {
    case 0:
      return {kind: 'break', why};
    case 1:
      return {kind: 'held', why, manualRemoval: numbers[2] === 1};
    default:
      return {kind: 'unknown', why};
  }
}

/**
 * The same judgement with its stable reason code: { kind, reason, manualRemoval, why }.
 * text may be bytes (a Buffer); describe may be left out (gcloud on PATH asks Cloud
 * Run), and now (the clock).
 */
function judgeLock(text, describe, now, here) {
  if (describe !== undefined && describe !== null && typeof describe !== 'function')
    throw typeError('describe must be a function');
  const why = judgeWith(text, describe, now === undefined ? LIBRARY_NOW : judgeTime(now), here);
  return {kind: KINDS[numbers[0]], reason: REASON_CODES[numbers[1]], manualRemoval: numbers[2] === 1, why};
}

function verdictOf(v) {
  return v === null ? null :
                      {kind: KINDS[v.kind], reason: REASON_CODES[v.reason], manualRemoval: v.manualRemoval, why: v.why};
}

// --- stores ---------------------------------------------------------------------------------

const storeHandle = Symbol('leasejudge store');

/**
 * A store with revisions: every write names the revision it read, and a write that
 * finds the key moved throws (code LJ_ECHANGED; LJ_EEXISTS for create) instead of
 * overwriting. Values are bytes (a string is written as UTF-8).
 */
class Store {
  constructor(handle) {
    if (handle === undefined || handle === null)
      throw typeError('open a Store with openStore or Store.memory/file/nats');
    this[storeHandle] = handle;
  }
  /** A store in this process. */
  static memory() { return new Store(native.storeMemory()); }
  /** The file store in directory dir (created, one level, when missing). */
  static file(dir) { return new Store(native.storeFile(dir)); }
  /** A NATS JetStream key/value bucket: { urls, bucket, createBucket, ... }. */
  static nats(options) { return new Store(native.storeNats(objectOf(options, 'options'))); }
  /** { value: Buffer, revision } of key, or null when it holds nothing. */
  get(key) {
    const got = native.storeGet(this[storeHandle], key);
    return got === null ? null : {value: got[0], revision: got[1]};
  }
  /** Create key when absent: its revision. */
  create(key, value) { return native.storeCreate(this[storeHandle], key, value); }
  /** Update key at revision: its new revision. */
  update(key, value, revision) { return native.storeUpdate(this[storeHandle], key, value, revision); }
  /** Delete key at revision. */
  remove(key, revision) { native.storeRemove(this[storeHandle], key, revision); }
  /** Every key that holds a value. */
  keys() { return native.storeKeys(this[storeHandle]); }
  /** Close the store (a lock still held on it keeps it open until it is collected). */
  close() { native.storeClose(this[storeHandle]); }
}

/**
 * A store by its URL, the library's one grammar (the command's --store): "mem:",
 * "file:DIR" or "nats://[user:pass@]host:port[,...]/BUCKET" (tls:// too). A file:
 * directory or NATS bucket that does not exist is refused (LJ_ESTORE) unless
 * options.create; options also take credentialsFile, tlsCaFile, tlsCertFile,
 * tlsKeyFile and refuseUnfenced.
 */
function openStore(url, options) {
  try {
    return new Store(native.storeOpenUrl(url, options));
  } catch (e) {
    // A URL or option the library refuses is a value out of range, as elsewhere here.
    if (e.code === 'LJ_EINVAL' && !(e instanceof TypeError)) throw rangeError(e.message);
    throw e;
  }
}

// --- the lock's life --------------------------------------------------------------------------

const OUTCOMES = ['acquired', 'held', 'unknown', 'lost-race'];
const lockHandle = Symbol('leasejudge lock');

/** A lock this process holds; its revision is the fencing token. */
class HeldLock {
  constructor(handle, store, key) {
    this[lockHandle] = handle;
    this.store = store;
    this.key = key;
    this[beatOf] = null;
  }
  get id() { return native.lockState(this[lockHandle]).id; }
  get body() { return native.lockState(this[lockHandle]).body; }
  /** Our body's revision (as last renewed while a heartbeat runs): the fencing token. */
  get revision() { return native.lockState(this[lockHandle]).revision; }
  /** The fencing token: the revision. */
  get token() { return this.revision; }
  /** How often to renew: a third of the lease (0 without a lease). */
  get renewIntervalMs() { return native.lockState(this[lockHandle]).renewIntervalMs; }
  /** The heartbeat running on this lock, or null. */
  get heartbeat() { return this[beatOf]; }
  /**
   * Move the lease forward; code LJ_ECHANGED when the lock is no longer ours,
   * LJ_EBUSY while a heartbeat renews it.
   */
  renew(now) { native.lockRenew(this[lockHandle], now === undefined ? LIBRARY_NOW : writeTime(now, 'now')); }
  /**
   * Stop its heartbeat, if one runs, and remove the lock while it is still ours
   * (LJ_ENOTFOUND, LJ_ECHANGED otherwise).
   */
  release() {
    if (this[beatOf] !== null) this[beatOf].stop();
    native.lockRelease(this[lockHandle]);
  }
  /**
   * Renew the lock on a thread of the library, every third of its lease, keeping the
   * lease it was taken with; a failed renewal is tried again while the lease runs.
   * The Heartbeat emits "lost" once (onLost, if given, listens) with an Error whose
   * code is LJ_ECHANGED (someone else's now) or LJ_ETIMEOUT (the lease ended
   * unrenewed). LJ_EINVAL for a lock without a lease, LJ_EBUSY when one runs.
   */
  startHeartbeat(onLost) {
    if (onLost !== undefined && typeof onLost !== 'function') throw typeError('onLost must be a function');
    if (this[beatOf] !== null) {
      const e = new Error('the lock has a heartbeat already');
      e.code = 'LJ_EBUSY';
      throw e;
    }
    const beat = new Heartbeat(this, lockHandle);
    if (onLost !== undefined) beat.on('lost', onLost);
    native.lockHeartbeatStart(this[lockHandle], (code, message) => beat[lostWith](code, message));
    this[beatOf] = beat;
    return beat;
  }
}

const beatOf = Symbol('leasejudge heartbeat');
const lostWith = Symbol('leasejudge lost');
const beatLock = Symbol('leasejudge heartbeat lock');
const finalState = Symbol('leasejudge heartbeat final state');

/**
 * The library's heartbeat on a HeldLock. Emits "lost" (an Error, code LJ_ECHANGED or
 * LJ_ETIMEOUT) once when the lock is lost; never after stop(). It does not keep the
 * process alive.
 */
class Heartbeat extends EventEmitter {
  constructor(lock, key) {
    if (key !== lockHandle) throw typeError('start a Heartbeat with HeldLock.startHeartbeat');
    super();
    this[beatLock] = lock;
    this[finalState] = null;
    this.error = null;
  }
  [lostWith](code, message) {
    const e = new Error(message);
    e.code = code;
    this.error = e;
    this.emit('lost', e);
  }
  state() {
    return this[finalState] !== null ? this[finalState] : native.lockHeartbeatState(this[beatLock][lockHandle]);
  }
  /** Whether it still runs. */
  get running() { return this.state().running; }
  /**
   * True once the lock is lost, or its lease's end passed without a renewal (maybe
   * before "lost" is emitted): stop the work it guards.
   */
  get lost() { return this.state().lost; }
  /** Renewals that succeeded, and failed renewals tried again. */
  get renewals() { return this.state().renewals; }
  get retries() { return this.state().retries; }
  /** Stop renewing (waits for a renewal in flight); the numbers stay as they were. */
  stop() {
    if (this[finalState] !== null) return;
    const lock = this[beatLock];
    const last = native.lockHeartbeatState(lock[lockHandle]);
    native.lockHeartbeatStop(lock[lockHandle]);
    this[finalState] = {running: false, lost: last.lost, renewals: last.renewals, retries: last.retries};
    lock[beatOf] = null;
  }
}

function holderArgs(holder) {
  if (holder === undefined) return [1, PROCESS_LEASE_MS, undefined, undefined, undefined];
  if (holder === null) return [0, 0, undefined, undefined, undefined];
  objectOf(holder, 'holder');
  if ('execution' in holder) {
    const ex = objectOf(holder.execution, 'holder.execution');
    return [2, holder.maxRuntimeMs, ex.projectId, ex.region, ex.name];
  }
  return [1, holder.leaseMs, undefined, undefined, undefined];
}

/**
 * Take the lock at key: create it when absent; when held, judge the holder and on
 * "break" delete its body at the revision judged, then create ours. options:
 * { purpose, holder (default a process with PROCESS_LEASE_MS; null: no lease),
 *   now, describe, here, gcloudTimeoutMs }.
 * Returns { outcome, verdict, brokeAt, lock }.
 */
function acquireLock(store, key, options) {
  if (!(store instanceof Store)) throw typeError('store must be a Store');
  const o = objectOf(options, 'options');
  const nowMs = o.now === undefined ? LIBRARY_NOW : writeTime(o.now, 'options.now');
  const describe = o.describe === undefined ? null : o.describe;
  if (describe !== null && typeof describe !== 'function') throw typeError('options.describe must be a function');
  const here = o.here;
  if (here !== undefined) objectOf(here, 'options.here');
  const h = holderArgs(o.holder);
  const got = native.lockAcquire(
      store[storeHandle], key, o.purpose, h[0], h[1], h[2], h[3], h[4], nowMs, describe, here, here && here.host,
      here && machineKindOf(here.machine), here && here.machine, here && here.alive,
      o.gcloudTimeoutMs === undefined ? 0 : o.gcloudTimeoutMs);
  return {
    outcome: OUTCOMES[got.outcome],
    verdict: verdictOf(got.verdict),
    brokeAt: got.brokeAt,
    lock: got.lock === null ? null : new HeldLock(got.lock, store, key),
  };
}

/**
 * A handle for the lock at key while its body is the one with acquisition id `id` (a
 * HeldLock's id), to renew or release a lock taken before, by another process or run.
 * leaseMs is its lease for renewal (0: none), or LOCK_LEASE_AS_TAKEN: the lease the lock
 * was taken with. Throws LJ_ENOTFOUND when no lock is there, LJ_ECHANGED when its body
 * is someone else's now.
 */
function openLock(store, key, id, leaseMs) {
  if (!(store instanceof Store)) throw typeError('store must be a Store');
  return new HeldLock(native.lockOpen(store[storeHandle], key, id, leaseMs), store, key);
}

// The longest wait one call of the library takes (a day): a wait without timeoutMs
// is made of turns of it.
const WAIT_TURN_MS = 86400000;

/**
 * acquireLock, tried again with the library's backoff (pollMinMs, 0 its 50 ms,
 * doubling to pollMaxMs, 0 its 1 s) while a live holder keeps the lock, its holder is
 * unknown or a race is lost, on a worker thread. options: { purpose, holder,
 * timeoutMs (0 one try; left out: until acquired or aborted), signal (an
 * AbortSignal), pollMinMs, pollMaxMs, gcloudTimeoutMs }. Resolves with what
 * acquireLock returns (a wait that ran out: the last try's outcome, lock null);
 * rejects with code LJ_EUSER when the signal aborts (seen within 20 ms, nothing of
 * ours left in the store), LJ_EINVAL for a negative timeout or one over a day, or the
 * store's error. Judging is this machine's (describe and here are acquireLock's).
 */
function acquireLockWait(store, key, options) {
  return new Promise((resolve, reject) => {
    if (!(store instanceof Store)) throw typeError('store must be a Store');
    const o = objectOf(options, 'options');
    if (o.describe !== undefined || o.here !== undefined)
      throw typeError('acquireLockWait judges on this machine: options.describe and options.here are acquireLock\'s');
    const signal = o.signal;
    if (signal !== undefined && !(signal instanceof AbortSignal))
      throw typeError('options.signal must be an AbortSignal');
    const timeoutMs = o.timeoutMs;
    if (timeoutMs !== undefined && typeof timeoutMs !== 'number') throw typeError('options.timeoutMs must be a number');
    const h = holderArgs(o.holder);
    const opt = (v) => v === undefined ? 0 : v;
    let cancel = null;
    const onAbort = () => native.lockWaitCancel(cancel);
    const settle = (f, v) => {
      if (signal !== undefined) signal.removeEventListener('abort', onAbort);
      f(v);
    };
    const turn = () => {
      const [promise, handle] = native.lockAcquireWait(
          store[storeHandle], key, o.purpose, h[0], h[1], h[2], h[3], h[4], opt(o.gcloudTimeoutMs),
          timeoutMs === undefined ? WAIT_TURN_MS : timeoutMs, opt(o.pollMinMs), opt(o.pollMaxMs),
          signal !== undefined && signal.aborted);
      cancel = handle;
      promise.then((got) => {
        if (got.lock === null && timeoutMs === undefined) return turn();
        settle(resolve, {
          outcome: OUTCOMES[got.outcome],
          verdict: verdictOf(got.verdict),
          brokeAt: got.brokeAt,
          lock: got.lock === null ? null : new HeldLock(got.lock, store, key),
        });
      }, (e) => settle(reject, e));
    };
    turn();
    if (signal !== undefined) signal.addEventListener('abort', onAbort, {once: true});
  });
}

// --- the step plan ----------------------------------------------------------------------------

function nsOf(t, what) {
  if (t === undefined || typeof t === 'bigint') return t;
  if (!(t instanceof Date) || Number.isNaN(t.getTime()))
    throw typeError(`${what} must be a valid Date or a bigint of ns`);
  return BigInt(t.getTime()) * 1000000n;
}

const RULES = {
  'not-self': 0,
  'provably-dead': 1,
  'by-owner': 2
};
const RULE_NAMES = ['not-self', 'provably-dead', 'by-owner'];

/*
 * The rules a plan judges by, one shape for every call that judges steps: { node,
 * owner, before, now (Dates or bigint ns), boundMs, rule ("by-owner", the library's
 * default: not-self with an owner named, provably-dead without | "not-self" |
 * "provably-dead"), startToleranceMs, minAgeMs (a running step started less than this
 * ago is left, whoever owns it), selfPid (whose owner token "self" is when no owner is
 * named, and whose start the default before is; 0: this process) }. A field left out
 * takes the library's default. Here as the native calls take them.
 */
function rulesOf(rules, what) {
  const o = objectOf(rules, what);
  let rule;
  if (o.rule !== undefined) {
    rule = RULES[o.rule];
    if (rule === undefined) throw typeError(`${what}.rule must be "by-owner", "not-self" or "provably-dead"`);
  }
  return {
    node: o.node, owner: o.owner, beforeNs: nsOf(o.before, `${what}.before`), nowNs: nsOf(o.now, `${what}.now`),
    boundMs: o.boundMs, rule, startToleranceMs: o.startToleranceMs, minAgeMs: o.minAgeMs, selfPid: o.selfPid,
  };
}

/**
 * The plan of `leasejudge step plan` over JSON lines
 * ({"key","revision","value"} each): { lines: Buffer of one
 * {"key","action","why"} line per entry, summary: { ends, deletes, leaves, noStep,
 * otherNode, malformed } }. options: the rules (rulesOf; node required) and threads.
 */
function planStepLines(input, options) {
  const o = objectOf(options, 'options');
  return native.planLines(input, rulesOf(o, 'options'), o.threads);
}

/**
 * What the library makes of rules (rulesOf's shape), as a plan resolves them: { rule
 * ("not-self" or "provably-dead"), owner (the owner token "self" is), why (the rule
 * chosen and why, as a person reads it) }. Throws code LJ_EINVAL for rules a plan
 * refuses, LJ_ENOTFOUND for a selfPid of no process.
 */
function resolveRules(rules) {
  const got = native.resolveRules(rulesOf(rules, 'rules'));
  return {rule: RULE_NAMES[got.rule], owner: got.owner, why: got.why};
}

module.exports = {
  PROCESS_LEASE_MS,
  LEASE_SKEW_MS,
  LOCK_LEASE_AS_TAKEN,
  lockBody,
  renewedLockBody,
  processAlive,
  machineId,
  parseLockBody,
  parseExecutionState,
  describeExecutionArgs,
  judgeHeldLock,
  judgeLock,
  describeExecution,
  LockReason,
  Store,
  openStore,
  HeldLock,
  Heartbeat,
  acquireLock,
  openLock,
  acquireLockWait,
  planStepLines,
  resolveRules,
  version : native.version,
};
