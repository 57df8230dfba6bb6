/// <reference types="node" />
import {EventEmitter} from 'events';
// leasejudge for Node: the lock-lease module's API under its own names and shapes,
// answered by libleasejudge, plus reason codes, the lock's life on a store and the
// step plan over JSON lines. Every error thrown is an Error whose `code` is the C
// ABI's code name ("LJ_EINVAL", "LJ_ECHANGED", ...); a wrong argument type is a
// TypeError with code "LJ_EINVAL". A callback that throws stops the call and its
// exception is the one thrown.
//
// Where the answers differ from the JavaScript lock code's, on purpose: a new body of
// a process (or of no holder) also carries this process's owner token ("owner"), which
// that code's schema ignores, and parseLockBody keeps it; processAlive and the default
// pid check never call dead a number that is no positive 32-bit pid; an alive callback
// must return a boolean and a describer an ExecutionState (anything else is a
// TypeError, not a verdict); a text past 16 MiB is a RangeError; a NUL or a lone
// surrogate in a why or an execution state's detail comes back as U+FFFD; an explicit
// empty id to lockBody gets a fresh one; a failed GcloudResult whose exitCode is 0 or
// no number reads as exit code -1.

// --- the lock-lease module's API ---------------------------------------------------------

/** A Cloud Run job execution, fully addressed. */
export interface CloudRunExecutionRef {
  readonly projectId: string;
  readonly region: string;
  /** The execution's short name (`CLOUD_RUN_EXECUTION`). */
  readonly name: string;
}

/** A lock holder Cloud Run can vouch for: the execution and its longest run. */
export interface ExecutionLockHolder {
  readonly execution: CloudRunExecutionRef;
  readonly maxRuntimeMs: number;
}

/** A lock holder outside Cloud Run: a short lease renewed while it runs. */
export interface ProcessLockHolder {
  readonly leaseMs: number;
}

/** Who takes a lock: a Cloud Run execution, or a renewing process. */
export type LockHolder = ExecutionLockHolder|ProcessLockHolder;

/**
 * The lease of a process holder's lock (10 minutes, the library's default) unless its
 * holder says another; renewed every third of it, keeping the lease it was taken
 * with.
 */
export declare const PROCESS_LEASE_MS: number;
/**
 * Added by every judge to every lease for clock skew between holder and judge
 * (5 minutes): a body taken with a 30 s lease says leaseUntil 5 min 30 s ahead, and
 * another process breaks it only after that.
 */
export declare const LEASE_SKEW_MS: number;
/** openLock's leaseMs for the lease the lock was taken with (the C ABI's LJ_LOCK_LEASE_AS_TAKEN). */
export declare const LOCK_LEASE_AS_TAKEN: number;

/** A lock body as the schema reads it (unknown keys dropped). */
export interface LockBody {
  purpose: string;
  id?: string|undefined;
  host?: string|undefined;
  /** The writer's machine id; null when it has none (Cloud Run). */
  machine?: string|null|undefined;
  pid?: number|undefined;
  startedAt?: string|undefined;
  execution?: {projectId: string; region: string; name: string}|undefined;
  leaseUntil?: string|undefined;
  /** leasejudge's owner token of the holder (boot id, pid, start), when it wrote one. */
  owner?: string|undefined;
}

/**
 * The body a new lock is written with by this process: purpose, id (a fresh UUID
 * when left out), host, machine id, pid, startedAt now, and with a holder its lease
 * (now + lease + LEASE_SKEW_MS). A process holder's body also carries this
 * process's owner token. A RangeError when a time falls outside Date's range.
 */
export declare function lockBody(purpose: string, now: Date, holder?: LockHolder, id?: string): string;

/**
 * The same body with its lease moved to now + leaseMs + LEASE_SKEW_MS; the rest
 *  kept. Throws code LJ_EPARSE for an object that is not a lock body.
 */
export declare function renewedLockBody(body: LockBody, now: Date, leaseMs: number): string;

/**
 * Whether process pid may live on this machine: false only when it is provably
 *  gone (kill(pid, 0) fails with ESRCH); true for a number that is no pid.
 */
export declare function processAlive(pid: number): boolean;

/**
 * This machine's id (host name, pid namespace, network cards), null inside Cloud
 *  Run or without a network card.
 */
export declare function machineId(env?: NodeJS.ProcessEnv): string|null;

