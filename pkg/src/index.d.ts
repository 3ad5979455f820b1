/**
 * leasehold: durable job loops. `createJobRunner` claims work, performs it
 * under a lease renewed by heartbeats, and aborts the work when the lease is
 * lost. The job runner API of the TypeScript runner leasehold reimplements
 * (code written for it works by changing the import), plus `heartbeatSkewMs`,
 * the `item` ordinal on per-item events, and `lapsed`.
 */

/** The `code` of a {@link JobClaimLostError}. */
export declare const JOB_CLAIM_LOST: 'CLAIM_LOST';

/**
 * Claim attempts one pass may make when `batchLimit` is not given: 25. Read from the
 * WebAssembly module: outside Node.js it is `undefined` until {@link init} has resolved.
 */
export declare const DEFAULT_JOB_BATCH_LIMIT: number;

/**
 * The reason an item's `signal` is aborted with: a renewal answered `false`
 * (another process took the claim), or, when `lapsed` is true, renewals
 * stopped confirming in time (supervised renewals decided before the lease
 * went stale). Work that observes it should stop without settling the item.
 */
export declare class JobClaimLostError extends Error {
  constructor(job: string, lapsed?: boolean);
  readonly code: 'CLAIM_LOST';
  /** The runner's `name`. */
  readonly job: string;
  readonly name: 'JobClaimLostError';
  /** True when supervision lapsed the claim rather than a renewal answering false. */
  readonly lapsed: boolean;
}

/** Exponential backoff after passes that raised. Spans in milliseconds. */
export interface JobBackoff {
  /** Delay after the first raising pass, ms. */
  readonly initialMs: number;
  /** Ceiling of the delay, ms. */
  readonly maxMs: number;
  /** Growth per further raising pass (values under 1 count as 1). */
  readonly multiplier: number;
}

/**
 * `{ initialMs: intervalMs, maxMs: max(intervalMs, min(60000, intervalMs × 10)), multiplier: 2 }`.
 */
export declare function jobBackoff(intervalMs: number): JobBackoff;

/** What one pass did. Every claimed item is counted in exactly one of the last three. */
export interface JobPassReport {
  readonly claimed: number;
  readonly performed: number;
  readonly failed: number;
  readonly claimLost: number;
}

/**
 * The trace a pass emits (only passes that claimed something). `at` is a
 * `now()` reading in ms, truncated; `item` is the item's ordinal in its pass
 * (0-based, claim order).
 */
export type JobEvent =
  | { readonly type: 'pass-start'; readonly name: string; readonly at: number }
  | {
      readonly type: 'pass-end';
      readonly name: string;
      readonly at: number;
      readonly report: JobPassReport;
      /** The delay actually scheduled before the next pass, ms (at most 2^31 − 1). */
      readonly nextDelayMs: number;
    }
  | { readonly type: 'claimed'; readonly name: string; readonly at: number; readonly item: number }
  | { readonly type: 'claim-failed'; readonly name: string; readonly at: number; readonly error: unknown }
  | {
      readonly type: 'performed';
      readonly name: string;
      readonly at: number;
      readonly item: number;
      readonly durationMs: number;
    }
  | {
      readonly type: 'item-failed';
      readonly name: string;
      readonly at: number;
      readonly item: number;
      readonly error: unknown;
    }
  | { readonly type: 'heartbeat'; readonly name: string; readonly at: number; readonly item: number }
  | {
      readonly type: 'heartbeat-failed';
      readonly name: string;
      readonly at: number;
      readonly item: number;
      readonly error: unknown;
    }
  | {
      readonly type: 'claim-lost';
      readonly name: string;
      /** The send time of the renewal that answered false, or the time supervision lapsed the claim. */
      readonly at: number;
      readonly item: number;
      readonly lapsed: boolean;
      /** Present when `lapsed`: how long the lease went unconfirmed, ms. */
      readonly unconfirmedMs?: number;
    };

/** A logger: only `error` is used (`console` is one). */
export interface JobLogger {
  error(message: string, meta: { module: string; err: unknown }): void;
}

