/**
 * leasehold: durable job loops. `createJobRunner` claims work, performs it
 * under a lease renewed by heartbeats, and aborts the work when the lease is
 * lost. The API is the `@flowdular/sdk` job runner's (seed 000), plus
 * `heartbeatSkewMs`, the `item` ordinal on per-item events, and `lapsed`.
 */

/** The `code` of a {@link JobClaimLostError}. */
export declare const JOB_CLAIM_LOST: 'CLAIM_LOST';

/** Claim attempts one pass may make when `batchLimit` is not given: 25. */
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

/** A logger: only `error` is used. */
export interface JobLogger {
  error(message: string, meta: { module: string; err: unknown }): void;
}

export interface JobRunnerOptions<Claimed> {
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
  /** The work for one claimed item; `signal` aborts with a {@link JobClaimLostError}. */
  readonly perform: (claimed: Claimed, signal: AbortSignal) => Promise<unknown> | unknown;
  /**
   * Renews the claim at `at` (ms), answering whether the renewal landed.
   * `false` means the claim is lost; throwing leaves the lease as it was.
   */
  readonly heartbeat?: ((claimed: Claimed, at: number) => Promise<boolean> | boolean) | undefined;
  /**
   * Renewal cadence, ms. Default `max(250, ⌊staleAfterMs / 3⌋)`, at least 1;
   * with a `heartbeat` it must be under half of `staleAfterMs`.
   */
  readonly heartbeatEveryMs?: number | undefined;
  /**
   * Skew allowance of supervised renewals, ms (ours). Default
   * `⌊heartbeatEveryMs / 2⌋`; `staleAfterMs − heartbeatEveryMs − heartbeatSkewMs` must stay above 0.
   */
  readonly heartbeatSkewMs?: number | undefined;
  /** How long a claim survives without a renewal, ms. Required with a `heartbeat`. */
  readonly staleAfterMs: number;
  /** Absent: a raising pass waits `intervalMs`. */
  readonly backoff?: JobBackoff | undefined;
  /** Claim attempts per pass. Default 25, at least 1. */
  readonly batchLimit?: number | undefined;
  /** Items performed at once. Truncated; not a safe integer means 1; clamped to 1..64. Default 1. */
  readonly concurrency?: number | undefined;
  /** Answers the logger to use, called at each log line. Default: `() => console`. */
  readonly logger?: (() => JobLogger) | undefined;
  /** The clock, ms. Default `Date.now`. Fractions are truncated. */
  readonly now?: (() => number) | undefined;
  /** Trace sink; a sink that throws costs the pass nothing. With none, no event is built. */
  readonly onEvent?: ((event: JobEvent) => void) | undefined;
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
}

/**
 * Creates a runner.
 * @throws TypeError naming the option when an option has the wrong kind of value or is not a finite number.
 * @throws RangeError naming the option when a number is out of range.
 */
export declare function createJobRunner<Claimed>(options: JobRunnerOptions<Claimed>): JobRunner;

declare const leasehold: {
  createJobRunner: typeof createJobRunner;
  jobBackoff: typeof jobBackoff;
  DEFAULT_JOB_BATCH_LIMIT: typeof DEFAULT_JOB_BATCH_LIMIT;
  JOB_CLAIM_LOST: typeof JOB_CLAIM_LOST;
  JobClaimLostError: typeof JobClaimLostError;
};
export default leasehold;