/** The judging run's own host and how it checks a local pid. */
export interface LocalHost {
  readonly host: string;
  /**
   * machineId(); left out only by a judge from before machine ids (host names are
   *  compared then); null never trusts a pid.
   */
  readonly machine?: string|null;
  /** Whether pid lives here; must return true or false (anything else throws). */
  readonly alive: (pid: number) => boolean;
}

/** Parse a lock body; null when it is not one. */
export declare function parseLockBody(text: string): LockBody|null;

/** What Cloud Run says about the holder's execution. */
export type ExecutionState =|{readonly kind: 'running'}|{
  readonly kind: 'finished';
  readonly how: string
}
|{readonly kind: 'not-found'} /** Cloud Run could not be asked; `error` says why. */
|{
  readonly kind: 'unknown';
  readonly error: string
};

/** What a gcloud call gave back. */
export interface GcloudResult {
  readonly ok: boolean;
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number|null;
}

/** Read an execution's state from `gcloud run jobs executions describe --format=json`. */
export declare function parseExecutionState(result: GcloudResult): ExecutionState;

/** `gcloud run jobs executions describe` NAME --region=R --project=P --format=json. */
export declare function describeExecutionArgs(ref: CloudRunExecutionRef): string[];

/** Whether a held lock may be broken, and the words for either outcome. */
export type LockVerdict =|{
  readonly kind: 'break';
  readonly why: string
}
|{
  readonly kind: 'held';
  readonly why: string;
  readonly manualRemoval: boolean
}
/** The holder could not be checked; never treated as "dead". */
|{
  readonly kind: 'unknown';
  readonly why: string
};

/**
 * Decide whether the lock with body text may be broken.
 * @param describe looks the holder's execution up; called only when the body names one
 * @param now the judging run's clock, compared against the lease
 * @param here whose pids can be checked (default: this machine)
 */
export declare function judgeHeldLock(
    text: string,
    describe: (ref: CloudRunExecutionRef) => ExecutionState,
    now: Date,
    here?: LocalHost,
    ): LockVerdict;

// --- leasejudge's own ---------------------------------------------------------------------

/** The stable reason codes, numbered as the C ABI's LJ_LOCK_*. */
export declare const
    LockReason:
        {
          readonly not_readable: 1; readonly execution_finished: 2; readonly execution_running: 3; readonly execution_not_found_no_lease: 4; readonly execution_not_found_lease_ended: 5; readonly execution_not_found_lease_runs: 6; readonly execution_unknown: 7; readonly process_gone: 8; readonly no_lease: 9; readonly lease_unreadable: 10; readonly lease_ended: 11; readonly lease_runs: 12; readonly holder_rebooted: 13; readonly pid_reused:
                                                                                                                                                                                                                                                                                                                                                                                                                                                  14; readonly store_lease_ended: 15; readonly store_lease_unknown: 16;
        };
export type LockReasonCode = keyof typeof LockReason;

/** A verdict with its reason code. */
export interface LockJudgement {
  readonly kind: 'break'|'held'|'unknown';
  readonly reason: LockReasonCode;
  /** held only: nothing but a person clears the lock. */
  readonly manualRemoval: boolean;
  readonly why: string;
}

/**
 * judgeHeldLock with the reason code; text may be bytes; describe left out asks
 *  gcloud on PATH; now left out is the clock.
 */
export declare function judgeLock(
    text: string|Uint8Array,
    describe?: ((ref: CloudRunExecutionRef) => ExecutionState)|null,
    now?: Date,
    here?: LocalHost,
    ): LockJudgement;

/**
 * Ask Cloud Run now through gcloud on PATH (no shell), waiting at most timeoutMs
 *  (0: 60 s); a gcloud that cannot run is { kind: "unknown" }.
 */
export declare function describeExecution(ref: CloudRunExecutionRef, timeoutMs?: number): ExecutionState;

/** NATS JetStream key/value options (the C ABI's lj_nats_options_t). */
export interface NatsOptions {
  /** Server URLs, comma-separated; default nats://127.0.0.1:4222. */
  urls?: string;
  bucket: string;
  credentialsFile?: string;
  tls?: boolean;
  tlsCaFile?: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  name?: string;
  connectTimeoutMs?: number;
  requestTimeoutMs?: number;
  listTimeoutMs?: number;
  reconnectWaitMs?: number;
  directReads?: boolean;
  createBucket?: boolean;
  history?: number;
  replicas?: number;
}

/** A key's value and revision. */
export interface StoredValue {
  readonly value: Buffer;
  readonly revision: number;
}

/**
 * A store with revisions: a write that finds the key moved throws (code
 *  LJ_ECHANGED, LJ_EEXISTS for create) instead of overwriting.
 */