/** The options every runner takes; see {@link JobRunnerOptions} for `heartbeat` and `staleAfterMs`. */
export interface JobRunnerCommonOptions<Claimed> {
  /** The loop's stable id: the `module` of every log line and the `name` of every event. */
  readonly name: string;
  /** Delay between passes, ms (fractions truncated; at least 1). */
  readonly intervalMs: number;
  /**
   * One claim attempt at `at` (ms). `null` or `undefined` ends the pass. May
   * answer a promise or a plain value; throwing or rejecting ends the pass
   * and backs the loop off.
   */
  readonly claim: (at: number) => Promise<Claimed | null | undefined> | Claimed | null | undefined;
  /**
   * The work for one claimed item; `signal` aborts with a {@link JobClaimLostError}.
   * The work must honour its signal: a promise cannot be stopped from outside, so
   * once the claim is lost or lapses nothing ends the work but the work itself,
   * and another process may reclaim the item `heartbeatSkewMs` after the lapse at
   * the earliest (the lease leaves no exit grace in JS). Stop at once on `abort`.
   */
  readonly perform: (claimed: Claimed, signal: AbortSignal) => Promise<unknown> | unknown;
  /**
   * Renewal cadence, ms. Default `max(250, ⌊staleAfterMs / 3⌋)`, at least 1;
   * with a `heartbeat` it must be under half of `staleAfterMs`.
   */
  readonly heartbeatEveryMs?: number | undefined;
  /**
   * Skew allowance of supervised renewals, ms (an option this package adds). Default
   * `⌊heartbeatEveryMs / 2⌋`, above 0; `staleAfterMs − heartbeatEveryMs − heartbeatSkewMs − 1`
   * (the write tolerance) must stay above 0.
   */
  readonly heartbeatSkewMs?: number | undefined;
  /** Absent: a raising pass waits `intervalMs`. */
  readonly backoff?: JobBackoff | undefined;
  /** Claim attempts per pass. Default 25, at least 1. */
  readonly batchLimit?: number | undefined;
  /** Items performed at once. Truncated; not a safe integer means 1; clamped to 1..64. Default 1. */
  readonly concurrency?: number | undefined;
  /**
   * The logger (`console`, or any object with an `error` method), or a function answering
   * the logger to use, called at each log line. Default: `console`.
   */
  readonly logger?: JobLogger | (() => JobLogger) | undefined;
  /** The clock, ms. Default `Date.now`. Fractions are truncated. */
  readonly now?: (() => number) | undefined;
  /** Trace sink; a sink that throws costs the pass nothing. With none, no event is built. */
  readonly onEvent?: ((event: JobEvent) => void) | undefined;
}

/** A runner whose claims are renewed: `staleAfterMs` is required. */
export interface JobRunnerOptionsWithHeartbeat<Claimed> extends JobRunnerCommonOptions<Claimed> {
  /**
   * Renews the claim at `at` (ms), answering whether the renewal landed.
   * `false` means the claim is lost; throwing leaves the lease as it was.
   */
  readonly heartbeat: (claimed: Claimed, at: number) => Promise<boolean> | boolean;
  /** How long a claim survives without a renewal, ms. */
  readonly staleAfterMs: number;
}

/** A runner whose claims are held by wall clock alone: `staleAfterMs` only sets the default `heartbeatEveryMs`. */
export interface JobRunnerOptionsWithoutHeartbeat<Claimed> extends JobRunnerCommonOptions<Claimed> {
  readonly heartbeat?: undefined;
  /** How long a claim survives without a renewal, ms. Optional without a `heartbeat`. */
  readonly staleAfterMs?: number | undefined;
}

/**
 * What `createJobRunner` takes: `staleAfterMs` is required with a `heartbeat` and optional
 * without one, as the runtime checks.
 */
export type JobRunnerOptions<Claimed> = JobRunnerOptionsWithHeartbeat<Claimed> | JobRunnerOptionsWithoutHeartbeat<Claimed>;

declare global {
  interface SymbolConstructor {
    /** The symbol `await using` calls (explicit resource management), for TypeScript libs older than it. */
    readonly asyncDispose: unique symbol;
  }
}

