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