export declare class Store {
  private constructor();
  static memory(): Store;
  static file(dir: string): Store;
  static nats(options: NatsOptions): Store;
  get(key: string): StoredValue|null;
  create(key: string, value: string|Uint8Array): number;
  update(key: string, value: string|Uint8Array, revision: number|bigint): number;
  remove(key: string, revision: number|bigint): void;
  keys(): string[];
  close(): void;
}

/** What openStore takes beside the URL. */
export interface StoreUrlOptions {
  /** Make a missing file: directory or NATS bucket (default: refuse it, LJ_ESTORE). */
  create?: boolean;
  credentialsFile?: string;
  tlsCaFile?: string;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  /** Refuse writes on a replicated bucket of a nats-server before 2.9.21. */
  refuseUnfenced?: boolean;
}

/** "mem:", "file:DIR" or "nats://[user:pass@]host:port[,...]/BUCKET" (tls:// too). */
export declare function openStore(url: string, options?: StoreUrlOptions): Store;

/** A lock this process holds. */
export declare class HeldLock {
  private constructor();
  readonly store: Store;
  readonly key: string;
  readonly id: string;
  readonly body: string;
  /** The store revision of our body (as last renewed while a heartbeat runs): the fencing token. */
  readonly revision: number;
  /** The fencing token: the same as revision. */
  readonly token: number;
  /** A third of the lease (0 without a lease). */
  readonly renewIntervalMs: number;
  /** The heartbeat renewing the lock, or null. */
  readonly heartbeat: Heartbeat|null;
  /**
   * Move the lease forward, keeping the lease the lock was taken with; throws code
   * LJ_ECHANGED when the lock is no longer ours, LJ_EBUSY while a heartbeat runs.
   */
  renew(now?: Date): void;
  /** Stop its heartbeat, then remove the lock while it is ours; LJ_ENOTFOUND, LJ_ECHANGED otherwise. */
  release(): void;
  /**
   * Renew the lock on a thread of the library every third of its lease, keeping the
   * lease it was taken with (not PROCESS_LEASE_MS); a renewal that fails is tried
   * again while the lease still runs (counted from the last renewal that succeeded,
   * without LEASE_SKEW_MS), so one failed renewal is no loss. onLost listens to the
   * heartbeat's "lost" event. Throws code LJ_EINVAL for a lock without a lease,
   * LJ_EBUSY when a heartbeat runs already; a TypeError for an onLost that is no
   * function.
   */
  startHeartbeat(onLost?: (error: LostError) => void): Heartbeat;
}

/** Why a lock was lost: someone else's now (LJ_ECHANGED), or its lease ended unrenewed (LJ_ETIMEOUT). */
export interface LostError extends Error {
  readonly code: 'LJ_ECHANGED'|'LJ_ETIMEOUT';
}

/**
 * The library's heartbeat on a HeldLock. Emits "lost" once, on the main thread, when
 * the lock is lost, and never after stop(). It runs until stop(), the lock's
 * release() or the process's end (a HeldLock dropped with one running is renewed
 * until then); it does not keep the process alive. Its lock's store stays open while
 * it runs, even after store.close(). A "lost" listener may call stop(); one that
 * throws is an uncaught exception, as in any event's listener.
 */
export declare class Heartbeat extends EventEmitter {
  private constructor();
  /** The loss, once reported. */
  readonly error: LostError|null;
  readonly running: boolean;
  /**
   * True once the lock is lost, or as soon as its lease's end passed without a
   * renewal that succeeded (maybe before "lost" is emitted): stop the work it guards.
   */
  readonly lost: boolean;
  /** Renewals that succeeded so far. */
  readonly renewals: number;
  /** Failed renewals tried again so far. */
  readonly retries: number;
  /** Stop renewing (waits for a renewal in flight); the numbers stay as they were. */
  stop(): void;
  on(event: 'lost', listener: (error: LostError) => void): this;
  once(event: 'lost', listener: (error: LostError) => void): this;
}

export interface AcquireOptions {
  purpose: string;
  /** Default { leaseMs: PROCESS_LEASE_MS }; null: no lease (judged by its pid alone). */
  holder?: LockHolder|null;
  now?: Date;
  describe?: ((ref: CloudRunExecutionRef) => ExecutionState)|null;
  here?: LocalHost;
  gcloudTimeoutMs?: number;
}

