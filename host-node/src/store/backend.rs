//! The interface between [`Store`](super::Store) and a database, grouped by
//! concern. What is the same on both databases but for its statements'
//! texts is written once: [`Statements`] runs a catalogue statement by name
//! with values offered by parameter name, and the groups implemented once
//! for every `sqlx::Pool` of a [`Db`] (schedules, the journal search) are
//! generic. What each database does its own way is a group each backend
//! implements in its folder (`sqlite/`, `postgres/`), one file per group:
//! `enqueue.rs`, `claim.rs`, `settle.rs`, `steer.rs`,
//! `purge.rs`, `journal.rs`. The shared logic — validation, the claim
//! round's liveness judgement and takeovers, explaining a lost fence — lives
//! in the store's modules and calls these; a backend only binds and runs its
//! statements.
//!
//! Why boxed futures rather than `async fn` in the trait: the store picks its
//! backend at run time (from the URL), so it holds `&dyn Backend`, and a trait
//! whose methods are `async fn` cannot be a trait object. One allocation per
//! store call (a statement, never per item) is the price.

use std::future::Future;
use std::pin::Pin;

use super::exchange::{ClaimRequest, ClaimRound, FenceRow, OwnerParams, TakenOver, Takeover};
use super::db::{Arg, Db, Deliver, Statements, Upkeep};
use super::migrate::MigrationSet;
use super::schedule::{ScheduleRow, Swap};
use super::journal::{JournalCursor, SettlementRecord};
use super::purge::Cut;
use super::schedule_sql::JobRow;
use super::steer::{Action, Selection, Steered};
use super::validate::NewJob;
use super::{BackendKind, JobState, OnSuccess, StoreResult};
use leasehold_core::Millis;

/// A future a backend answers with, borrowing its inputs for `'a`.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = StoreResult<T>> + Send + 'a>>;

/// Boxes an operation's body (an `async` block, whose output type this
/// call's signature gives it, so `?` inside needs no annotation).
pub(crate) fn boxed<'a, T>(body: impl Future<Output = StoreResult<T>> + Send + 'a) -> BoxFuture<'a, T> {
    Box::pin(body)
}

/// One database's queue operations: the concerns below, and which database
/// it is. Times are milliseconds since the
/// Unix epoch as the caller's clock read them (SQLite stamps with them;
/// PostgreSQL stamps with the server's clock and uses them only where a doc
/// says so). Fences travel as `(job id, token)` pairs.
pub(crate) trait Backend: std::fmt::Debug + Migrations + Enqueues + Claims + Settles + Schedules + Statements + Steers + Purges + Journals + JournalSearch + Send + Sync {
    /// Which database this is.
    fn kind(&self) -> BackendKind;

    /// Opens the database's LISTEN connection and spawns the task that
    /// forwards its notifications to `deliver`; `None` where the database
    /// has none.
    fn listen(&self, deliver: Deliver) -> BoxFuture<'_, Option<tokio::task::JoinHandle<()>>>;

    /// The background vacuum of the jobs table, where the database wants one.
    fn vacuum(&self) -> Option<Upkeep>;

    /// Closes the pool: waits for checked-out connections to come back.
    fn close(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// Every pool whose database implements each group is a backend.
impl<DB: Db> Backend for sqlx::Pool<DB>
where
    sqlx::Pool<DB>: Migrations + Enqueues + Claims + Settles + Schedules + Statements + Steers + Purges + Journals + JournalSearch,
{
    fn kind(&self) -> BackendKind {
        DB::KIND
    }

    fn listen(&self, deliver: Deliver) -> BoxFuture<'_, Option<tokio::task::JoinHandle<()>>> {
        DB::listen(self, deliver)
    }

    fn vacuum(&self) -> Option<Upkeep> {
        DB::vacuum(self)
    }

    fn close(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>> {
        Box::pin(sqlx::Pool::close(self))
    }
}

/// Installing migration sets.
pub(crate) trait Migrations {
    /// Installs the missing migrations of `sets` (checked by the caller) in
    /// one transaction under the database's migration lock.
    fn migrate<'a>(&'a self, sets: &'a [&'a MigrationSet]) -> BoxFuture<'a, ()>;
}

/// Inserting jobs.
pub(crate) trait Enqueues {
    /// Inserts `jobs` into `queue` in one statement; answers the rows it
    /// inserted as `(id, idempotency key)`: a job whose key was taken has
    /// none (see `exchange::assign_ids`).
    fn insert_jobs<'a>(&'a self, queue: &'a str, jobs: &'a [NewJob], now: i64) -> BoxFuture<'a, Vec<(i64, Option<String>)>>;
}

/// The claim round's statements: claiming, and taking stale leases over.
pub(crate) trait Claims {
    /// One claim statement: completes `request.settle` (answering the ids it
    /// landed on), claims due queued jobs and reports stale candidates.
    fn claim<'a>(&'a self, request: &'a ClaimRequest<'a>) -> BoxFuture<'a, (ClaimRound, Vec<i64>)>;

    /// Compare-and-swap takeovers of stale leases for `owner`, each logged
    /// on the replaced attempt with its note; answers those whose snapshot
    /// still matched.
    fn take_over<'a>(
        &'a self,
        owner: &'a OwnerParams<'a>,
        lease_ms: i64,
        takeovers: &'a [Takeover<'a>],
        now: i64,
    ) -> BoxFuture<'a, Vec<TakenOver>>;
}

