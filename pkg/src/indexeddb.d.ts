// ---------------------------------------------------------------------------
// leasehold/indexeddb: a durable job queue over IndexedDB, shared by every page and worker
// of one origin, worked by leasehold runners with fenced leases.
// ---------------------------------------------------------------------------

/** What `connect` takes. */
export interface ConnectOptions {
  /** The queue set: the IndexedDB database `leasehold:NAME` of this origin. A non-empty string. */
  readonly name: string;
  /**
   * The durability of each transaction: `'strict'` flushes every commit to disk before it
   * answers (an OS crash or power cut loses nothing acknowledged; slower), `'relaxed'` (what
   * Chromium does by default) survives the tab and the browser closing. Default: the browser's.
   */
  readonly durability?: 'default' | 'strict' | 'relaxed' | undefined;
}

/** A queue over IndexedDB: the {@link Queue} API, and its name. */
export interface IndexedDbQueue extends Queue {
  /** The `name` it was connected with. */
  readonly name: string;
  /**
   * As {@link Queue.pause}, and a queue nothing was enqueued to yet can be paused too (its
   * first jobs then wait for the resume; an offline outbox pauses before its first request);
   * `resume` of such a queue does nothing.
   */
  pause(queue: string): Promise<boolean>;
}

/**
 * Opens (creating on first use) the queue set `name` of this origin. In a browser it loads
 * the runner's WebAssembly module first (`init()` from `leasehold`: call that yourself first
 * where a bundler needs the .wasm URL). In Node.js there is no IndexedDB unless something
 * provides a global `indexedDB` (such as the `fake-indexeddb` package, for tests).
 * @throws TypeError when `options` is not an object, `name` is not a non-empty string, an
 *   option is unknown (named), or `durability` is not one of its values.
 * @throws QueueUnavailableError naming why IndexedDB cannot be used here.
 */
export declare function connect(options: ConnectOptions): Promise<IndexedDbQueue>;

/**
 * IndexedDB cannot be used: there is none in this context, the browser refused to open the
 * database (private browsing, storage disabled or full, an opaque origin such as file://),
 * another page holds an older version open and blocks the upgrade, or the database was made by
 * a newer version of leasehold. The message names which; `cause` is the browser's error.
 */
export declare class QueueUnavailableError extends Error {
  readonly name: 'QueueUnavailableError';
  readonly code: 'QUEUE_UNAVAILABLE';
}

/**
 * A refused queue operation; nothing was changed. `code`: `UNKNOWN_JOB` (no such id),
 * `JOB_STATE` (cancel of a finished job, retry of one that is not dead or cancelled), `QUEUE_CLOSED`
 * (the connection was closed, by `close()`, because another page opened a newer version, or
 * because the database was deleted: the message says which).
 */
export declare class QueueError extends Error {
  readonly name: 'QueueError';
  readonly code: 'UNKNOWN_JOB' | 'JOB_STATE' | 'QUEUE_CLOSED';
}

/** The reason a handler's signal aborts with when its job is cancelled. */
export declare class JobCancelledError extends Error {
  readonly name: 'JobCancelledError';
  readonly code: 'JOB_CANCELLED';
  /** The job's id. */
  readonly job: number;
}