export interface JobRunner {
  readonly name: string;
  /** Starts the loop with an immediate pass, then one per delay. A second start does nothing. */
  start(): void;
  /** One pass; joins the pass in flight rather than overlapping it. */
  tick(): Promise<JobPassReport>;
  /** Idle: one pass now. During a pass: exactly one follow-up pass after it, however many wakes arrive. */
  wake(): void;
  /** Ends the loop and drops a pending follow-up; the pass in flight drains. */
  stop(): void;
  /** Stops and waits for the pass in flight. The runner can start again. */
  quiesce(): Promise<void>;
  /** Quiesces for good: later `start`, `tick` and `wake` do nothing; `tick` answers an idle report. */
  dispose(): Promise<void>;
  /** `dispose()`, for `await using runner = createJobRunner(…)` (where the runtime has the symbol). */
  [Symbol.asyncDispose](): Promise<void>;
}

/**
 * Creates a runner.
 * @throws TypeError naming the option when an option has the wrong kind of value or is not a finite number.
 * @throws RangeError naming the option when a number is out of range.
 */
export declare function createJobRunner<Claimed>(options: JobRunnerOptions<Claimed>): JobRunner;

/* The trace ring: createJobTraceSink and resumeJobTrace. */

/** How a claimed item ended: `unsettled` when its pass ended (or was abandoned) before it reported. */
export type JobTraceOutcome = 'performed' | 'failed' | 'claim-lost' | 'unsettled';

/** One claimed item inside a {@link JobTraceSpan}. Times are the runner's `now()` readings, ms. */
export interface JobTraceItemSpan {
  /** The item's ordinal in its pass (0-based, claim order). */
  readonly item: number;
  /** When its claim answered. */
  readonly start: number;
  /** When its outcome was reported (the pass end when unsettled). */
  readonly end: number;
  /** The runner's own duration for a performed item; `end − start` otherwise. */
  readonly durationMs: number;
  readonly outcome: JobTraceOutcome;
  /** Renewals that answered `true`. */
  readonly heartbeats: number;
  /** Renewals that raised. */
  readonly heartbeatFailures: number;
  /** For a lost claim: it lapsed under supervision rather than a renewal answering `false`. */
  readonly lapsed: boolean;
  /**
   * A failed item's error as text (at most 512 bytes): a string as it is, an `Error` as
   * `String(error)` (`"Error: boom"`), another value as JSON when it has a JSON form.
   */
  readonly error: string | null;
}

/** One pass that claimed something. */
export interface JobTraceSpan {
  /** The runner's `name`. */
  readonly name: string;
  /** The pass's `pass-start` time, ms. */
  readonly start: number;
  /** The pass's `pass-end` time, ms. */
  readonly end: number;
  readonly report: JobPassReport;
  /** The delay scheduled after the pass, ms (0 for a pass abandoned without its pass-end). */
  readonly nextDelayMs: number;
  /** The error text of a claim that raised during the pass. */
  readonly claimError: string | null;
  /** One span per claimed item, in claim order. */
  readonly items: JobTraceItemSpan[];
}

/** A ring as saved: what `sink.save()`, `sink.toJSON()` and `JSON.stringify(sink)` give. */
export interface SavedJobTrace {
  /** The saved format's version: 1. */
  readonly version: 1;
  /** The most spans the ring keeps. */
  readonly capacity: number;
  /** Spans dropped because the ring was full, over the ring's life. */
  readonly dropped: number;
  /** The finished spans, oldest first (passes still open are not saved). */
  readonly spans: JobTraceSpan[];
}

export interface JobTraceOptions {
  /** The most spans kept; the oldest goes first. An integer from 1 to 2^32 − 1; default 100 (resuming: the saved one). */
  readonly capacity?: number | undefined;
  /** Called with each span as it is finished; a callback that throws costs the runner nothing. */
  readonly onSpan?: ((span: JobTraceSpan) => void) | undefined;
}

