/**
 * `leasehold/eventlog` (Node.js only): a durable event log file and the event pump
 * that derives events into it from your durable journals. The file is the one the
 * native `leasehold` crate writes and reads (same bytes, same recovery rules), so a
 * log written here is read there and the other way round.
 *
 * Units: sequence numbers, watermark positions, counts and byte lengths are
 * numbers; times are milliseconds (`at`: since the Unix epoch); epochs are
 * `bigint`s (nanoseconds since the Unix epoch when the log was created).
 */

/** What every failure of this module throws; `code` says which kind. */
export class EventLogError extends Error {
  readonly name: 'EventLogError';
  /**
   * - `EVENTLOG_BAD_INPUT`: a wrong argument (a missing or read-only folder, a draft
   *   JSON can not hold, a watermark going back, …); nothing was written.
   * - `EVENTLOG_IN_USE`: another writer (in this process or another, Node.js or
   *   native) holds the log (also when this writer's lock was lost, its holder
   *   process killed, and another took the log meanwhile).
   * - `EVENTLOG_IO`: a file operation failed (`op` says which); the log is broken
   *   and the next operation reopens it.
   * - `EVENTLOG_REPLACED`: the broken log had to start anew (`epoch` is the new
   *   one): derive everything again.
   * - `EVENTLOG_ABANDONED`: an append queued behind one that failed; not written.
   * - `EVENTLOG_CLOSED`, `EVENTLOG_MISSING`, `EVENTLOG_CORRUPT` (reading),
   *   `EVENTLOG_SOURCE` (a pump source threw).
   */
  readonly code:
    | 'EVENTLOG_BAD_INPUT' | 'EVENTLOG_IN_USE' | 'EVENTLOG_IO' | 'EVENTLOG_REPLACED' | 'EVENTLOG_ABANDONED'
    | 'EVENTLOG_CLOSED' | 'EVENTLOG_MISSING' | 'EVENTLOG_CORRUPT' | 'EVENTLOG_SOURCE';
  readonly path?: string;
  readonly op?: string;
  readonly epoch?: bigint;
}

/** A JSON value as it comes back from the log. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One event as written: only these fields are kept (any other is refused). */
export interface EventDraft {
  /** The source (journal) it was derived from or emitted for. */
  source: string;
  /** What happened, e.g. `"performed"`. Not empty. */
  type: string;
  /** When, in milliseconds since the Unix epoch (an integer); default: now. */
  at?: number;
  /** Fields that identify the work across events; left out when empty. */
  identity?: Record<string, unknown>;
  /** Free-form details, nested at most 100 levels; left out when null. */
  body?: unknown;
}

/** An event as read back (`identity` and `body` only when present). */
export interface EventRecord {
  source: string;
  at: number;
  type: string;
  identity?: { [key: string]: Json };
  body?: Json;
}

/** Watermarks: source → position (an integer from 0; every entry before it is logged). */
export type Marks = Map<string, number> | Iterable<readonly [string, number]> | Record<string, number>;

export interface EventLogOptions {
  /** The most drafts one append may carry: 1 to {@link MAX_CHUNK_SIZE}; default 1024. */
  maxBatch?: number;
  /**
   * Appends whose frame (the records' JSON and about 20 bytes a record, plus the
   * watermarks) is at most this many bytes are synced with `fs.fdatasyncSync` in the
   * append's own call: the event loop waits for that one sync (about 0.2 ms on an SSD),
   * which is faster than syncing on libuv's thread pool and hearing back. Larger frames
   * sync on the thread pool (`fs.fdatasync`) while the event loop goes on, so the next
   * append's drafts are serialised during the sync. `0`: every append syncs on the thread
   * pool (for a disk whose syncs are slow, so the event loop never waits). An integer from
   * 0, in bytes; default 65536.
   */
  blockingSyncMaxBytes?: number;
  /** Told what open found or did (a torn tail cut, a new log and why); default: stderr. */
  onNotice?: (text: string) => void;
  /**
   * Take the writer lock (default `true`): an exclusive `flock` on `<log>.lock`, the
   * native writer's lock, held by a small `sh` + `flock` (util-linux) helper process.
   * `false` goes without, where `flock` is missing: then you ensure one writer.
   */
  writerLock?: boolean;
}

export interface OpenedEventLog {
  log: EventLog;
  /** The log is new (none was there, or a corrupt one was set aside): derive everything. */
  created: boolean;
  /** Where a corrupt file was kept (`<log>.corrupt-<epoch>`). */
  setAside?: string;
  /** What was found or done, as said to `onNotice`. */
  notice?: string;
  /** The watermarks the log records. */
  marks: Map<string, number>;
}

