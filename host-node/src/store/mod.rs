//! Durable job queues on SQL: SQLite (feature `sqlite`, the embedded
//! default: one file, no server) and PostgreSQL (feature `postgres`: many
//! workers on many machines over one database), with fenced run
//! ownership and the claim/heartbeat shape [`crate::JobRunner`] expects.
//!
//! One type, [`Store`], whose backend is chosen at run time from a URL
//! (`sqlite://PATH`, `sqlite::memory:`, `postgres://...`).
//!
//! # The queue
//!
//! - [`Store::enqueue`] / [`Store::enqueue_many`]: JSON payloads with a due
//!   time, priority, attempt budget, idempotency key and timeout; a batch is
//!   one statement.
//! - [`Store::claim`] / [`Store::claim_page`]: takes due queued jobs (lower
//!   priority first, then earlier due time, then lower id) and stale running
//!   jobs whose owner the configured liveness check does not call alive. Each
//!   claim gives the job a fencing token strictly greater than any before it
//!   and records the claimant. A page of N is one statement on PostgreSQL
//!   (`FOR UPDATE SKIP LOCKED`) — a page in a closure: claim a
//!   page, hand the runner one item per `claim` call.
//!   [`Store::complete_and_claim`] completes a job and claims the next in the
//!   same statement (one commit for both on PostgreSQL);
//!   [`Store::release_many`] hands claimed but unperformed jobs back (a
//!   worker stopping with part of a page left).
//! - [`Store::heartbeat`], [`Store::reconfirm`], [`Store::complete`],
//!   [`Store::fail`]: fenced by [`Fence`] (job id + token); a stale owner's
//!   write changes nothing and answers why it lost the fence
//!   ([`FenceOutcome`](leasehold_core::lease::FenceOutcome)). `fail` retries after an exponential backoff until the
//!   attempt budget is spent, then dead-letters with the last error. The
//!   `*_many` forms and [`Coalescer`] put many fenced writes into one
//!   statement, each still fenced.
//! - [`Store::steal`]: only a stale lease, only with evidence
//!   the steal rules ([`leasehold_core::lease::check_steal`]) accept, and only
//!   if the job still matches the exact snapshot read (owner nonce, token,
//!   heartbeat).
//! - [`Store::listen`]: wake-ups when a queue gets due work (see [`wake`]).
//! - [`Store::counts`], [`Store::job`]: inspection.
//! - Schedules ([`Store::add_schedule`], [`Store::run_due_schedules`], …):
//!   periodic and cron jobs, each slot enqueued once by whichever worker
//!   swaps the schedule's cursor first (see `schedule`).
//! - [`Store::settlements`]: the settlements journal, every settled attempt
//!   (done, retrying, dead-lettered, lost to a takeover, released), written
//!   by the settle itself and read in commit order with a [`JournalCursor`]
//!   (see [`journal`]).
//! - [`Store::record_worker`], [`Store::workers`]: the workers table, where
//!   each [`crate::worker::Worker`] records itself every few seconds with
//!   its counters (claims, outcomes, renewals, lapses, losses, steals); see
//!   `workers`.
//! - [`Store::purge`]: deletes succeeded / dead-lettered jobs that finished
//!   longer ago than a retention span, with their attempt logs and results;
//!   [`Store::purge_settlements`] the journal's rows older than a span.
//!
//! # Which clock stamps leases
//!
//! **PostgreSQL: the database server's clock.** Every lease stamp (claim,
//! heartbeat, reclaim, steal), the due-time test of a claim, and the
//! staleness test of a reclaim or steal read `statement_timestamp()` on the
//! server. Workers on many machines are thereby judged against one clock:
//! their own skew against each other does not move anyone's lease. The `now`
//! arguments are still used there for what is the caller's own business:
//! evidence freshness (`checked_at == now`), the liveness check's context and
//! the steal rules' staleness test (both use the statement's clock for
//! claims; a steal checks the caller's `now` and then the database's), and
//! the local memo of refused reclaims. An absolute `run_at` is compared with
//! the database's clock, so a producer whose clock runs ahead makes its jobs
//! due that much later.
//!
//! **SQLite: the caller's `now`.** Processes sharing a file share a host
//! clock; tests drive it explicitly.
//!
//! **Skew allowance**. The worker decides
//! with its own clock when to renew and when to give up on a lease whose
//! renewals fail (the write tolerance); the database decides with its clock
//! when the lease is stale. For the owner to stop before anyone may reclaim,
//! its write tolerance must be shorter than the lease by one heartbeat
//! interval plus the allowance, and the allowance must cover the time between
//! the worker's reading of its clock and the database stamping the write
//! (queueing and network delay) plus any drift of the worker's clock rate
//! over one lease. On PostgreSQL the offset between the worker's clock and the
//! server's does not enter, because the worker only ever measures spans.
//!
//! # Faults
//!
//! Every operation is one statement or one transaction: a connection dropped
//! mid-claim or mid-settle commits nothing, and the job stays claimable (a
//! claim that did commit but whose answer was lost leaves a running job
//! nobody renews: it is reclaimed once its lease is stale). An unreachable
//! database at [`Store::connect`] is [`StoreError::Unreachable`]; later
//! failures are [`StoreError::Database`] for the caller's runner to back off
//! on and retry.