/**
 * A runner's `onEvent`: records each pass that claimed something as a span in a bounded
 * ring. Calling it never throws (an event that is not a runner event is ignored); a pass that
 * claimed nothing costs the ring nothing. One sink can serve several runners.
 */
export interface JobTraceSink {
  (event: JobEvent): void;
  /** The most spans kept. */
  readonly capacity: number;
  /** Spans dropped because the ring was full, over the ring's life (saved ones included). */
  readonly dropped: number;
  /** Finished spans held. */
  readonly size: number;
  /** Passes that started and have not ended. */
  readonly openPasses: number;
  /** The finished spans, oldest first (fresh plain objects). */
  spans(): JobTraceSpan[];
  /** The ring as saved: plain data for `JSON.stringify`, to give `resumeJobTrace` later. */
  save(): SavedJobTrace;
  /** As `save()`, so `JSON.stringify(sink)` is the saved ring. */
  toJSON(): SavedJobTrace;
  /**
   * Frees the ring's memory now (a sink that is only dropped is freed when collected). Later
   * events are ignored and reads throw. Also `sink[Symbol.dispose]` where the runtime has it.
   */
  dispose(): void;
}

/**
 * A trace sink over an empty ring.
 * @throws TypeError naming the option when `options` or an option has the wrong kind of value (`capacity` not finite).
 * @throws RangeError when `capacity` is not an integer from 1 to 2^32 − 1.
 */
export declare function createJobTraceSink(options?: JobTraceOptions): JobTraceSink;

/**
 * A trace sink that goes on from a saved ring (the object `save()` gave, its JSON text, or a sink
 * itself, read as `JSON.stringify` shows it), so a restarted process keeps its recent history.
 * With a smaller `capacity` the oldest spans go.
 * @throws TypeError when `saved` is not an object or string, reading it throws (a getter, a cycle),
 *   it is not JSON, or not the saved shape (the message gives the path, e.g.
 *   `saved.spans[3].items[1].outcome`, and what is wrong there).
 * @throws RangeError for another format `version`, a saved `capacity` of 0, or a bad `capacity` option.
 */
export declare function resumeJobTrace(
  saved: SavedJobTrace | JobTraceSink | string,
  options?: JobTraceOptions,
): JobTraceSink;

// <esm-only> (scripts/build-pkg.sh drops this block from the CommonJS view, index.d.ts)
declare const leasehold: {
  createJobRunner: typeof createJobRunner;
  jobBackoff: typeof jobBackoff;
  DEFAULT_JOB_BATCH_LIMIT: typeof DEFAULT_JOB_BATCH_LIMIT;
  JOB_CLAIM_LOST: typeof JOB_CLAIM_LOST;
  JobClaimLostError: typeof JobClaimLostError;
  heartbeatLoop: typeof heartbeatLoop;
  runSupervised: typeof runSupervised;
  leaseLiveness: typeof leaseLiveness;
  sameHostIncarnation: typeof sameHostIncarnation;
  leasePolicy: typeof leasePolicy;
  LEASE_LOST: typeof LEASE_LOST;
  LeaseLostError: typeof LeaseLostError;
  createJobTraceSink: typeof createJobTraceSink;
  resumeJobTrace: typeof resumeJobTrace;
  init: typeof init;
  initSync: typeof initSync;
  initTrace: typeof initTrace;
};
export default leasehold;
// </esm-only>

// ---------------------------------------------------------------------------
// Run leases: heartbeatLoop, runSupervised,
// leaseLiveness, sameHostIncarnation, leasePolicy. Every decision is the
// core's; spans and instants are whole milliseconds (fractions truncated).
// ---------------------------------------------------------------------------

/** The `code` of a {@link LeaseLostError}. */
export declare const LEASE_LOST: 'LEASE_LOST';

/**
 * One incarnation of one process on one host. Handed to
 * the store as given; only `hostId` is read here (by {@link sameHostIncarnation}).
 */
export interface OwnerId {
  /** A stable name of the host; two owners are on the same host exactly when these are equal. */
  readonly hostId: string;
  /** The process id in that host's process namespace. */
  readonly pid: number;
  /** Unique per incarnation. */
  readonly nonce: string;
}