export interface LogRead {
  /** The log's epoch: a reader holding another one starts again from 0. */
  epoch: bigint;
  /** Records from the asked sequence number on, in order. */
  records: { seq: number; event: EventRecord }[];
  /** Where to resume: one past the last record read. */
  next: number;
  /** The watermarks the log records: from all its frames, those before `from` too. */
  marks: Map<string, number>;
}

export class EventLog {
  /** Not called: a log is opened with {@link EventLog.open}. */
  private constructor();
  /**
   * Opens the log at `path`, recovering it: a torn tail is cut back (epoch kept); a
   * corrupt file is set aside and a new log (new epoch) starts.
   * @throws {EventLogError} `EVENTLOG_BAD_INPUT` (missing or read-only folder, bad
   * options, an unknown option), `EVENTLOG_IN_USE`, `EVENTLOG_IO`.
   */
  static open(path: string, options?: EventLogOptions): Promise<OpenedEventLog>;
  /**
   * Appends `drafts` and the watermarks `marks` in one write and one `fdatasync`;
   * resolves once durable with the sequence numbers given (`first` to `end - 1`).
   * The drafts are serialised at the call, so the next append may be queued while
   * this one syncs.
   * @throws {EventLogError} `EVENTLOG_BAD_INPUT` (a draft JSON can not hold, more
   * drafts than `maxBatch`, a watermark going back), `EVENTLOG_IO`,
   * `EVENTLOG_REPLACED`, `EVENTLOG_ABANDONED`, `EVENTLOG_CLOSED`.
   */
  append(drafts: readonly EventDraft[], marks?: Marks): Promise<{ first: number; end: number }>;
  /**
   * Rewrites the log without the records `keep` answers false for (same sequence
   * numbers, same epoch) and with `marks` as its watermarks (left out: the ones it
   * records; a source `marks` leaves out loses its watermark); resolves how many
   * went. None went: the file, watermarks included, is left as it is.
   * @throws {EventLogError} as `append`.
   */
  compact(keep: (event: EventRecord, seq: number) => boolean, marks?: Marks): Promise<number>;
  /**
   * Checks the file at the path is still this log as its last append left it; one
   * removed, replaced or truncated behind the writer is reopened (kept if it still
   * holds what was written, else set aside and a new log started).
   * @throws {EventLogError} `EVENTLOG_REPLACED` (a new log: derive everything again),
   * `EVENTLOG_IO`, `EVENTLOG_CLOSED`.
   */
  verify(): Promise<void>;
  /** The records from sequence number `seq` on. @throws {EventLogError} */
  readFrom(seq?: number): Promise<LogRead>;
  /** Waits for queued operations, then lets the file and the lock go. */
  close(): Promise<void>;
  readonly path: string;
  readonly maxBatch: number;
  readonly epoch: bigint;
  /**
   * The sequence number the next record gets. Numbers grow with gaps: a reopened log goes on
   * at {@link MAX_CHUNK_SIZE} past its last record, so no number a reader saw is reused.
   */
  readonly head: number;
  /** Records in the log. */
  readonly records: number;
  /** Records compaction dropped since open. */
  readonly dropped: number;
  /** A failed operation left it to be reopened by the next one. */
  readonly broken: boolean;
  readonly closed: boolean;
  /** Bytes of whole frames, header included. */
  readonly byteLength: number;
  readonly marks: Map<string, number>;
}

/**
 * Reads the log at `path` from sequence number `from` (default 0), without a lock:
 * a torn tail ends the read.
 * @throws {EventLogError} `EVENTLOG_MISSING`, `EVENTLOG_CORRUPT`, `EVENTLOG_IO`.
 */
export function readEventLog(path: string, from?: number): LogRead;

/**
 * What the pump derives from: a durable journal you own. Its methods answer at once
 * (not `async`): they are called during the pass, between appends.
 */
export interface EventSource {
  /**
   * Entries committed (durable) so far. It never goes back: a length below the source's
   * watermark (its journal replaced or cut back) derives nothing until it passes the
   * watermark again, and is said once through `onNotice`; remove the source and add it again
   * to derive it from its first entry.
   */
  committedLength(): number;
  /** The drafts of entry `index` (`source` is filled in; `at` defaults to now). */
  derive(index: number): Omit<EventDraft, 'source'>[];
  /** Identity fields every event of the source carries unless the draft has its own. */
  identity?(): Record<string, unknown>;
  /** Whether the source's old events may go (retention). */
  quiet?(): boolean;
  /** Every entry before `position` is logged (durable). */
  logged?(position: number): void;
}

