// ---------------------------------------------------------------------------
// The job queue API that every store of the package answers (IndexedDB in browsers,
// PostgreSQL and the embedded store in Node.js): enqueue, work, inspect, steer.
// scripts/build-pkg.sh puts these declarations at the top of each store's own types.
// Times are epoch milliseconds; spans are milliseconds and say so in their names.
// ---------------------------------------------------------------------------

import type { JobEvent } from 'leasehold';

/** How one job is queued. Every field is optional. */
export interface EnqueueOptions {
  /** When the job becomes due: a Date or epoch ms (fractions truncated). Exclusive with `delayMs`. Default: now. */
  readonly runAt?: Date | number | undefined;
  /** Due this many ms from now (an integer, at least 0). Exclusive with `runAt`. */
  readonly delayMs?: number | undefined;
  /** Lower runs first; ties go to the earlier due time, then the lower id. An integer in the 32-bit signed range; default 0. */
  readonly priority?: number | undefined;
  /** Claims the job may have in all, at least 1: a fail on the last one, or a lease lost on it, dead-letters the job. Default 25. */
  readonly maxAttempts?: number | undefined;
  /** At most one job per queue and key: a second enqueue with the key answers the first job (`created: false`) and writes nothing. */
  readonly idempotencyKey?: string | undefined;
  /** How long one attempt may run, ms (an integer, at least 1): past it the handler's signal aborts and the attempt fails. */
  readonly timeoutMs?: number | undefined;
}

/** What an enqueue answered: the job's id (a positive safe integer, never reused) and whether this call made it. */
export interface Enqueued {
  readonly id: number;
  /** False when a job with the same `idempotencyKey` was already queued: `id` is that job's. */
  readonly created: boolean;
}

/**
 * Where a job is: `queued` (due, never tried), `scheduled` (not due yet, never tried),
 * `running` (claimed, under a lease: live or stale), `retrying` (queued again with attempts
 * counted: it failed or lost its lease before; due or not), `succeeded`, `dead` (failed on its last attempt, or its lease was lost on
 * it), `cancelled`.
 */
export type JobState = 'queued' | 'scheduled' | 'running' | 'retrying' | 'succeeded' | 'dead' | 'cancelled';

/** One attempt of a job, as its log keeps it. */
export interface JobAttempt {
  /** The fencing token of the claim that started it. */
  readonly token: number;
  /** Who claimed it (a worker's id). */
  readonly owner: string;
  readonly startedAt: number;
  /** When it ended; null while it runs. */
  readonly endedAt: number | null;
  /**
   * `running` (on PostgreSQL and PGlite, the attempt under way), `succeeded`, `failed`, `lease-lost` (taken over after its lease went stale; on PostgreSQL
   * and PGlite also a running attempt ended by `cancel`, its `error` then `cancelled by …`, as
   * the Rust store logs it), `cancelled` (a running attempt ended by `cancel`, on IndexedDB).
   */
  readonly outcome: string;
  /** The failure's message, or why the attempt was ended; null for a success. */
  readonly error: string | null;
}

/** A job as `job(id)` shows it. */
export interface JobRecord {
  readonly id: number;
  readonly queue: string;
  readonly state: JobState;
  /** The payload as stored (JSON data). */
  readonly payload: unknown;
  readonly priority: number;
  /** When it is (or was) due, epoch ms. */
  readonly runAt: number;
  /** Claims so far (a claim handed back unstarted is not counted). */
  readonly attempts: number;
  readonly maxAttempts: number;
  /** What the handler answered, for a succeeded job (JSON data; null when it answered nothing). */
  readonly result?: unknown;
  /** The last failed attempt's error. */
  readonly error?: string | null;
  /**
   * Every attempt, oldest first. On PostgreSQL and PGlite the attempt under way is in it, with
   * outcome `running` and `endedAt` null; on IndexedDB an attempt is in it once it ended.
   */
  readonly attemptsLog?: readonly JobAttempt[];
  /** The key it was queued with (`EnqueueOptions.idempotencyKey`), or null. */
  readonly idempotencyKey?: string | null;
  /** Each attempt's time limit, ms, or null for none. */
  readonly timeoutMs?: number | null;
  /** The fencing token of its latest claim (0 before the first). */
  readonly token?: number;
  /** When it was queued, epoch ms. */
  readonly createdAt?: number;
  /** When it succeeded, was dead-lettered or cancelled, epoch ms; null while it is not finished. */
  readonly finishedAt?: number | null;
  /** Who cancelled it, when and why, for a cancelled job (absent or null otherwise). */
  readonly cancellation?: { readonly at: number; readonly by: string; readonly reason: string | null } | null;
  /** `leasehold/indexeddb`: a running job's lease (its owner and times, epoch ms); null otherwise. */
  readonly lease?: { readonly owner: string; readonly heartbeatAt: number; readonly expiresAt: number } | null;
}