/**
 * The four spans that govern a lease, ms. A field
 * left out takes its default; a key close to a field's name (`staleAfterMS`) is refused
 * with a `TypeError` naming the field. The set must keep these relations, or it is
 * refused with a `RangeError` naming the one broken:
 * 1. every span is positive;
 * 2. `staleAfterMs >= 2 × heartbeatIntervalMs` (one missed pulse must not make a live owner stealable);
 * 3. `writeToleranceMs + heartbeatIntervalMs + skewAllowanceMs < staleAfterMs` (the owner decides to
 *    lapse — the deadline plus one reconfirmation bounded by an interval — at least the skew allowance
 *    before a peer may steal).
 * A `writeToleranceMs` under one interval is accepted with a warning (every renewal becomes a reconfirmation).
 */
export interface LeasePolicyInput {
  /** How often the owner pulses, and the bound on the one reconfirmation. Default 2000. */
  readonly heartbeatIntervalMs?: number | undefined;
  /** How far the owner's clock may run behind a peer's. Default 1000. */
  readonly skewAllowanceMs?: number | undefined;
  /** How old a persisted heartbeat must be before a peer may steal the run. Default 15000. */
  readonly staleAfterMs?: number | undefined;
  /** How long the owner works on through failing or stalled renewals, from the send time of the last confirmed one. Default 11000. */
  readonly writeToleranceMs?: number | undefined;
}

/** A checked lease policy, every field filled in, with the warnings of a safe but wasteful set. */
export interface LeasePolicy {
  readonly heartbeatIntervalMs: number;
  readonly skewAllowanceMs: number;
  readonly staleAfterMs: number;
  readonly writeToleranceMs: number;
  /** Messages for a safe but wasteful set (usually empty). */
  readonly warnings: readonly string[];
}

/**
 * Checks a lease policy the way {@link heartbeatLoop} does and answers it with
 * the defaults filled in. `leasePolicy()` answers the defaults.
 * @throws TypeError naming the field when it is not a finite number.
 * @throws RangeError naming the field when it is negative, or the relation the set breaks.
 */
export declare function leasePolicy(policy?: LeasePolicyInput | null): LeasePolicy;

/**
 * How a store answers a fenced write: `'Updated'` (or a tagged `{ _tag: 'Updated' }`)
 * when it landed; anything else is a lost fence (e.g. `'LostToNewerToken'`).
 * Throwing or rejecting means the store could not answer: the lease is as it was.
 */
export type FenceOutcome = 'Updated' | 'LostToNewerToken' | 'LostNotRunning' | 'LostMissing' | string | { readonly _tag: string };

/** The two fenced writes that keep a run's lease. */
export interface LeaseStore<Owner = OwnerId> {
  /** One pulse: renew `runId`'s lease for `owner`, stamping the heartbeat with `nowMs` (the send time). */
  heartbeat(runId: string, owner: Owner, nowMs: number): Promise<FenceOutcome> | FenceOutcome;
  /**
   * The one reconfirmation at the write-tolerance deadline: like `heartbeat`, but it must also answer a
   * lost fence while a claim on the run is pending. It may run while a `heartbeat` write hangs.
   */
  reconfirm(runId: string, owner: Owner, nowMs: number): Promise<FenceOutcome> | FenceOutcome;
}

/** A logger: `warn` is used where it exists, else `error`. */
export interface LeaseLogger {
  warn?(message: string, meta: Record<string, unknown>): void;
  error(message: string, meta: Record<string, unknown>): void;
}