mod backend;
mod batch;
mod claim;
mod config;
mod db;
pub mod dashboard;
mod enqueue;
mod error;
mod exchange;
mod job;
pub mod journal;
mod list;
mod listen;
pub mod migrate;
#[cfg(feature = "postgres")]
mod postgres;
mod purge;
mod read;
mod reclaim;
mod results;
mod rows;
mod schedule;
mod schedule_sql;
mod schema;
mod settle;
#[cfg(feature = "sqlite")]
mod sqlite;
mod steal;
mod steer;
mod totals;
#[cfg(feature = "otel")]
mod trace_context;
mod vacuum;
pub mod validate;
pub mod wake;
mod watch;
mod workers;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};


pub use batch::Coalescer;
pub use config::{OnSuccess, RetryBackoff, StoreConfig};
pub use error::{StoreError, StoreResult};
pub use job::{
    AttemptOutcome, AttemptRecord, Cancellation, ClaimedJob, DEFAULT_MAX_ATTEMPTS, EnqueueOptions, FailOutcome,
    Fence, JobId, JobRecord, JobState, LeaseSnapshot, QueueCounts, StealOutcome,
};
pub use journal::{JournalCursor, SettlementOutcome, SettlementRecord};
pub use migrate::{ID_BLOCK_SIZE, Migration, MigrationSet};
pub use schema::QUEUE_MIGRATIONS;
pub use wake::Wakeups;
pub use list::JobTally;
pub use steer::{MAX_CANCEL_TEXT, PausedQueue, Retried};
pub use totals::SettlementTotal;
pub use workers::{WorkerCounters, WorkerRecord};
pub(crate) use workers::Patience;
pub(crate) use steer::until_cancelled;
pub use schedule::{LastRun, MAX_ROUND_SLOTS, ScheduleRecord, ScheduleRound, ScheduleSpec, ScheduledJob};

use backend::Backend;

/// Most jobs one [`Store::claim_page`] takes.
pub const MAX_PAGE: usize = 1000;

/// Which database a store talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendKind {
    /// SQLite: a file (or memory), the caller's clock.
    Sqlite,
    /// PostgreSQL: the server's clock, `SKIP LOCKED`, `LISTEN/NOTIFY`.
    Postgres,
}

struct Inner {
    /// The database's pool, as its queue operations.
    backend: Box<dyn Backend>,
    config: StoreConfig,
    /// The retry delays the fail statement binds ([`RetryBackoff`]).
    retry_delays_ms: Vec<i64>,
    wakers: wake::LocalWakers,
    /// Stale jobs whose owner the liveness check called alive, with the
    /// caller instant after which they may be asked about again.
    refused: Mutex<HashMap<i64, u64>>,
    /// Per queue, the leases this store's looks have seen on SQLite (see
    /// watch.rs).
    watches: Mutex<HashMap<String, watch::QueueWatch>>,
    /// When claims last looked for stale leases, per queue.
    reclaim: reclaim::ReclaimSchedule,
    /// The task forwarding the database's notifications, once one listens.
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// When this store next vacuums the jobs table (PostgreSQL).
    vacuum: vacuum::VacuumSchedule,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("pool", &self.backend)
            .field("config", &self.config)
            .finish()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(task) = self
            .listener
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            task.abort();
        }
    }
}

/// A job queue on SQLite or PostgreSQL. Cheap to clone (one shared pool).
#[derive(Clone, Debug)]
pub struct Store {
    inner: Arc<Inner>,
}

impl Store {
    /// Connects with [`StoreConfig::default`]; see [`Store::connect_with`].
    pub async fn connect(url: &str) -> StoreResult<Store> {
        Store::connect_with(url, StoreConfig::default()).await
    }

