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
//!   ([`FenceOutcome`]). `fail` retries after an exponential backoff until the
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
mod config;
pub mod dashboard;
mod dashboard_sql;
mod error;
mod job;
pub mod journal;
mod list;
pub mod migrate;
#[cfg(feature = "postgres")]
mod postgres;
mod purge;
mod reclaim;
mod results;
mod rows;
mod schedule;
mod schedule_sql;
mod schema;
mod steer;
mod totals;
#[cfg(feature = "otel")]
mod trace_context;
mod workers;
mod steer_sql;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "postgres")]
mod vacuum;
pub mod validate;
pub mod wake;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use leasehold_core::Millis;
use leasehold_core::lease::{
    FenceOutcome, LivenessContext, LivenessEvidence, OwnerId, StealAttempt, check_steal,
};

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
pub use steer::{MAX_CANCEL_TEXT, PausedQueue};
pub use totals::SettlementTotal;
pub use workers::{WorkerCounters, WorkerRecord};
pub(crate) use workers::Patience;
pub(crate) use steer::until_cancelled;
pub use schedule::{LastRun, MAX_ROUND_SLOTS, ScheduleRecord, ScheduleRound, ScheduleSpec, ScheduledJob};

use backend::{ClaimRequest, ClaimRound, OwnerParams, StaleCandidate, TakenOver, Takeover};
use validate::NewJob;

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

#[derive(Debug)]
enum Backend {
    #[cfg(feature = "sqlite")]
    Sqlite(sqlx::SqlitePool),
    #[cfg(feature = "postgres")]
    Postgres(sqlx::PgPool),
}

/// Runs `$body` with `$pool` bound to the backend's pool and `imp` naming
/// its module, so each operation is written once per backend and dispatched
/// in one place.
macro_rules! dispatch {
    ($store:expr, |$pool:ident| $body:expr) => {
        match &$store.inner.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite($pool) => {
                #[allow(unused_imports)]
                use sqlite as imp;
                $body
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres($pool) => {
                #[allow(unused_imports)]
                use postgres as imp;
                $body
            }
        }
    };
}

/// How many times an enqueue inserts a keyed job again whose conflicting
/// job vanished before its id was read (see `Store::insert`).
const ENQUEUE_TRIES: usize = 5;

struct Inner {
    backend: Backend,
    config: StoreConfig,
    /// The retry delays the fail statement binds ([`RetryBackoff`]).
    retry_delays_ms: Vec<i64>,
    wakers: wake::LocalWakers,
    /// Stale jobs whose owner the liveness check called alive, with the
    /// caller instant after which they may be asked about again.
    refused: Mutex<HashMap<i64, u64>>,
    /// When claims last looked for stale leases, per queue.
    reclaim: reclaim::ReclaimSchedule,
    #[cfg(feature = "postgres")]
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// When this store next vacuums the jobs table (PostgreSQL).
    #[cfg(feature = "postgres")]
    vacuum: vacuum::VacuumSchedule,
}