export interface HeartbeatLoopOptions<Owner = OwnerId> {
  readonly runId: string;
  /** The owner whose lease is kept; passed to the store as given. */
  readonly owner: Owner;
  readonly store: LeaseStore<Owner>;
  /**
   * After the reconfirmation renewed the lease, called with how long it had
   * gone unconfirmed, ms. Bounded by the budget the renewal left: throwing, rejecting, or still running
   * when it is spent lapses the lease.
   */
  readonly onReconfirm?: ((unconfirmedMs: number) => Promise<unknown> | unknown) | undefined | null;
  /**
   * When the lease lapsed, called once with how long it went unconfirmed, ms, and
   * awaited before the signal aborts. Not called on a lost fence.
   */
  readonly onLapse?: ((unconfirmedMs: number) => Promise<unknown> | unknown) | undefined | null;
  /** Default: (2000, 1000, 15000, 11000). Checked before the store is touched. */
  readonly policy?: LeasePolicyInput | undefined | null;
  /** A logger, or a function answering one at each line (as `createJobRunner`'s). Default `console`. */
  readonly logger?: LeaseLogger | (() => LeaseLogger) | undefined | null;
  /** The clock, ms. Default `Date.now()`. */
  readonly now?: (() => number) | undefined | null;
}

/** How a lease ended: its fence was lost (the store's answer, and the send time of the call that got it). */
export interface LeaseLost {
  readonly type: 'lost';
  readonly outcome: unknown;
  readonly at: number;
}

/** How a lease ended: it lapsed after going `unconfirmedMs` without a confirmed renewal. */
export interface LeaseLapsed {
  readonly type: 'lapsed';
  readonly unconfirmedMs: number;
}

/** What `ended` resolves to: the lease ended, or `stop()` was called first. */
export type LeaseEnd = LeaseLost | LeaseLapsed | { readonly type: 'stopped' };

/** A running {@link heartbeatLoop}. */
export interface HeartbeatLoop {
  /** Resolves (never rejects) when the lease is lost or lapses, or with `{ type: 'stopped' }` after `stop()`. */
  readonly ended: Promise<LeaseEnd>;
  /** Aborted, with a {@link LeaseLostError}, the moment the lease is lost or lapses (not on `stop()`). */
  readonly signal: AbortSignal;
  /** Ends supervision: no more store calls; answers still on their way are ignored. */
  stop(): void;
}

/**
 * The reason a lease's `signal` is aborted with. `lapsed` tells a lapse from a lost fence;
 * `outcome` (lost) or `unconfirmedMs` (lapsed) says more.
 */
export declare class LeaseLostError extends Error {
  constructor(runId: string, end: LeaseLost | LeaseLapsed);
  readonly name: 'LeaseLostError';
  readonly code: 'LEASE_LOST';
  readonly runId: string;
  readonly lapsed: boolean;
  /** Present when the fence was lost: the store's answer. */
  readonly outcome?: unknown;
  /** Present when the lease lapsed. */
  readonly unconfirmedMs?: number;
}

/**
 * Keeps `runId`'s lease for `owner` until it is lost or lapses.
 * Pulses one `heartbeatIntervalMs` after the start and after each pulse completes; a lost fence
 * ends it at once; failing writes are tolerated (warned once per outage) until the deadline,
 * `writeToleranceMs` after the send time of the last confirmed renewal, where one `reconfirm`
 * bounded by one interval decides: renewed goes on (`onReconfirm`), otherwise `onLapse` and the end.
 * Its timers never keep a Node.js process alive.
 * @throws TypeError naming the option when an option has the wrong kind of value, or a key
 *   is close to an option's name but not it (`Policy`, `onlapse`).
 * @throws RangeError naming the field or the relation when the policy is unsafe.
 */
export declare function heartbeatLoop<Owner = OwnerId>(options: HeartbeatLoopOptions<Owner>): HeartbeatLoop;

/** What {@link runSupervised} answers: the work's value, or how the lease ended first. */
export type Supervised<T> = { readonly type: 'finished'; readonly value: T } | LeaseLost | LeaseLapsed;

/**
 * Runs `work(signal)` under a {@link heartbeatLoop}: whichever ends first ends both. The work
 * resolving stops the loop and answers `{ type: 'finished', value }`; the work rejecting while the
 * lease holds stops the loop and rejects. The lease ending aborts `signal` and answers how it ended,
 * once the work has settled (so nothing it started is still running).
 * @throws TypeError when `work` is not a function, and as {@link heartbeatLoop} throws; `work` is then not called.
 */
