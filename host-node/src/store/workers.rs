//! The workers table: each worker records itself, with what it counted
//! since it started, every few seconds ([`crate::worker::WorkerStats`]
//! drives it), so a dashboard or a metrics scrape can list the workers seen
//! and their lease health without asking them.
//!
//! A record is one upsert keyed by the worker's owner nonce (fresh per
//! process start) and queue. Counters are written as totals and merged with
//! the larger of the stored and the written value, so a write repeated, or
//! one that arrives after a newer one, never moves a counter back. Nothing
//! here runs per job: claims and settles do not touch the table.

use leasehold_core::Millis;
use leasehold_core::lease::OwnerId;

use super::rows::DecodeRow;
use super::validate::{self, unsigned, unsigned32};
use super::{Pool, Store, StoreError, StoreResult};

#[cfg(feature = "postgres")]
use leasehold_core::queue::statements::postgres as pg_sql;
#[cfg(feature = "sqlite")]
use leasehold_core::queue::statements::sqlite as lite_sql;

const TABLE: &str = "leasehold_workers";

/// What one worker counted since it started, per queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct WorkerCounters {
    /// Jobs claimed (handed to the handler or waiting in a claimed page).
    pub claimed: u64,
    /// Attempts completed (the job succeeded).
    pub succeeded: u64,
    /// Attempts failed with attempts left (the job was queued again).
    pub failed: u64,
    /// Attempts failed on the job's last attempt (the job was dead-lettered).
    pub dead_lettered: u64,
    /// Renewals of a lease that landed.
    pub renewals: u64,
    /// Claims lapsed under supervision: renewals stopped confirming, so the
    /// worker stopped the work before another could reclaim it.
    pub lapses: u64,
    /// Claims found lost: a renewal or a settle was refused by the fence
    /// because another worker (or a cancel) holds the job now.
    pub losses: u64,
    /// Jobs this worker took over from another owner whose lease had gone
    /// stale.
    pub steals: u64,
}

impl WorkerCounters {
    /// The counters in column order, as bound into SQL (clamped to i64).
    fn columns(&self) -> [i64; 8] {
        [
            self.claimed,
            self.succeeded,
            self.failed,
            self.dead_lettered,
            self.renewals,
            self.lapses,
            self.losses,
            self.steals,
        ]
        .map(|n| i64::try_from(n).unwrap_or(i64::MAX))
    }
}

/// One row of the workers table ([`Store::workers`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerRecord {
    /// The queue it works.
    pub queue: String,
    /// Its owner identity as job leases record it: `host_id`, `pid` and
    /// `nonce` (`start_time` and `boot_id` are not kept here).
    pub owner: OwnerId,
    /// The machine's host name (`uname`), for people; may be empty.
    pub hostname: String,
    /// When it first recorded itself, ms since the Unix epoch (PostgreSQL:
    /// the server's clock).
    pub started_at: Millis,
    /// When it last recorded itself (same clock).
    pub last_seen: Millis,
    /// When it stopped cleanly, if it said so; a worker that died has none
    /// and simply stops being seen.
    pub stopped_at: Option<Millis>,
    /// Its counters as of `last_seen`.
    pub counters: WorkerCounters,
}

/// Whether a record waits for the database, or writes only if it need not.
#[derive(Clone, Copy)]
pub(crate) enum Patience {
    /// As every other write does ([`Store::record_worker`]).
    Wait,
    /// The periodic record, which must never hold up the claims and
    /// renewals it reports on: on SQLite (one connection, the file locked
    /// by each writer) it writes only if the connection is free, and gives
    /// up at once if the file is locked (nothing written; the next record
    /// tries again). PostgreSQL waits as usual: nobody else locks the table.
    IfIdle,
}

/// The binds of the record statement (`workers_record.sql`), in order.
struct Row<'a> {
    queue: &'a str,
    owner: &'a OwnerId,
    hostname: &'a str,
    counters: [i64; 8],
    stopped: bool,
    now: i64,
}

/// Binds a [`Row`] to the record statement of either backend, in the
/// statements' order (`workers_record.sql`).
fn bind_row<'q, DB>(
    query: sqlx::query::Query<'q, DB, DB::Arguments>,
    row: &Row<'q>,
) -> sqlx::query::Query<'q, DB, DB::Arguments>
where
    DB: sqlx::Database,
    &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    bool: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let query = query
        .bind(row.owner.nonce.as_str())
        .bind(row.queue)
        .bind(row.owner.host_id.as_str())
        .bind(i64::from(row.owner.pid))
        .bind(row.hostname)
        .bind(row.now)
        .bind(row.stopped);
    row.counters.iter().fold(query, |query, n| query.bind(*n))
}

impl Store {
    /// Records that `owner` works `queue` now, with `counters` (its totals
    /// since it started) and, when `stopped`, that it stopped cleanly. One
    /// upsert: the first record of an owner and queue stamps `started_at`,
    /// every one moves `last_seen` to `now` (SQLite; PostgreSQL stamps its
    /// own clock) and takes the larger of each stored and given counter.
    /// `stopped` is kept once written.
    ///
    /// # Errors
    /// [`StoreError::InvalidQueueName`], [`StoreError::InvalidOption`] for a
    /// `now` out of range or an empty owner nonce, [`StoreError::Database`].
    pub async fn record_worker(
        &self,
        queue: &str,
        owner: &OwnerId,
        counters: &WorkerCounters,
        stopped: bool,
        now: Millis,
    ) -> StoreResult<()> {
        self.record(queue, owner, counters, stopped, now, Patience::Wait).await.map(drop)
    }