/** Jobs of one queue by state (see {@link JobState}), and whether the queue is paused. */
export interface QueueCounts {
  readonly queue: string;
  readonly paused: boolean;
  readonly queued: number;
  readonly scheduled: number;
  readonly running: number;
  readonly retrying: number;
  readonly succeeded: number;
  readonly dead: number;
  readonly cancelled: number;
}

/** What a handler gets beside the payload. */
export interface WorkContext {
  /**
   * Aborts when this attempt must stop: its claim was taken over (its reason is a
   * `JobClaimLostError`) or lapsed (`lapsed: true`), the job was cancelled (a
   * `JobCancelledError`, `code` `JOB_CANCELLED`), or its `timeoutMs` passed (an `Error` named
   * `TimeoutError`). Stop at once: nothing else ends the work. `Working.dispose()` and `close()` do not
   * abort it: they wait for the handler to answer and record its outcome. `aborted` and
   * `throwIfAborted()` read the clock: checked once the lease lapsed, they say so even in a
   * process resuming from a freeze whose timers have not run yet. Not aborted at a check, the
   * job was this worker's then; an effect made after a freeze between the check and it may be
   * late (the queue's own writes are fenced by `job.token`; fence or make idempotent your own).
   */
  readonly signal: AbortSignal;
  readonly job: {
    readonly id: number;
    readonly queue: string;
    /** The fencing token of this claim. */
    readonly token: number;
    /** Which attempt this is, from 1. */
    readonly attempt: number;
    readonly maxAttempts: number;
  };
  /** Which attempt this is, from 1 (as `job.attempt`). */
  readonly attempt: number;
}

/**
 * The work for one job. What it answers (JSON data, or nothing) completes the job and is kept
 * as its `result`; throwing fails the attempt (queued again after the retry backoff, 1 s
 * doubling up to 1 h, while attempts remain; dead-lettered on the last). Throwing the signal's
 * reason after it aborted writes nothing.
 */
export type JobHandler<Payload = unknown> = (payload: Payload, context: WorkContext) => unknown | Promise<unknown>;

/** How a queue is worked. */
export interface WorkOptions {
  /** Jobs performed at once, 1 to 64. Default 1. */
  readonly concurrency?: number | undefined;
  /**
   * The lease, ms: a job whose owner has not renewed it for this long may be taken over by
   * another worker. Default 30000. Renewals run every `heartbeatMs`.
   */
  readonly staleAfterMs?: number | undefined;
  /** Renewal cadence, ms: an integer, at least 2, under half of `staleAfterMs`. Default `max(250, ⌊staleAfterMs / 3⌋)`. */
  readonly heartbeatMs?: number | undefined;
  /**
   * How often an idle worker looks for due work, ms (enqueues wake it at once). Default 1000.
   * Fractions are truncated, and anything under 1 (0 included) counts as 1: a worker that polls
   * every millisecond, which only a test wants.
   */
  readonly pollMs?: number | undefined;
  /**
   * Jobs one claim takes (one transaction or statement), 1 to 500. Default `concurrency`. A job
   * that waited in its page over 100 ms (or half the skew allowance, `heartbeatMs / 2`, when
   * that is less) is renewed before it starts, as its lease is counted from then.
   */
  readonly pageSize?: number | undefined;
  /**
   * The runner's trace events, as `createJobRunner`'s `onEvent` gets them (`jobEventSpans` of
   * `leasehold/otel` fits; give it `destination: QUEUE`, else its spans are named after the
   * runners, one per slot on PostgreSQL and PGlite: `process QUEUE#3`): an attempt that failed (the handler threw, timed out, or answered
   * what JSON cannot hold) is an `item-failed` with that error, once its failure is recorded;
   * a job that ended with nothing written (cancelled under its handler, or its outcome refused
   * by the fence because another worker holds it) is a `claim-lost` with `lapsed: false`; only
   * a completion that was written is `performed`. Pass reports count them the same way.
   */
  readonly onEvent?: ((event: JobEvent) => void) | undefined;
  /**
   * Where failures are logged (`console` by default): an object with an `error` method, or a
   * function answering one. A failed attempt is logged as `RUNNER work failed` with
   * `{ module, err }`, RUNNER naming the worker: `NAME/QUEUE` on IndexedDB (the connection's
   * name and the queue), `QUEUE#SLOT` on PostgreSQL and PGlite (the queue and the slot, 1 to
   * `concurrency`).
   */
  readonly logger?: { error(message: string, meta: unknown): void } | (() => { error(message: string, meta: unknown): void }) | undefined;
}