export declare function runSupervised<T, Owner = OwnerId>(
  work: (signal: AbortSignal) => Promise<T> | T,
  options: HeartbeatLoopOptions<Owner>,
): Promise<Supervised<T>>;

/** What a liveness check knows beyond the recorded owner. */
export interface LivenessContext<Owner = OwnerId> {
  readonly claimant: Owner;
  /** The owner's last persisted heartbeat, ms; `null`: none recorded. */
  readonly heartbeatAtMs: number | null;
  /** The reading the arbitration is made against, ms. */
  readonly nowMs: number;
}

/** Is the recorded owner of a stale run still working? `true` refuses the takeover. */
export type LivenessCheck<Owner = OwnerId> = (expectedOwner: Owner, context: LivenessContext<Owner>) => boolean;

/**
 * The lease-only liveness check: alive while `heartbeatAtMs >= nowMs - staleAfterMs`
 * (default 15000); no heartbeat is gone; the owner is not consulted.
 * @throws TypeError or RangeError naming `staleAfterMs`; the check throws a TypeError naming a bad context field.
 */
export declare function leaseLiveness<Owner = OwnerId>(staleAfterMs?: number | null): LivenessCheck<Owner>;

/**
 * Whether two owners are on the same host (equal `hostId`s).
 * @throws TypeError when either has no string `hostId`.
 */
export declare function sameHostIncarnation(
  expectedOwner: { readonly hostId: string },
  claimant: { readonly hostId: string },
): boolean;

// ---------------------------------------------------------------------------
// Loading the WebAssembly modules.
// ---------------------------------------------------------------------------

/**
 * Where a WebAssembly module can come from: a URL (or its string) to fetch, a `Response`
 * (e.g. from your own `fetch`), the module's bytes, or a compiled `WebAssembly.Module`
 * (e.g. posted to a worker).
 */
export type WasmSource = string | GlobalInstance<'URL'> | GlobalInstance<'Request'> | GlobalInstance<'Response'> | WasmBytes | WasmModule;

/** The bytes of a `.wasm` file. */
export type WasmBytes = ArrayBuffer | ArrayBufferView;

/**
 * `WebAssembly.Module` where the program's types declare it (the `dom` lib, or a runtime's
 * own), so that these declarations also compile for a Node.js program typed without `dom`.
 */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : never;

/** The instance type of a global class (`URL`, `Request`, `Response`) where the program's types declare it. */
type GlobalInstance<Name extends string> = typeof globalThis extends { [K in Name]: { prototype: infer T } } ? T : never;

/**
 * Loads the runner's WebAssembly module (`leasehold_bg.wasm`, about 38 KiB gzipped). In
 * browsers, workers and other non-Node.js runtimes every function of this package but the
 * error classes and codes throws an `Error` until it has resolved. Without `input`, the
 * `.wasm` beside the package's `dist/browser.mjs` is fetched (bundlers that follow
 * `new URL(…, import.meta.url)` emit it); with one, that source. Calling it again does
 * nothing more. In Node.js the module was compiled when the package loaded: it resolves
 * at once.
 * @throws (rejects) what fetching or compiling the module throws; `init` can then be called again.
 */
export declare function init(input?: WasmSource | Promise<WasmSource>): Promise<void>;

/**
 * Loads the runner's module synchronously from its bytes or a compiled `WebAssembly.Module`
 * (browsers allow synchronous compilation of small modules only off the main thread:
 * prefer `init` there). Does nothing in Node.js or once loaded.
 * @throws TypeError when `module` is missing; what `WebAssembly.Module` throws for bad bytes.
 */
export declare function initSync(module: WasmBytes | WasmModule): void;

/**
 * Loads the trace ring's module (`leasehold_trace_bg.wasm`, about 52 KiB gzipped), which
 * {@link createJobTraceSink} and {@link resumeJobTrace} need; `input` as for {@link init}.
 * Outside Node.js they throw an `Error` until it has resolved; a page that never calls it
 * never fetches that module. In Node.js the module is loaded by the first trace sink and
 * this resolves at once.
 */
export declare function initTrace(input?: WasmSource | Promise<WasmSource>): Promise<void>;