    /// Connects to `url` and (unless `config.migrate` is off, or the store
    /// is [`StoreConfig::read_only`]) installs the queue's migrations
    /// ([`QUEUE_MIGRATIONS`]).
    ///
    /// - `sqlite://PATH` (created if missing; WAL journal), `sqlite::memory:`;
    ///   read-only: opened `mode=ro`, never created, its journal mode left
    ///   as it is. A file in WAL mode is read through its `-shm` file, which
    ///   a reader creates when it is missing (no process has the file
    ///   open); in a folder this process may not write, it cannot, and the
    ///   file is then opened `immutable=1` instead: read as it is, without
    ///   locks — right for a file nobody writes, as nobody can have it open
    ///   for writing without that `-shm` file existing;
    /// - `postgres://...` / `postgresql://...` (sqlx's URL syntax; a Unix
    ///   socket folder goes in `?host=/path`).
    ///
    /// Errors: [`StoreError::InvalidOption`] for a [`StoreConfig::retry`]
    /// out of range or a zero [`StoreConfig::connect_timeout`];
    /// [`StoreError::UnsupportedUrl`] (also for a `sqlite:` URL with
    /// no path, which SQLite would take as a temporary database deleted on
    /// close), [`StoreError::BackendNotEnabled`],
    /// [`StoreError::NotWritable`] for a SQLite file (or its folder, or its
    /// `-wal` or `-shm` file) this process may not write, unless
    /// `config.read_only`, [`StoreError::Unreachable`] (within
    /// `config.connect_timeout`), and the
    /// migration refusals ([`StoreError::SchemaTooNew`], [`StoreError::MigrationMismatch`]).
    pub async fn connect_with(url: &str, config: StoreConfig) -> StoreResult<Store> {
        let retry_delays_ms = config.retry.delays_ms()?;
        if config.connect_timeout.is_zero() {
            // Every connect would fail, reported as the database unreachable.
            return Err(StoreError::InvalidOption {
                option: "connect_timeout",
                reason: "must be longer than zero".to_owned(),
            });
        }
        let redacted = error::redact_url(url);
        #[cfg_attr(all(feature = "sqlite", feature = "postgres"), allow(unused_variables))]
        let not_enabled = |feature| StoreError::BackendNotEnabled { url: redacted.clone(), feature };
        let backend: Box<dyn Backend> = if url.starts_with("sqlite:") {
            #[cfg(not(feature = "sqlite"))]
            return Err(not_enabled("sqlite"));
            #[cfg(feature = "sqlite")]
            Box::new(sqlite::connect(url, &redacted, &config).await?)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            #[cfg(not(feature = "postgres"))]
            return Err(not_enabled("postgres"));
            #[cfg(feature = "postgres")]
            Box::new(postgres::connect(url, &redacted, &config).await?)
        } else {
            return Err(StoreError::UnsupportedUrl { url: redacted });
        };
        let migrate = config.migrate && !config.read_only;
        let store = Store {
            inner: Arc::new(Inner {
                backend,
                retry_delays_ms,
                wakers: wake::LocalWakers::default(),
                refused: Mutex::new(HashMap::new()),
                watches: Mutex::new(HashMap::new()),
                reclaim: reclaim::ReclaimSchedule::new(config.reclaim_every),
                listener: Mutex::new(None),
                vacuum: vacuum::VacuumSchedule::new(config.vacuum_every),
                config,
            }),
        };
        if migrate {
            store.migrate(&[&QUEUE_MIGRATIONS]).await?;
        }
        Ok(store)
    }

    /// The database's queue operations.
    fn backend(&self) -> &dyn Backend {
        &*self.inner.backend
    }

    /// Which database this store talks to.
    pub fn kind(&self) -> BackendKind {
        self.backend().kind()
    }

    /// Installs migration sets (see [`migrate`]): missing ones in id order in
    /// one transaction under the database's migration lock; nothing when all
    /// are installed; [`StoreError::SchemaTooNew`] for a database a newer
    /// build migrated. Compose your own sets with [`QUEUE_MIGRATIONS`] in one
    /// call so their ids are checked against each other.
    pub async fn migrate(&self, sets: &[&MigrationSet]) -> StoreResult<()> {
        migrate::check_sets(sets)?;
        self.backend().migrate(sets).await
    }

    /// A handle that coalesces concurrent completions and renewals into one
    /// statement each (see [`Coalescer`]). Needs a tokio runtime.
    pub fn coalescer(&self) -> Coalescer {
        Coalescer::spawn(self.clone(), batch::DEFAULT_MAX_BATCH)
    }

    /// Closes the pool: waits for checked-out connections to come back.
    pub async fn close(&self) {
        // The LISTEN task holds a pooled connection: end it first, or the
        // pool's close would wait for that connection forever.
        let task = self.inner.listener.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(task) = task {
            task.abort();
            let _ = task.await;
        }
        self.backend().close().await
    }
}
