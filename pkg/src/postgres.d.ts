// ---------------------------------------------------------------------------
// leasehold/postgres: the durable job queue over PostgreSQL through a node-postgres pool,
// sharing its tables and statements with the Rust store and the `leasehold` command-line
// tool (jobs queued by any of them are worked by any).
// ---------------------------------------------------------------------------

/** What `connect` takes besides the pool. */
export interface PostgresConnectOptions {
  /**
   * Whether `connect` brings the queue's tables up to date (the Rust store's migrations, in
   * one transaction under an advisory lock). Default true. With false, a database whose
   * tables are missing or older is refused with a `LeaseholdSchemaError` saying what to do.
   */
  readonly migrate?: boolean | undefined;
}

/** The shape `connect` recognises as a node-postgres pool (`new pg.Pool(...)`): any copy of `pg`. */
export interface PgPoolLike {
  query(...args: any[]): any;
  connect(...args: any[]): any;
  end(...args: any[]): any;
  readonly totalCount: number;
  readonly idleCount: number;
}

/**
 * The queue over `pool` (a `pg.Pool` of at least 2 connections, recognised by its shape). Statements run as named
 * prepared statements on the pool's connections; while some `work` runs, one connection is
 * held for LISTEN (wake-ups from any process's enqueue). `close()` leaves the pool open.
 * @throws TypeError when `pool` is not a pool (a `pg.Client` is named as such) or an option is unknown;
 *   RangeError when the pool allows fewer than 2 connections.
 * @throws LeaseholdSchemaError when the database's queue tables are newer than this package
 *   knows, were not made by leasehold, or (with `migrate: false`) are missing or older.
 */
export declare function connect(pool: PgPoolLike, options?: PostgresConnectOptions): Promise<Queue>;

/** A database whose queue tables this package cannot use as they are; the message says why and what to do. */
export declare class LeaseholdSchemaError extends Error {
  readonly name: 'LeaseholdSchemaError';
}

// <esm-only>
declare const postgres: { connect: typeof connect; LeaseholdSchemaError: typeof LeaseholdSchemaError };
export default postgres;
// </esm-only>
