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
   * The signal learns of a lapse when the runner's timer fires: a process resumed from
   * a freeze runs the timers due meanwhile in the order they were due, so a step whose
   * own timer was due first runs before the signal aborts. Writes fenced by the claim's
   * token are refused then; the job queues' handler signals also read the clock.
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
