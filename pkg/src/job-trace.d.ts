// ---------------------------------------------------------------------------
// The trace ring: createJobTraceSink and resumeJobTrace.
// ---------------------------------------------------------------------------

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