    /// [`Store::record_worker`] with a choice of [`Patience`]: the periodic
    /// record writes only if that holds up nobody; answers whether it wrote.
    pub(crate) async fn record(
        &self,
        queue: &str,
        owner: &OwnerId,
        counters: &WorkerCounters,
        stopped: bool,
        now: Millis,
        patience: Patience,
    ) -> StoreResult<bool> {
        validate::queue_name(queue)?;
        if owner.nonce.is_empty() {
            return Err(StoreError::InvalidOption { option: "owner.nonce", reason: "must not be empty".into() });
        }
        let now_ms = validate::millis("now", now)?;
        let hostname = crate::liveness::owner::host_name().unwrap_or_default();
        let row = Row { queue, owner, hostname: &hostname, counters: counters.columns(), stopped, now: now_ms };
        match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => match patience {
                Patience::Wait => {
                    bind_row(sqlx::query(lite_sql::WORKERS_RECORD.text), &row).execute(pool).await?;
                }
                Patience::IfIdle => return sqlite::record_if_idle(pool, &row).await,
            },
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let _ = patience; // the workers table is locked by nobody else
                bind_row(sqlx::query(pg_sql::WORKERS_RECORD.text), &row).execute(pool).await?;
            }
        }
        Ok(true)
    }

    /// Every worker recorded, by queue, the most recently seen first.
    ///
    /// # Errors
    /// [`StoreError::Database`], [`StoreError::CorruptRow`].
    pub async fn workers(&self) -> StoreResult<Vec<WorkerRecord>> {
        match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => sqlx::query(lite_sql::WORKERS_LIST.text).fetch_all(pool).await?.iter().map(record).collect(),
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => sqlx::query(pg_sql::WORKERS_LIST.text).fetch_all(pool).await?.iter().map(record).collect(),
        }
    }

    /// Deletes the records of workers (of `queue`, or of every queue) last
    /// seen more than `older_than` before `now` (PostgreSQL: before the
    /// database's clock); answers how many.
    ///
    /// # Errors
    /// [`StoreError::InvalidQueueName`], [`StoreError::InvalidOption`] for a
    /// span or instant that does not fit in i64 milliseconds,
    /// [`StoreError::Database`].
    pub async fn purge_workers(&self, queue: Option<&str>, older_than: std::time::Duration, now: Millis) -> StoreResult<u64> {
        let cut = super::purge::Cut::checked(queue, older_than, now)?;
        let done = match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                sqlx::query(lite_sql::WORKERS_PURGE.text).bind(cut.at_ms).bind(queue).execute(pool).await?.rows_affected()
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                sqlx::query(pg_sql::WORKERS_PURGE.text).bind(cut.older_ms).bind(queue).execute(pool).await?.rows_affected()
            }
        };
        Ok(done)
    }
}

fn record(row: &impl DecodeRow) -> StoreResult<WorkerRecord> {
    let millis = |col: &str| -> StoreResult<Millis> { Ok(Millis(unsigned(TABLE, col, row.int(col)?)?)) };
    let count = |col: &str| -> StoreResult<u64> { unsigned(TABLE, col, row.int(col)?) };
    Ok(WorkerRecord {
        queue: row.text("queue")?,
        owner: OwnerId {
            host_id: row.text("owner_host")?,
            pid: unsigned32(TABLE, "owner_pid", row.int("owner_pid")?)?,
            nonce: row.text("owner_nonce")?,
            start_time: None,
            boot_id: None,
        },
        hostname: row.text("hostname")?,
        started_at: millis("started_at")?,
        last_seen: millis("last_seen")?,
        stopped_at: row.opt_int("stopped_at")?.map(|v| unsigned(TABLE, "stopped_at", v).map(Millis)).transpose()?,
        counters: WorkerCounters {
            claimed: count("claimed")?,
            succeeded: count("succeeded")?,
            failed: count("failed")?,
            dead_lettered: count("dead_lettered")?,
            renewals: count("renewals")?,
            lapses: count("lapses")?,
            losses: count("losses")?,
            steals: count("steals")?,
        },
    })
}

#[cfg(feature = "sqlite")]
mod sqlite {
    //! The periodic record's patience on SQLite.

    use super::{Row, StoreResult, bind_row, lite_sql};
    use crate::store::sqlite::BUSY_TIMEOUT;
    use sqlx::SqlitePool;

    /// How long the periodic record waits for a locked file.
    const IF_IDLE_BUSY_MS: u128 = 20;

    /// Writes `row` only if the pool's connection is free (else `false`),
    /// waiting at most [`IF_IDLE_BUSY_MS`] for a locked file (then `false`):
    /// a record stuck behind a lock would hold the one connection the
    /// worker's claims and renewals need. The connection's busy timeout is
    /// put back after; a connection where that fails is closed rather than
    /// returned to the pool with the short one.
    pub async fn record_if_idle(pool: &SqlitePool, row: &Row<'_>) -> StoreResult<bool> {
        let Some(mut conn) = pool.try_acquire() else { return Ok(false) };
        let set = |ms: u128| sqlx::AssertSqlSafe(format!("PRAGMA busy_timeout = {ms}"));
        sqlx::raw_sql(set(IF_IDLE_BUSY_MS)).execute(&mut *conn).await?;
        let written = bind_row(sqlx::query(lite_sql::WORKERS_RECORD.text), row).execute(&mut *conn).await;
        if sqlx::raw_sql(set(BUSY_TIMEOUT.as_millis())).execute(&mut *conn).await.is_err() {
            conn.close_on_drop();
        }
        match written {
            Ok(_) => Ok(true),
            Err(e) if super::super::sqlite::is_busy(&e) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}
