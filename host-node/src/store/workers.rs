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
use super::db::Arg;
use super::{Store, StoreError, StoreResult};

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
    /// the server's clock): a [`crate::worker::Worker`] does as it makes
    /// its first claim, unless the database can not be written then.
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

impl Row<'_> {
    /// The values `workers_record.sql` binds, by name.
    fn offered(&self) -> Vec<(&'static str, Arg<'_>)> {
        let mut offered = vec![
            ("nonce", self.owner.nonce.as_str().into()),
            ("queue", self.queue.into()),
            ("host", self.owner.host_id.as_str().into()),
            ("pid", i64::from(self.owner.pid).into()),
            ("hostname", self.hostname.into()),
            ("now", self.now.into()),
            ("stopped", self.stopped.into()),
        ];
        offered.extend(COUNTER_COLUMNS.iter().zip(self.counters).map(|(&name, n)| (name, n.into())));
        offered
    }
}

/// The counter columns, in [`WorkerCounters::columns`]'s order.
const COUNTER_COLUMNS: [&str; 8] = ["claimed", "succeeded", "failed", "dead_lettered", "renewals", "lapses", "losses", "steals"];

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
        let offered = row.offered();
        match patience {
            Patience::Wait => self.run("workers_record", &offered).await.map(|_| true),
            Patience::IfIdle => self.backend().execute_if_idle("workers_record", &offered).await.map(|n| n.is_some()),
        }
    }

    /// Every worker recorded, by queue, the most recently seen first.
    ///
    /// # Errors
    /// [`StoreError::Database`], [`StoreError::CorruptRow`].
    pub async fn workers(&self) -> StoreResult<Vec<WorkerRecord>> {
        self.rows("workers_list", &[], record).await
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
        // SQLite compares with the cut instant, PostgreSQL with its clock
        // less the span: each statement takes the one it names.
        let offered = [("cut", cut.at_ms.into()), ("span_ms", cut.older_ms.into()), ("queue", queue.into())];
        self.run("workers_purge", &offered).await
    }
}

fn record(row: &(impl DecodeRow + ?Sized)) -> StoreResult<WorkerRecord> {
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
