// ---------------------------------------------------------------------------
// leasehold/pglite: the durable job queue of leasehold/postgres with no server, on PGlite
// (PostgreSQL compiled to WebAssembly): a folder per queue database, one process at a time.
// ---------------------------------------------------------------------------

/** What `connect` takes besides the database. */
export interface PgliteConnectOptions {
  /** Whether `connect` brings the queue's tables up to date. Default true (see `leasehold/postgres`). */
  readonly migrate?: boolean | undefined;
}

/** The shape `connect` recognises as a PGlite instance (`new PGlite(...)` or `await PGlite.create(...)`). */
export interface PGliteLike {
  query(...args: any[]): any;
  exec(...args: any[]): any;
  transaction(...args: any[]): any;
  listen(...args: any[]): any;
}

/**
 * The queue in the folder `dataDir` (created on first use, opened with
 * `PGlite.create(dataDir)` from the installed `@electric-sql/pglite`, closed by the queue's
 * `close()`), or over a PGlite instance the caller made (left open). One queue at a time
 * may open a folder: it holds an exclusive `flock` on `<dataDir>/leasehold-queue.lock` until
 * `close()` or until this process ends (where `sh` and util-linux's `flock` are missing, as on
 * Windows, it opens without one, and keeping to one is yours; PGlite's `memory://` is no folder
 * and takes none).
 * @throws TypeError for anything else, or an unknown option.
 * @throws Error with `code: 'QUEUE_IN_USE'` when another queue, in this process or another,
 * has the folder open; nothing was opened.
 * @throws LeaseholdSchemaError as `leasehold/postgres`'s `connect`.
 */
export declare function connect(target: { readonly dataDir: string } | PGliteLike, options?: PgliteConnectOptions): Promise<Queue>;

/** A database whose queue tables this package cannot use as they are; the message says why and what to do. */
export declare class LeaseholdSchemaError extends Error {
  readonly name: 'LeaseholdSchemaError';
}

// <esm-only>
declare const pglite: { connect: typeof connect; LeaseholdSchemaError: typeof LeaseholdSchemaError };
export default pglite;
// </esm-only>
