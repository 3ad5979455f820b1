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

/// The binds of [`sqlite::RECORD`] and [`postgres::RECORD`], in order.
struct Row<'a> {
    queue: &'a str,
    owner: &'a OwnerId,
    hostname: &'a str,
    counters: [i64; 8],
    stopped: bool,
    now: i64,
}

/// Binds a [`Row`] to a query of either backend, in the statements' order.
macro_rules! bind_row {
    ($query:expr, $row:expr) => {{
        let row = $row;
        let query = $query
            .bind(row.owner.nonce.as_str())
            .bind(row.queue)
            .bind(row.owner.host_id.as_str())
            .bind(i64::from(row.owner.pid))
            .bind(row.hostname)
            .bind(row.now)
            .bind(row.stopped);
        row.counters.iter().fold(query, |query, n| query.bind(*n))
    }};
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
                    bind_row!(sqlx::query(sqlite::RECORD), &row).execute(pool).await?;
                }
                Patience::IfIdle => return sqlite::record_if_idle(pool, &row).await,
            },
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let _ = patience; // the workers table is locked by nobody else
                bind_row!(sqlx::query(postgres::RECORD), &row).execute(pool).await?;
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
            Pool::Sqlite(pool) => sqlx::query(sqlite::LIST).fetch_all(pool).await?.iter().map(record).collect(),
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => sqlx::query(postgres::LIST).fetch_all(pool).await?.iter().map(record).collect(),
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
        if let Some(queue) = queue {
            validate::queue_name(queue)?;
        }
        let older_ms = validate::duration_ms("older_than", older_than)?;
        let now_ms = validate::millis("now", now)?;
        // Checked on every backend, but only SQLite computes the cut from it.
        #[cfg(not(feature = "sqlite"))]
        let _ = now_ms;
        let done = match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                sqlx::query(sqlite::PURGE).bind(now_ms.saturating_sub(older_ms)).bind(queue).execute(pool).await?.rows_affected()
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                sqlx::query(postgres::PURGE).bind(older_ms).bind(queue).execute(pool).await?.rows_affected()
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

/// The columns every read selects.
macro_rules! columns {
    () => {
        "SELECT owner_nonce, queue, owner_host, owner_pid, hostname, started_at, last_seen, stopped_at,
             claimed, succeeded, failed, dead_lettered, renewals, lapses, losses, steals
         FROM leasehold_workers"
    };
}

#[cfg(feature = "sqlite")]
mod sqlite {
    //! Binds of `RECORD`: `?1` nonce, `?2` queue, `?3` owner host, `?4`
    //! pid, `?5` host name, `?6` the caller's clock, `?7` stopped, `?8`..`?15`
    //! the counters in [`super::WorkerCounters`] order.

    use super::{Row, StoreResult};
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
        let written = bind_row!(sqlx::query(RECORD), row).execute(&mut *conn).await;
        if sqlx::raw_sql(set(BUSY_TIMEOUT.as_millis())).execute(&mut *conn).await.is_err() {
            conn.close_on_drop();
        }
        match written {
            Ok(_) => Ok(true),
            Err(e) if super::super::sqlite::is_busy(&e) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// The upsert (see the module docs).
    pub const RECORD: &str = "
        INSERT INTO leasehold_workers (owner_nonce, queue, owner_host, owner_pid, hostname, started_at,
            last_seen, stopped_at, claimed, succeeded, failed, dead_lettered, renewals, lapses, losses, steals)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, CASE WHEN ?7 THEN ?6 END, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
        ON CONFLICT (owner_nonce, queue) DO UPDATE SET
            last_seen = max(last_seen, excluded.last_seen),
            stopped_at = coalesce(stopped_at, excluded.stopped_at),
            claimed = max(claimed, excluded.claimed),
            succeeded = max(succeeded, excluded.succeeded),
            failed = max(failed, excluded.failed),
            dead_lettered = max(dead_lettered, excluded.dead_lettered),
            renewals = max(renewals, excluded.renewals),
            lapses = max(lapses, excluded.lapses),
            losses = max(losses, excluded.losses),
            steals = max(steals, excluded.steals)";

    pub const LIST: &str = concat!(columns!(), " ORDER BY queue, last_seen DESC, owner_nonce");

    /// `?1`: the cut (ms); rows last seen before it go, of queue `?2` (NULL: any).
    pub const PURGE: &str = "DELETE FROM leasehold_workers WHERE last_seen < ?1 AND (?2 IS NULL OR queue = ?2)";
}

#[cfg(feature = "postgres")]
mod postgres {
    //! Binds of `RECORD` as in SQLite (`$6`, the caller's clock, is not
    //! used: the server's clock stamps).

    /// The statement's instant in ms since the Unix epoch.
    macro_rules! db_now {
        () => {
            "CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint)"
        };
    }

    /// The upsert (see the module docs).
    pub const RECORD: &str = concat!(
        "INSERT INTO leasehold_workers AS w (owner_nonce, queue, owner_host, owner_pid, hostname, started_at,
            last_seen, stopped_at, claimed, succeeded, failed, dead_lettered, renewals, lapses, losses, steals)
        SELECT $1, $2, $3, $4, $5, now_ms, now_ms, CASE WHEN $7 THEN now_ms END,
            $8, $9, $10, $11, $12, $13, $14, $15
        FROM (SELECT ",
        db_now!(),
        " AS now_ms, $6::bigint AS unused) AS t
        ON CONFLICT (owner_nonce, queue) DO UPDATE SET
            last_seen = greatest(w.last_seen, excluded.last_seen),
            stopped_at = coalesce(w.stopped_at, excluded.stopped_at),
            claimed = greatest(w.claimed, excluded.claimed),
            succeeded = greatest(w.succeeded, excluded.succeeded),
            failed = greatest(w.failed, excluded.failed),
            dead_lettered = greatest(w.dead_lettered, excluded.dead_lettered),
            renewals = greatest(w.renewals, excluded.renewals),
            lapses = greatest(w.lapses, excluded.lapses),
            losses = greatest(w.losses, excluded.losses),
            steals = greatest(w.steals, excluded.steals)"
    );

    pub const LIST: &str = concat!(columns!(), " ORDER BY queue, last_seen DESC, owner_nonce");

    /// `$1`: the span (ms) before the server's clock; `$2` the queue (NULL: any).
    pub const PURGE: &str =
        concat!("DELETE FROM leasehold_workers WHERE last_seen < ", db_now!(), " - $1 AND ($2::text IS NULL OR queue = $2)");
}