export interface Acquisition {
  readonly outcome: 'acquired'|'held'|'unknown'|'lost-race';
  /** The verdict on the holder found, if any. */
  readonly verdict: LockJudgement|null;
  /** The revision of the body broken; 0 when none. */
  readonly brokeAt: number;
  /** acquired only. */
  readonly lock: HeldLock|null;
}

/**
 * Take the lock at key: create it when absent; when held, judge the holder and on
 *  "break" delete its body at the revision judged, then create ours.
 */
export declare function acquireLock(store: Store, key: string, options: AcquireOptions): Acquisition;
/**
 * A handle for the lock at key while its body is the one with acquisition id `id` (a
 * HeldLock's id), to renew or release a lock taken before, by another process or run.
 * leaseMs is its lease for renewal (0: none), or LOCK_LEASE_AS_TAKEN: the lease the lock
 * was taken with. Throws LJ_ENOTFOUND when no lock is there, LJ_ECHANGED when its body
 * is someone else's now.
 */
export declare function openLock(store: Store, key: string, id: string, leaseMs: number): HeldLock;

export interface AcquireWaitOptions {
  purpose: string;
  /** Default { leaseMs: PROCESS_LEASE_MS }; null: no lease (judged by its pid alone). */
  holder?: LockHolder|null;
  /**
   * How long to keep trying, in ms: 0 one try; left out, until acquired or aborted.
   * Negative or over a day (86400000): code LJ_EINVAL; no whole number: a RangeError.
   */
  timeoutMs?: number;
  /** Aborting it stops the wait within 20 ms: the promise rejects with code LJ_EUSER. */
  signal?: AbortSignal;
  /** The first sleep between tries (0: 50 ms), doubled up to pollMaxMs (0: 1 s). */
  pollMinMs?: number;
  pollMaxMs?: number;
  gcloudTimeoutMs?: number;
}

/**
 * acquireLock, tried again on a worker thread while a live holder keeps the lock,
 * its holder is unknown or a race is lost; a holder provably gone is broken at once.
 * Resolves with the first acquisition, or the last try's outcome (lock null) when
 * timeoutMs ran out; rejects with code LJ_EUSER when signal aborts (nothing of ours
 * left in the store), with the store's error at once (a write whose outcome is
 * unknown, LJ_EUNKNOWN, is never tried again), and for bad arguments (a TypeError,
 * code LJ_EINVAL, for a wrong type). Judging is this machine's with gcloud on PATH:
 * describe and here are acquireLock's only.
 */
export declare function acquireLockWait(store: Store, key: string, options: AcquireWaitOptions): Promise<Acquisition>;

/** The rules a plan judges by: one shape for every call that judges steps. A field left out takes the library's default. */
export interface Rules {
  /** The node whose keys are judged (a plan requires it). */
  node?: string;
  /** The caller's owner token; left out, none is named (and the default rule, by-owner, is provably-dead). */
  owner?: string;
  /** A step with no owner started before it is ended; default selfPid's start. */
  before?: Date|bigint;
  /** Default the clock. bigint: nanoseconds since the epoch. */
  now?: Date|bigint;
  /** How long an asker waits; default an hour (3600000). */
  boundMs?: number;
  rule?: 'by-owner'|'not-self'|'provably-dead';
  startToleranceMs?: number;
  /** A running step started less than this ago is left, whoever owns it ("under-min-age"); default none. */
  minAgeMs?: number;
  /** Whose owner token "self" is when no owner is named, and whose start the default before is; default 0, this process. */
  selfPid?: number;
}

export interface StepPlanOptions extends Rules {
  node: string;
  threads?: number;
}

/** What the library makes of Rules, as a plan resolves them. */
export interface ResolvedRules {
  readonly rule: 'not-self'|'provably-dead';
  /** The owner token "self" is. */
  readonly owner: string;
  /** The rule chosen and why, as a person reads it. */
  readonly why: string;
}

/** The rule chosen, the owner token and why; throws code LJ_EINVAL for rules a plan refuses. */
export declare function resolveRules(rules: Rules): ResolvedRules;

export interface StepPlanSummary {
  readonly ends: number;
  readonly deletes: number;
  readonly leaves: number;
  readonly noStep: number;
  readonly otherNode: number;
  readonly malformed: number;
}

/**
 * The plan of `leasejudge step plan` over JSON lines {"key","revision","value"}: one
 *  {"key","action","why"} line per entry.
 */
export declare function planStepLines(
    input: string|Uint8Array,
    options: StepPlanOptions,
    ): {readonly lines: Buffer; readonly summary: StepPlanSummary};

/** libleasejudge's version, "MAJOR.MINOR.PATCH". */
export declare const version: string;