impl std::fmt::Debug for Inner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend)
            .field("config", &self.config)
            .finish()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        #[cfg(feature = "postgres")]
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
    /// Errors: [`StoreError::UnsupportedUrl`], [`StoreError::BackendNotEnabled`],
    /// [`StoreError::Unreachable`] (within `config.connect_timeout`), and the
    /// migration refusals ([`StoreError::SchemaTooNew`], [`StoreError::MigrationMismatch`]).
    pub async fn connect_with(url: &str, config: StoreConfig) -> StoreResult<Store> {
        let retry_delays_ms = config.retry.delays_ms()?;
        let redacted = error::redact_url(url);
        let backend = if url.starts_with("sqlite:") {
            #[cfg(feature = "sqlite")]
            {
                Backend::Sqlite(sqlite::connect(url, &redacted, &config).await?)
            }
            #[cfg(not(feature = "sqlite"))]
            return Err(StoreError::BackendNotEnabled {
                url: redacted,
                feature: "sqlite",
            });
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            #[cfg(feature = "postgres")]
            {
                Backend::Postgres(postgres::connect(url, &redacted, &config).await?)
            }
            #[cfg(not(feature = "postgres"))]
            return Err(StoreError::BackendNotEnabled {
                url: redacted,
                feature: "postgres",
            });
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
                reclaim: reclaim::ReclaimSchedule::new(config.reclaim_every),
                #[cfg(feature = "postgres")]
                listener: Mutex::new(None),
                #[cfg(feature = "postgres")]
                vacuum: vacuum::VacuumSchedule::new(config.vacuum_every),
                config,
            }),
        };
        if migrate {
            store.migrate(&[&QUEUE_MIGRATIONS]).await?;
        }
        Ok(store)
    }

    /// Which database this store talks to.
    pub fn kind(&self) -> BackendKind {
        dispatch!(self, |_pool| imp::KIND)
    }

    /// Installs migration sets (see [`migrate`]): missing ones in id order in
    /// one transaction under the database's migration lock; nothing when all
    /// are installed; [`StoreError::SchemaTooNew`] for a database a newer
    /// build migrated. Compose your own sets with [`QUEUE_MIGRATIONS`] in one
    /// call so their ids are checked against each other.
    pub async fn migrate(&self, sets: &[&MigrationSet]) -> StoreResult<()> {
        migrate::check_sets(sets)?;
        dispatch!(self, |pool| imp::migrate(pool, sets).await)
    }

    /// Enqueues one job; answers its id. With an idempotency key already used
    /// in this queue, answers the first job's id and writes nothing — while
    /// that job is kept: once it is purged, or deleted by a completion under
    /// [`OnSuccess::Delete`], the key makes a new job.
    /// `now` is the caller's clock (SQLite stamps with it; PostgreSQL uses its
    /// own). A job due at once wakes this queue's subscribers.
    ///
    /// Errors: [`StoreError::InvalidQueueName`], [`StoreError::InvalidOption`],
    /// [`StoreError::Database`].
    pub async fn enqueue(
        &self,
        queue: &str,
        payload: &serde_json::Value,
        options: &EnqueueOptions,
        now: Millis,
    ) -> StoreResult<JobId> {
        let ids = self
            .enqueue_prepared(queue, vec![NewJob::new(payload, options)?], now)
            .await?;
        Ok(ids[0])
    }

    /// [`Store::enqueue`] with the payload as JSON text; text that is not
    /// JSON is [`StoreError::InvalidPayload`] and nothing is written.
    pub async fn enqueue_json(
        &self,
        queue: &str,
        payload: &str,
        options: &EnqueueOptions,
        now: Millis,
    ) -> StoreResult<JobId> {
        let payload = validate::payload_text(payload)?;
        self.enqueue(queue, &payload, options, now).await
    }

    /// Enqueues many jobs in one statement; answers their ids in input order
    /// (a repeated idempotency key answers the first job's id). All or
    /// nothing: one invalid job fails the batch before anything is written.
    pub async fn enqueue_many(
        &self,
        queue: &str,
        jobs: &[(serde_json::Value, EnqueueOptions)],
        now: Millis,
    ) -> StoreResult<Vec<JobId>> {
        let prepared = jobs
            .iter()
            .map(|(payload, options)| NewJob::new(payload, options))
            .collect::<StoreResult<Vec<_>>>()?;
        self.enqueue_prepared(queue, prepared, now).await
    }

    async fn enqueue_prepared(
        &self,
        queue: &str,
        jobs: Vec<NewJob>,
        now: Millis,
    ) -> StoreResult<Vec<JobId>> {
        validate::queue_name(queue)?;
        if jobs.is_empty() {
            return Ok(Vec::new());
        }
        let now_ms = validate::millis("now", now)?;
        let due_now = jobs
            .iter()
            .any(|j| j.run_at.is_none_or(|at| at <= now_ms) && j.delay_ms == 0);
        #[cfg(feature = "otel")]
        let span = crate::otel::send(queue, jobs.len());
        #[cfg(feature = "otel")]
        let ids = {
            use tracing::Instrument;
            let ids = self.insert(queue, &jobs, now_ms).instrument(span.clone()).await?;
            if let [id] = ids.as_slice() {
                span.record("messaging.message.id", id.0.to_string());
            }
            if let Some(traceparent) = crate::otel::traceparent(&span) {
                self.set_trace_context(&ids, &traceparent).instrument(span).await?;
            }
            ids
        };
        #[cfg(not(feature = "otel"))]
        let ids = self.insert(queue, &jobs, now_ms).await?;
        if due_now {
            self.inner.wakers.wake(queue);
        }
        Ok(ids)
    }

    /// Inserts `jobs` (validated) and answers their ids in input order.
    ///
    /// A job whose key conflicted with a job deleted before its id could be
    /// read (completed under `OnSuccess::Delete`, or purged, between the
    /// insert and the read) got none: its key is free again, so it is
    /// inserted again, as if it had come a moment later.
    async fn insert(&self, queue: &str, jobs: &[NewJob], now_ms: i64) -> StoreResult<Vec<JobId>> {
        let mut ids = dispatch!(self, |pool| imp::enqueue(pool, queue, jobs, now_ms).await)?;
        for _ in 0..ENQUEUE_TRIES {
            let missing: Vec<usize> = (0..ids.len()).filter(|&i| ids[i].is_none()).collect();
            if missing.is_empty() {
                break;
            }
            let again: Vec<NewJob> = missing.iter().map(|&i| jobs[i].clone()).collect();
            let found = dispatch!(self, |pool| imp::enqueue(pool, queue, &again, now_ms).await)?;
            for (i, id) in missing.into_iter().zip(found) {
                ids[i] = id;
            }
        }
        ids.into_iter()
            .map(|id| {
                id.ok_or_else(|| StoreError::CorruptRow {
                    table: "leasehold_jobs",
                    detail: format!(
                        "the job holding an enqueued job's idempotency key was deleted {ENQUEUE_TRIES} times in a row before its id could be read"
                    ),
                })
            })
            .collect()
    }

    /// Claims at most one job of `queue` for `claimant` under a lease of
    /// `lease` (its stale window); see [`Store::claim_page`].
    pub async fn claim(
        &self,
        queue: &str,
        claimant: &OwnerId,
        now: Millis,
        lease: Duration,
    ) -> StoreResult<Option<ClaimedJob>> {
        Ok(self
            .claim_page(queue, claimant, now, lease, 1)
            .await?
            .into_iter()
            .next())
    }

    /// Claims up to `n` (1..=[`MAX_PAGE`]) jobs of `queue` for `claimant`.
    ///
    /// Takes stale running jobs first (their work is the oldest), then due
    /// queued jobs by priority, due time, id — in one statement on
    /// PostgreSQL, two on SQLite (a read of stale candidates, then one atomic
    /// claim); a stale job found costs one more statement for its takeover.
    /// Stale leases are looked for at most once per
    /// [`StoreConfig::reclaim_every`] (default 1 s) per queue, or per lease
    /// if that is shorter, and again at the claim after a look that found
    /// some; the claims in between take due queued jobs only (one statement
    /// on both backends). A stale job
    /// is taken only if the configured liveness check does not call its
    /// owner alive (with no check configured, a stale lease is enough), and
    /// only if it still matches the snapshot read (compare-and-swap); if that
    /// lease was its last attempt it is dead-lettered instead of handed out.
    /// Each claimed job carries a fresh fencing token and the claimant is
    /// recorded as its owner. An empty page means nothing is due.
    pub async fn claim_page(
        &self,
        queue: &str,
        claimant: &OwnerId,
        now: Millis,
        lease: Duration,
        n: usize,
    ) -> StoreResult<Vec<ClaimedJob>> {
        self.claim_page_excluding(queue, claimant, now, lease, n, &[]).await
    }

    /// [`Store::claim_page`], never taking over the stale leases of the jobs
    /// in `exclude`: a worker passes the jobs whose outcome it still holds
    /// unsettled (their leases may have gone stale while the database was
    /// away), so it does not reclaim them from itself, which would fence its
    /// own settle out and run finished work again.
    pub async fn claim_page_excluding(
        &self,
        queue: &str,
        claimant: &OwnerId,
        now: Millis,
        lease: Duration,
        n: usize,
        exclude: &[JobId],
    ) -> StoreResult<Vec<ClaimedJob>> {
        Ok(self
            .claim_round(queue, claimant, now, lease, n, None, exclude)
            .await?
            .1)
    }

    /// Completes `fence` and claims up to `n` more jobs of `queue` — on
    /// PostgreSQL in ONE statement, so one commit and one round trip serve
    /// both (SQLite runs the two one after the other). For a worker slot
    /// that finished a job and wants the next: the completion is fenced
    /// exactly as [`Store::complete`] (and keeps or deletes the job as it
    /// does), the claim behaves as
    /// [`Store::claim_page`], and the completion lands whether or not the
    /// claim finds anything.
    pub async fn complete_and_claim(
        &self,
        fence: Fence,
        result: Option<&serde_json::Value>,
        queue: &str,
        claimant: &OwnerId,
        now: Millis,
        lease: Duration,
        n: usize,
    ) -> StoreResult<(FenceOutcome, Vec<ClaimedJob>)> {
        let (done, page) = self
            .claim_round(queue, claimant, now, lease, n, Some((fence, result)), &[])
            .await?;
        let outcome = self.explain(&[fence], &done, None).await?[0];
        Ok((outcome, page))
    }

    /// One claim statement (optionally completing `settle` in it), then the
    /// liveness judgement and takeover of the stale candidates it found.
    /// Answers the ids the completion landed on, and the page. Stale leases
    /// of `exclude` are not taken over.
    #[allow(clippy::too_many_arguments)]
    async fn claim_round(
        &self,
        queue: &str,
        claimant: &OwnerId,
        now: Millis,
        lease: Duration,
        n: usize,
        settle: Option<(Fence, Option<&serde_json::Value>)>,
        exclude: &[JobId],
    ) -> StoreResult<(Vec<i64>, Vec<ClaimedJob>)> {
        validate::queue_name(queue)?;
        if !(1..=MAX_PAGE).contains(&n) {
            return Err(StoreError::InvalidOption {
                option: "n",
                reason: format!("page size must be 1..={MAX_PAGE}, got {n}"),
            });
        }
        let lease_ms = validate::lease_ms(lease)?;
        let now_ms = validate::millis("now", now)?;
        let owner = OwnerParams::new(claimant)?;
        let settle_results = result_texts(settle.iter().map(|(_, result)| *result));
        let settle = fence_pairs(&settle.iter().map(|(fence, _)| *fence).collect::<Vec<_>>())?;
        let mut refused = self.refused_ids(now);
        refused.extend(exclude.iter().map(|id| id.0));
        let look_for_stale = self.inner.reclaim.turn(queue, now, lease_ms);
        let request = ClaimRequest {
            queue,
            owner: owner.clone(),
            lease_ms,
            n: n as i64,
            look_for_stale,
            refused: &refused,
            settle: &settle,
            settle_results: &settle_results,
            on_success: self.inner.config.on_success,
            now: now_ms,
        };
        let (round, done): (ClaimRound, Vec<i64>) =
            dispatch!(self, |pool| imp::claim(pool, &request).await)?;
        self.claimed(round.claimed.len());
        if round.stale.is_empty() {
            return Ok((done, round.claimed));
        }
        self.inner.reclaim.found_stale(queue);
        let takeovers = self.judge_stale(&round, claimant, now);
        let mut page = Vec::with_capacity(round.claimed.len() + takeovers.len());
        if !takeovers.is_empty() {
            let taken = dispatch!(self, |pool| {
                imp::take_over(pool, &owner, lease_ms, &takeovers, now_ms).await
            })?;
            page.extend(taken.into_iter().filter_map(|t| match t {
                TakenOver::Claimed(mut job) => {
                    // Reclaimed from a lost worker only when the attempt
                    // before was another owner's: our own stale lease taken
                    // back is a retry, not a rescue.
                    job.reclaimed = !takeovers.iter().any(|t| t.candidate.id == job.id.0 && is_own(&t.candidate.owner, claimant));
                    Some(job)
                }
                TakenOver::DeadLettered(id) => {
                    tracing::warn!(
                        job = id,
                        queue,
                        "lease lost on the final attempt; dead-lettered"
                    );
                    None
                }
            }));
        }
        page.extend(round.claimed);
        Ok((done, page))
    }

    /// Counts one claim statement that claimed `n` jobs; on PostgreSQL,
    /// starts the background vacuum of the jobs table when one is due (see
    /// [`StoreConfig::vacuum_every`]).
    fn claimed(&self, n: usize) {
        #[cfg(feature = "postgres")]
        #[allow(irrefutable_let_patterns)] // with the PostgreSQL store alone, it is the only backend
        if let Backend::Postgres(pool) = &self.inner.backend {
            if let Some(turn) = self.inner.vacuum.claimed(n) {
                let pool = pool.clone();
                tokio::spawn(async move {
                    postgres::vacuum(&pool).await;
                    drop(turn);
                });
            }
        }
        #[cfg(not(feature = "postgres"))]
        let _ = n;
    }

    /// Asks the liveness check about each stale candidate; remembers the
    /// refused ones for one more lease window.
    fn judge_stale<'a>(
        &self,
        round: &'a ClaimRound,
        claimant: &OwnerId,
        now: Millis,
    ) -> Vec<Takeover<'a>> {
        let statement_now = Millis(u64::try_from(round.now).unwrap_or(0));
        let mut refused = self.inner.refused.lock().unwrap_or_else(|e| e.into_inner());
        round
            .stale
            .iter()
            .filter(|c| {
                // Our own incarnation's stale job: its claim landed but the
                // answer never reached us (a dropped connection), or our
                // supervision already lapsed the work before the lease went
                // stale. Either way nobody works on it, and a pid probe would
                // call us alive forever: the expired lease alone decides.
                let own = is_own(&c.owner, claimant);
                let alive = !own && self.inner.config.liveness.as_ref().is_some_and(|check| {
                    let context = LivenessContext {
                        claimant,
                        heartbeat_at: c.heartbeat_at.map(|h| Millis(h.max(0) as u64)),
                        now: statement_now,
                    };
                    check.is_alive(&c.owner, &context)
                });
                if alive {
                    refused.insert(c.id, now.0.saturating_add(c.lease_ms.max(0) as u64));
                }
                !alive
            })
            .map(|candidate| Takeover {
                candidate,
                note: format!(
                    "lease expired; reclaimed by {} pid {}",
                    claimant.host_id, claimant.pid
                ),
            })
            .collect()
    }

    /// The refused ids still inside their window at `now`; forgets the rest.
    fn refused_ids(&self, now: Millis) -> Vec<i64> {
        let mut refused = self.inner.refused.lock().unwrap_or_else(|e| e.into_inner());
        refused.retain(|_, until| *until > now.0);
        refused.keys().copied().collect()
    }

    /// Renews one lease: the heartbeat becomes now and the lease runs its
    /// stale window again. Fenced: lands only while the job is running under
    /// `fence.token` (even past its stale window, as long as nobody took it).
    /// Answers `Updated`, or why the claim was lost.
    pub async fn heartbeat(&self, fence: Fence, now: Millis) -> StoreResult<FenceOutcome> {
        Ok(self.heartbeat_many(&[fence], now).await?[0])
    }

    /// Renews many leases in one statement, each fenced on its own; answers
    /// in input order.
    pub async fn heartbeat_many(
        &self,
        fences: &[Fence],
        now: Millis,
    ) -> StoreResult<Vec<FenceOutcome>> {
        self.fenced(fences, now, FencedWrite::Renew { owner_nonce: None })
            .await
    }

    /// The supervision's check after a gap in renewals: renews the lease only if the job is still running under
    /// `fence.token` AND recorded as owned by `owner` (same nonce).
    pub async fn reconfirm(
        &self,
        fence: Fence,
        owner: &OwnerId,
        now: Millis,
    ) -> StoreResult<FenceOutcome> {
        let write = FencedWrite::Renew {
            owner_nonce: Some(&owner.nonce),
        };
        Ok(self.fenced(&[fence], now, write).await?[0])
    }

    /// Completes one job: `succeeded`, with `finished_at = now`, and — in
    /// the same statement (PostgreSQL) or transaction (SQLite) — `result`,
    /// if any (any JSON: the CLI stores `{"exitCode": …, "output": …}`), as
    /// the attempt's result ([`Store::results`]). One fenced write: a fence
    /// that does not hold writes neither. The succeeded attempt is not
    /// written to the attempts table: [`Store::job`] reads it off the job
    /// row (owner, token, claim time, finish time). Fenced like
    /// [`Store::heartbeat`]; a second completion answers `LostNotRunning`
    /// and changes nothing.
    ///
    /// With [`OnSuccess::Delete`] ([`StoreConfig::on_success`]) the
    /// completion deletes the job with its attempt log and results instead,
    /// under the same fence (`result` is not kept), and a second completion
    /// answers `LostMissing`.
    ///
    /// # Errors
    /// [`StoreError::InvalidOption`] for a token or `now` out of range,
    /// [`StoreError::Database`] when the write fails (nothing landed).
    pub async fn complete(
        &self,
        fence: Fence,
        result: Option<&serde_json::Value>,
        now: Millis,
    ) -> StoreResult<FenceOutcome> {
        Ok(self.complete_many(&[(fence, result)], now).await?[0])
    }

    /// Completes many jobs in one statement, each fenced on its own and
    /// each with its result, if any, written only where its fence holds;
    /// answers in input order. Keeps or deletes them as [`Store::complete`]
    /// does. A job listed with two tokens whose current one lands under
    /// [`OnSuccess::Delete`] is answered `LostMissing` for both: with the
    /// row gone, nothing says which token it held (a landed completion
    /// answered lost is safe; the reverse would not be).
    pub async fn complete_many(
        &self,
        completions: &[(Fence, Option<&serde_json::Value>)],
        now: Millis,
    ) -> StoreResult<Vec<FenceOutcome>> {
        let fences: Vec<Fence> = completions.iter().map(|(fence, _)| *fence).collect();
        let results = result_texts(completions.iter().map(|(_, result)| *result));
        self.fenced(&fences, now, FencedWrite::Complete { results: &results })
            .await
    }

    /// Hands one claimed job back unperformed (a claim heard too late to
    /// start its work, say): see [`Store::release_many`].
    pub async fn release(&self, fence: Fence, now: Millis) -> StoreResult<FenceOutcome> {
        Ok(self.release_many(&[fence], now).await?[0])
    }

    /// Hands claimed jobs back unperformed: each is queued again at once, its
    /// attempt not counted and nothing logged, so a worker that stops with a
    /// page of claimed jobs still waiting lets others take them now rather
    /// than after their leases. Fenced like [`Store::complete`]; the next
    /// claim gives a greater token, so the released one stays dead.
    pub async fn release_many(
        &self,
        fences: &[Fence],
        now: Millis,
    ) -> StoreResult<Vec<FenceOutcome>> {
        self.fenced(fences, now, FencedWrite::Release).await
    }

    async fn fenced(
        &self,
        fences: &[Fence],
        now: Millis,
        write: FencedWrite<'_>,
    ) -> StoreResult<Vec<FenceOutcome>> {
        if fences.is_empty() {
            return Ok(Vec::new());
        }
        let now_ms = validate::millis("now", now)?;
        let pairs = fence_pairs(fences)?;
        let updated = dispatch!(self, |pool| match write {
            FencedWrite::Renew { owner_nonce } => {
                imp::renew(pool, &pairs, owner_nonce, now_ms).await
            }
            FencedWrite::Complete { results } => {
                imp::complete(pool, &pairs, results, self.inner.config.on_success, now_ms).await
            }
            FencedWrite::Release => imp::release(pool, &pairs, now_ms).await,
        })?;
        let expected_nonce = match write {
            FencedWrite::Renew { owner_nonce } => owner_nonce,
            FencedWrite::Complete { .. } | FencedWrite::Release => None,
        };
        self.explain(fences, &updated, expected_nonce).await
    }

    /// Answers each fence, reading the rows of those that did not land.
    async fn explain(
        &self,
        fences: &[Fence],
        updated: &[i64],
        expected_nonce: Option<&str>,
    ) -> StoreResult<Vec<FenceOutcome>> {
        let lost = backend::unlanded(fences, updated);
        let rows = if lost.is_empty() {
            Vec::new()
        } else {
            dispatch!(self, |pool| imp::fence_rows(pool, &lost).await)?
        };
        backend::fence_outcomes(fences, updated, &rows, expected_nonce)
    }

    /// Fails one attempt with `error`, and writes `result`, if any, as the
    /// attempt's result in the same statement (PostgreSQL) or transaction
    /// (SQLite). Fenced: a fence that does not hold writes neither. With
    /// attempts left, the job is queued again after the retry backoff
    /// ([`RetryBackoff`]); on the last attempt it is dead-lettered (`dead`,
    /// `last_error = error`). Either way the attempt is logged as failed
    /// with the error.
    ///
    /// # Errors
    /// [`StoreError::InvalidOption`] for a token or `now` out of range,
    /// [`StoreError::Database`] when the write fails (nothing landed).
    pub async fn fail(
        &self,
        fence: Fence,
        error: &str,
        result: Option<&serde_json::Value>,
        now: Millis,
    ) -> StoreResult<FailOutcome> {
        let now_ms = validate::millis("now", now)?;
        let pair = fence_pairs(&[fence])?[0];
        let delays = &self.inner.retry_delays_ms;
        let result = result.map(serde_json::Value::to_string);
        let settled = dispatch!(self, |pool| {
            imp::fail(pool, pair, error, result.as_deref(), delays, now_ms).await
        })?;
        match settled {
            Some((JobState::Dead, _)) => Ok(FailOutcome::DeadLettered),
            Some((_, run_at)) => Ok(FailOutcome::Retrying {
                at: Millis(run_at.max(0) as u64),
            }),
            None => Ok(FailOutcome::Lost(
                self.explain(&[fence], &[], None).await?[0],
            )),
        }
    }

    /// The results recorded for `job`'s attempts, by fencing token, oldest
    /// first. A result whose text is not JSON (it cannot be, as written) is
    /// skipped.
    ///
    /// # Errors
    /// [`StoreError::Database`] when the read fails.
    pub async fn results(&self, job: JobId) -> StoreResult<Vec<(u64, serde_json::Value)>> {
        let rows = match &self.inner.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(pool) => results::sqlite::read(pool, job.0).await?,
            #[cfg(feature = "postgres")]
            Backend::Postgres(pool) => results::postgres::read(pool, job.0).await?,
        };
        Ok(rows
            .into_iter()
            .filter_map(|(token, text)| Some((token.max(0) as u64, serde_json::from_str(&text).ok()?)))
            .collect())
    }

    /// Takes `job` over from the owner in `snapshot`.
    ///
    /// First the steal rules ([`check_steal`]) must accept: evidence observed
    /// at exactly `now`, of a kind that fits the host relation, and a lease
    /// stale at `now` — otherwise [`StoreError::StealRefused`] names the rule
    /// and nothing is read or written. Then a compare-and-swap on the exact
    /// snapshot (running, same token, same owner nonce, same heartbeat, and
    /// — on PostgreSQL — stale by the database's clock too): the claimant
    /// gets a fresh token under a lease of `lease`, and the replaced
    /// attempt is logged as `lease-lost` naming the thief and the evidence.
    /// A changed snapshot answers [`StealOutcome::SnapshotChanged`].
    pub async fn steal(
        &self,
        job: JobId,
        snapshot: &LeaseSnapshot,
        claimant: &OwnerId,
        evidence: &LivenessEvidence,
        now: Millis,
        lease: Duration,
    ) -> StoreResult<StealOutcome> {
        check_steal(&StealAttempt {
            owner: &snapshot.owner,
            claimant,
            heartbeat_at: snapshot.heartbeat_at,
            stale_after_ms: snapshot.lease_ms,
            evidence,
            now,
        })?;
        let lease_ms = validate::lease_ms(lease)?;
        let now_ms = validate::millis("now", now)?;
        let owner = OwnerParams::new(claimant)?;
        let record = self.job(job).await?;
        let candidate = StaleCandidate {
            id: job.0,
            token: i64::try_from(snapshot.token).unwrap_or(i64::MAX),
            owner: snapshot.owner.clone(),
            // The replaced attempt's start, logged with it; a snapshot that no
            // longer matches fails the swap whatever this says.
            claimed_at: record
                .attempt_log
                .last()
                .filter(|a| a.outcome == AttemptOutcome::Running)
                .map(|a| a.started_at.0 as i64)
                .unwrap_or(now_ms),
            heartbeat_at: snapshot.heartbeat_at.map(|h| h.0 as i64),
            lease_ms: snapshot.lease_ms as i64,
        };
        let note = format!(
            "stolen by {} pid {} on evidence {}",
            claimant.host_id,
            claimant.pid,
            evidence.kind.as_str()
        );
        let takeover = [Takeover {
            candidate: &candidate,
            note,
        }];
        let taken = dispatch!(self, |pool| {
            imp::take_over(pool, &owner, lease_ms, &takeover, now_ms).await
        })?;
        Ok(match taken.into_iter().next() {
            Some(TakenOver::Claimed(job)) => StealOutcome::Stolen(job),
            Some(TakenOver::DeadLettered(_)) => StealOutcome::DeadLettered,
            None => StealOutcome::SnapshotChanged,
        })
    }

    /// Subscribes to wake-ups of `queue`: every enqueue of due work through
    /// this store, and on PostgreSQL every `NOTIFY` from any process (one
    /// `LISTEN` connection per store, opened on the first subscription and
    /// re-opened after a loss, when every subscriber is woken because
    /// notifications may have been missed). A worker awaits
    /// [`Wakeups::notified`] and calls its runner's `wake()`.
    pub async fn listen(&self, queue: &str) -> StoreResult<Wakeups> {
        validate::queue_name(queue)?;
        #[cfg(feature = "postgres")]
        #[allow(irrefutable_let_patterns)] // a postgres-only build has one backend
        if let Backend::Postgres(pool) = &self.inner.backend {
            self.ensure_listener(pool).await?;
        }
        let notify = self.inner.wakers.subscribe(queue);
        Ok(Wakeups {
            queue: queue.to_owned(),
            notify,
            _store: self.inner.clone(),
        })
    }

    #[cfg(feature = "postgres")]
    async fn ensure_listener(&self, pool: &sqlx::PgPool) -> StoreResult<()> {
        let mut slot = self
            .inner
            .listener
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if slot.as_ref().is_some_and(|task| !task.is_finished()) {
            *self
                .inner
                .listener
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = slot;
            return Ok(());
        }
        slot.take();
        let listener = postgres::open_listener(pool).await?;
        let weak = Arc::downgrade(&self.inner);
        let task = tokio::spawn(postgres::forward_notifications(listener, move |queue| {
            let Some(inner) = weak.upgrade() else {
                return false;
            };
            match queue {
                Some(q) => inner.wakers.wake(q),
                None => inner.wakers.wake_all(),
            }
            true
        }));
        let mut guard = self
            .inner
            .listener
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(old) = guard.replace(task) {
            old.abort();
        }
        Ok(())
    }

    /// Jobs per queue by state, queues in name order.
    pub async fn counts(&self) -> StoreResult<Vec<QueueCounts>> {
        dispatch!(self, |pool| imp::counts(pool).await)
    }

    /// One job with its attempts (oldest first; a running attempt is last).
    /// Errors: [`StoreError::UnknownJob`].
    pub async fn job(&self, id: JobId) -> StoreResult<JobRecord> {
        dispatch!(self, |pool| imp::job(pool, id).await)?.ok_or(StoreError::UnknownJob(id))
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
        #[cfg(feature = "postgres")]
        {
            let task = self.inner.listener.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(task) = task {
                task.abort();
                let _ = task.await;
            }
        }
        dispatch!(self, |pool| pool.close().await)
    }
}

/// The fenced writes over many jobs at once.
#[derive(Clone, Copy)]
enum FencedWrite<'a> {
    Renew { owner_nonce: Option<&'a str> },
    /// With each fence's result as JSON text, in the fences' order.
    Complete { results: &'a [Option<String>] },
    Release,
}

/// Results as the JSON text the statements bind, in order.
fn result_texts<'a>(results: impl Iterator<Item = Option<&'a serde_json::Value>>) -> Vec<Option<String>> {
    results.map(|r| r.map(serde_json::Value::to_string)).collect()
}

/// Fences as bound into SQL: `(job id, token)`.
fn fence_pairs(fences: &[Fence]) -> StoreResult<Vec<(i64, i64)>> {
    fences
        .iter()
        .map(|f| {
            let token = i64::try_from(f.token).map_err(|_| StoreError::InvalidOption {
                option: "fence.token",
                reason: format!("{} does not fit in i64", f.token),
            })?;
            Ok((f.job.0, token))
        })
        .collect()
}

/// Whether `owner` is `claimant`'s own incarnation (same host, same nonce).
fn is_own(owner: &OwnerId, claimant: &OwnerId) -> bool {
    owner.nonce == claimant.nonce && owner.host_id == claimant.host_id
}