declare global {
  interface SymbolConstructor {
    /** The symbol `await using` calls (explicit resource management), for TypeScript libs older than it. */
    readonly asyncDispose: unique symbol;
  }
}

/** A queue being worked. */
export interface Working {
  /**
   * Stops claiming, waits for the running jobs to finish and their outcomes to be written (a
   * finished outcome is never dropped), and hands claimed jobs that had not started back.
   */
  dispose(): Promise<void>;
  /** `dispose()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** A job queue store. Bad arguments are refused with a TypeError or RangeError naming the argument, before anything is written. */
export interface Queue {
  /**
   * Queues a job. `payload` must be JSON data (plain objects, arrays, strings, finite numbers,
   * booleans, null; objects with a `toJSON`): anything else is refused with a TypeError naming
   * where it is (`payload.when is a Map, …`), and nothing is queued. `queue` is 1 to 128
   * bytes of `A-Z a-z 0-9 _ - . :` on every store (a RangeError names what is wrong).
   */
  enqueue(queue: string, payload: unknown, options?: EnqueueOptions): Promise<Enqueued>;
  /** Works `queue` with `handler` until disposed. */
  work<Payload = unknown>(queue: string, handler: JobHandler<Payload>, options?: WorkOptions): Working;
  /** Every queue's jobs by state. */
  counts(): Promise<QueueCounts[]>;
  /** One job, or null when there is no such id. */
  job(id: number): Promise<JobRecord | null>;
  /**
   * Cancels queued or running jobs, all or none (a running one's worker is told to abort, and
   * its later writes are refused). Answers the ids cancelled; an unknown id or a job in another
   * state is refused naming it, and nothing changes: on every store the error's `code` is
   * `UNKNOWN_JOB` (an id names no job) or `JOB_STATE` (a `RangeError` on PostgreSQL and PGlite,
   * a `QueueError` on IndexedDB). `reason`: a string of at most 4,096 bytes
   * (UTF-8) without the NUL character, else a `TypeError` or `RangeError` and nothing changes.
   */
  cancel(ids: number | readonly number[], options?: { readonly reason?: string | undefined }): Promise<number[]>;
  /**
   * Queues dead or cancelled jobs again, due now, with a fresh attempt budget (their log is
   * kept); all or none, refused as `cancel` refuses (`code` `UNKNOWN_JOB` or `JOB_STATE`). A
   * job cancelled while it ran is due once that attempt's lease would have gone stale, if that
   * is later: its worker, which may not have heard the cancel (cut off from the database),
   * stops the work by then, and no other worker starts it before. On PGlite and IndexedDB,
   * where that due time is a reading of the worker's own wall clock, which can step, a worker
   * also starts it only once it has itself seen the job queued again for that lease's stale
   * window on its monotonic clock: up to one window after the retry.
   */
  retry(ids: number | readonly number[]): Promise<number[]>;
  /**
   * Stops claims from `queue` (running jobs finish; enqueues still land). Answers false when it
   * was paused already. A queue with no jobs yet is paused too, ready for its first ones, so a
   * misspelt name is not refused: `counts()` lists it, paused (the `leasehold` command-line
   * tool's `pause` refuses a queue with no job or schedule).
   */
  pause(queue: string): Promise<boolean>;
  /**
   * Lets claims take from `queue` again (and wakes its workers). Answers false when it was not
   * paused (left as it was).
   */
  resume(queue: string): Promise<boolean>;
  /**
   * Disposes this connection's workers (as `Working.dispose`) and closes it; every later call
   * but `close` is refused with `code` `QUEUE_CLOSED`.
   */
  close(): Promise<void>;
}