export interface EventPumpOptions {
  path: string;
  sources?: Map<string, EventSource> | Record<string, EventSource>;
  /** Delay from a kick to its pass, ms (default 50). */
  kickDelayMs?: number;
  /** At most this many drafts per append: 1 to {@link MAX_CHUNK_SIZE}; default 1024. */
  chunkSize?: number;
  /** Delay before a failed pass is retried, ms (default 1000). */
  retryAfterMs?: number;
  /** Least time between compactions, ms (default 3,600,000). */
  compactEveryMs?: number;
  /** Records of quiet or removed sources older than this go, ms (default 7 days). */
  retentionMs?: number;
  /**
   * The wall clock, ms since the Unix epoch (default `Date.now`). A `now` that throws or
   * answers no such integer is said once through `onNotice`, and `Date.now()` used where it fails.
   */
  now?: () => number;
  onNotice?: (text: string) => void;
  /** As {@link EventLogOptions.blockingSyncMaxBytes}, for the pump's log. */
  blockingSyncMaxBytes?: number;
  /** As {@link EventLogOptions.writerLock}, for the pump's log. */
  writerLock?: boolean;
}

export interface PumpStatus {
  backfilled: boolean;
  /** The failure reported, while passes keep failing. */
  failing?: string;
  /** Sources waiting for a pass. */
  dirty: string[];
  marks: Map<string, number>;
}

export class EventPump {
  /** @throws {EventLogError} `EVENTLOG_BAD_INPUT` for options that can not work. */
  constructor(options: EventPumpOptions);
  /** `new EventPump(options)` and `open()`. */
  static open(options: EventPumpOptions): Promise<EventPump>;
  /** Opens the log, compacts, derives every source past its watermark. */
  open(): Promise<{ created: boolean; setAside?: string; notice?: string }>;
  /**
   * `source` appended (none: a pass is wanted): derive after `kickDelayMs`. A name no source
   * of this pump has is told once through `onNotice` (naming the pump's sources) and marks
   * nothing; it does not throw, as a kick follows the source's own append. After `close()`, a
   * kick does nothing.
   */
  kick(source?: string): void;
  /**
   * Derives and logs everything committed so far, and checks the log file is still the
   * one written. @throws {EventLogError} when it could not be logged, or the file was
   * replaced (`EVENTLOG_REPLACED`: everything is derived again in the background).
   */
  flush(): Promise<void>;
  /** Appends producer drafts (each naming its source). @throws {EventLogError} */
  emit(drafts: readonly EventDraft[]): Promise<void>;
  /**
   * Registers `source` after open; it derives past the watermark the log records for
   * `name` (a source of an earlier run, not removed since), else from its first entry.
   * @throws {EventLogError} `EVENTLOG_BAD_INPUT` when `name` is already a source.
   */
  addSource(name: string, source: EventSource): Promise<void>;
  /** Logs what is left of `name`, then forgets it. @throws {EventLogError} */
  removeSource(name: string): Promise<void>;
  /** Retention now; resolves how many records went. */
  compact(): Promise<number>;
  readFrom(seq?: number): Promise<LogRead>;
  /**
   * Derives what is left, records the watermarks, closes the log.
   * @throws {EventLogError} when what was left could not be logged (`EVENTLOG_SOURCE`,
   * `EVENTLOG_IO`, …): the log is closed all the same, and the next open derives it again.
   */
  close(): Promise<void>;
  readonly head: { epoch: bigint; head: number; dropped: number; records: number } | undefined;
  readonly backfilled: boolean;
  status(): PumpStatus;
}

/** The most drafts one append may carry (1,048,576). */
export const MAX_CHUNK_SIZE: number;
/** The default chunk size (1,024 drafts). */
export const DEFAULT_CHUNK_SIZE: number;

// <esm-only> (scripts/build-pkg.sh drops this block from the CommonJS view, eventlog.d.ts)
declare const _default: {
  EventLog: typeof EventLog;
  EventPump: typeof EventPump;
  EventLogError: typeof EventLogError;
  readEventLog: typeof readEventLog;
  MAX_CHUNK_SIZE: number;
  DEFAULT_CHUNK_SIZE: number;
};
export default _default;
// </esm-only>