/// The fenced writes that settle or renew work, and the read that explains
/// one that did not land.
pub(crate) trait Settles {
    /// Renews the leases of `pairs` (only under `owner_nonce`, if given);
    /// answers the job ids it landed on.
    fn renew<'a>(
        &'a self,
        pairs: &'a [(i64, i64)],
        owner_nonce: Option<&'a str>,
        now: i64,
    ) -> BoxFuture<'a, Vec<i64>>;

    /// Queues `pairs` again unperformed; answers the job ids it landed on.
    fn release<'a>(&'a self, pairs: &'a [(i64, i64)], now: i64) -> BoxFuture<'a, Vec<i64>>;

    /// Completes `pairs` with `results` (JSON text, in the same order), kept
    /// or deleted per `on_success`; answers the job ids it landed on.
    fn complete<'a>(
        &'a self,
        pairs: &'a [(i64, i64)],
        results: &'a [Option<String>],
        on_success: OnSuccess,
        now: i64,
    ) -> BoxFuture<'a, Vec<i64>>;

    /// Fails one attempt: queued again after the delay `retry_delays_ms`
    /// gives for its attempt, or dead-lettered on its last. Answers the new
    /// state and due time, or `None` when the fence did not hold.
    fn fail<'a>(
        &'a self,
        fence: (i64, i64),
        error: &'a str,
        result: Option<&'a str>,
        retry_delays_ms: &'a [i64],
        now: i64,
    ) -> BoxFuture<'a, Option<(JobState, i64)>>;

    /// The fence columns of `ids`, to explain writes that did not land.
    fn fence_rows<'a>(&'a self, ids: &'a [i64]) -> BoxFuture<'a, Vec<FenceRow>>;
}


/// The schedule statements (see `schedule`): each flow is the same on both
/// databases, so one generic implementation serves both (`schedule_sql`).
/// Values are offered by parameter name ([`Arg`]).
pub(crate) trait Schedules {
    /// Inserts a schedule from `offered`; answers its id, or `None` when
    /// its name is taken.
    fn add_schedule<'a>(&'a self, offered: &'a [(&'a str, Arg<'a>)]) -> BoxFuture<'a, Option<i64>>;

    /// The schedules `which` selects with `offered`, by name.
    fn read_schedules<'a>(&'a self, which: ScheduleRead, offered: &'a [(&'a str, Arg<'a>)]) -> BoxFuture<'a, Vec<ScheduleRow>>;

    /// The earliest next slot of `queue`'s active schedules.
    fn next_due<'a>(&'a self, queue: &'a str) -> BoxFuture<'a, Option<i64>>;

    /// Removes, pauses or resumes a schedule; answers how many changed.
    fn change_schedule<'a>(&'a self, which: ScheduleChange, offered: &'a [(&'a str, Arg<'a>)]) -> BoxFuture<'a, u64>;

    /// In one transaction: the swap of a schedule's cursor, the jobs of
    /// `slots` and the schedule's last job (and the queue's notification).
    /// Answers the new jobs' ids, or `None` when the swap found the cursor
    /// moved and nothing was written.
    fn advance<'a>(&'a self, swap: &'a Swap, slots: &'a [Millis], job: &'a JobRow<'a>, now: i64) -> BoxFuture<'a, Option<Vec<i64>>>;
}

/// Which schedules [`Schedules::read_schedules`] reads.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ScheduleRead {
    /// One by `name`, or every one (`name` NULL).
    List,
    /// The active ones of `queue` due at `now`.
    Due,
}

/// What [`Schedules::change_schedule`] does.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ScheduleChange {
    /// Removes `name`.
    Remove,
    /// Pauses `name` at `now`.
    Pause,
    /// Resumes `name`: `last_slot` and `next_slot` move past the pause.
    Resume,
}

/// Cancel and retry by hand (see `steer`), each database its way.
pub(crate) trait Steers {
    /// Runs `action` on `selection` in one transaction at `now` (SQLite;
    /// PostgreSQL stamps its own clock): answers the changed jobs (a retry's
    /// with when each is due), or `None` (rolled back) when listed ids did
    /// not all change.
    fn steer<'a>(&'a self, action: Action<'a>, selection: &'a Selection<'a>, now: i64) -> BoxFuture<'a, Option<Vec<Steered>>>;
}

/// Purging finished work (see `purge`), each database its way.
pub(crate) trait Purges {
    /// Deletes the jobs of `queue` (`None`: every queue) in `states` (final
    /// ones, checked) that finished before `cut`, with their attempt log and
    /// results, range by range; answers how many jobs.
    fn purge_jobs<'a>(&'a self, queue: Option<&'a str>, states: &'a [&'a str], cut: Cut) -> BoxFuture<'a, u64>;

    /// Deletes the journal's rows of `queue` settled before `cut`, range by
    /// range; answers how many.
    fn purge_settlements<'a>(&'a self, queue: Option<&'a str>, cut: Cut) -> BoxFuture<'a, u64>;
}

/// Reading the settlements journal in commit order (see `journal`), each
/// database its way.
pub(crate) trait Journals {
    /// The rows settled since `cursor`, which moves past them.
    fn settlements<'a>(&'a self, cursor: &'a mut JournalCursor) -> BoxFuture<'a, Vec<SettlementRecord>>;

    /// Where the journal's ids are final for a reader holding every id
    /// below `from` (see `Store::settlement_fence`): `None` where ids
    /// commit in order.
    fn settlement_fence(&self, from: i64) -> BoxFuture<'_, Option<(i64, u64)>>;
}

/// Searching the settlements journal by time (see `dashboard::activity`).
pub(crate) trait JournalSearch {
    /// The position in the journal's commit order from which rows written
    /// at or after `at` (ms) start; `None` for an empty journal.
    fn journal_key(&self, at: u64) -> BoxFuture<'_, Option<u64>>;

    /// The journal's clock now: `now` (the caller's) where the caller
    /// stamps, else the server's.
    fn journal_now(&self, now: Millis) -> BoxFuture<'_, Millis>;
}
