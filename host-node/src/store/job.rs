//! The shapes a queue hands in and out: job ids, fences, enqueue options,
//! claimed jobs, and the records inspection reads.

use std::fmt;
use std::time::Duration;

use leasehold_core::Millis;
use leasehold_core::lease::{FenceOutcome, OwnerId};

/// A job's id: assigned by the database at enqueue, unique for the life of
/// the store, never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(pub i64);

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Where a job is in its life.
///
/// `queued` → `running` (claim) → `succeeded` (complete) | `queued` again
/// (fail with attempts left, after a backoff) | `dead` (fail on the last
/// attempt: the dead letter). A `running` job whose lease went stale stays
/// `running` until a claimant reclaims or steals it. A queued or running
/// job can be `cancelled` ([`Store::cancel`](super::Store::cancel)); a dead
/// or cancelled one can be queued again ([`Store::retry`](super::Store::retry)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobState {
    /// Waiting for its due time and a claimant.
    Queued,
    /// Claimed, under a lease.
    Running,
    /// Completed by the owner of its last lease.
    Succeeded,
    /// Dead-lettered: failed on its last attempt; `last_error` says why.
    Dead,
    /// Cancelled by hand; never retried unless asked (`cancellation` says
    /// who, when and why).
    Cancelled,
}

impl JobState {
    /// The string stored in the `state` column.
    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Succeeded => "succeeded",
            JobState::Dead => "dead",
            JobState::Cancelled => "cancelled",
        }
    }

    /// Reads the `state` column; `None` for anything else.
    pub fn parse(s: &str) -> Option<JobState> {
        Some(match s {
            "queued" => JobState::Queued,
            "running" => JobState::Running,
            "succeeded" => JobState::Succeeded,
            "dead" => JobState::Dead,
            "cancelled" => JobState::Cancelled,
            _ => return None,
        })
    }
}

/// The fence of one lease: the job and the fencing token its claim was
/// given. Every renewal and settlement names it; the database applies the
/// write only while the job still carries this token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fence {
    /// The job.
    pub job: JobId,
    /// The fencing token of the claim: strictly greater than every token
    /// issued for this job before.
    pub token: u64,
}

/// Options of one enqueue. `Default` is: due now, priority 0, 25 attempts,
/// no idempotency key, no timeout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnqueueOptions {
    /// Absolute due time (ms since the Unix epoch). Exclusive with `delay`.
    pub run_at: Option<Millis>,
    /// Due this long after the enqueue (on PostgreSQL: after the database's
    /// clock at the insert). Exclusive with `run_at`. Refused when it puts
    /// the job due past `i64::MAX` ms since the Unix epoch less a day (room
    /// for the database's clock).
    pub delay: Option<Duration>,
    /// Lower runs first; ties go to the earlier due time, then the lower id.
    pub priority: i32,
    /// Claims the job may have in all, at least 1. A fail on the last one,
    /// or a lease lost on it, dead-letters the job.
    pub max_attempts: u32,
    /// At most one job per queue and key: a second enqueue with the same key
    /// returns the first job's id and writes nothing, for as long as that
    /// job is kept (once purged, or deleted by a completion under
    /// `OnSuccess::Delete`, the key makes a new job). 1 to
    /// [`MAX_IDEMPOTENCY_KEY_LEN`](super::validate::MAX_IDEMPOTENCY_KEY_LEN)
    /// bytes, without the NUL character.
    pub idempotency_key: Option<String>,
    /// How long one attempt may run, for the handler to hold it to: it is
    /// handed over with the claim ([`ClaimedJob::timeout`]), and nothing else
    /// enforces it (a [`Worker`](crate::worker::Worker) runs its handler
    /// past it; the command-line tool ends a command past it, SIGTERM then
    /// SIGKILL after its grace). At least 1 ms; kept in whole milliseconds.
    pub timeout: Option<Duration>,
}

/// Default attempts of a job (as graphile-worker and Sidekiq): the core's, which every
/// store shares.
pub const DEFAULT_MAX_ATTEMPTS: u32 = leasehold_core::backoff::DEFAULT_MAX_ATTEMPTS;

impl Default for EnqueueOptions {
    fn default() -> Self {
        EnqueueOptions {
            run_at: None,
            delay: None,
            priority: 0,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            idempotency_key: None,
            timeout: None,
        }
    }
}

/// A job handed to a claimant: everything the worker needs to perform it and
/// to fence its writes.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimedJob {
    /// The job.
    pub id: JobId,
    /// The fencing token of this claim.
    pub token: u64,
    /// The payload as enqueued.
    pub payload: serde_json::Value,
    /// Which attempt of the job's budget this is, from 1 to `max_attempts`
    /// ([`Store::retry`](super::Store::retry) gives a fresh budget, so the
    /// count starts again from 1; the job's attempt log and its settlements
    /// number its attempts over its whole life).
    pub attempt: u32,
    /// The job's attempt budget.
    pub max_attempts: u32,
    /// The per-attempt timeout given at enqueue, for the handler to enforce
    /// (see [`EnqueueOptions::timeout`]).
    pub timeout: Option<Duration>,
    /// When the lease was stamped (the database's clock on PostgreSQL, the
    /// caller's `now` on SQLite), ms since the Unix epoch.
    pub leased_at: Millis,
    /// Whether this claim took the job over from a stale owner.
    pub reclaimed: bool,
}

impl ClaimedJob {
    /// The fence every write about this claim must carry.
    pub fn fence(&self) -> Fence {
        Fence {
            job: self.id,
            token: self.token,
        }
    }
}

/// How one attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttemptOutcome {
    /// Still under its lease (or stale and not yet reclaimed).
    Running,
    /// Completed.
    Succeeded,
    /// Failed with an error (retried or dead-lettered: see the job's state).
    Failed,
    /// Its lease was taken over by another claimant (reclaim after the
    /// stale window, or a steal with evidence); `error` says by whom.
    LeaseLost,
}

impl AttemptOutcome {
    /// The string stored in the `outcome` column.
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Running => "running",
            AttemptOutcome::Succeeded => "succeeded",
            AttemptOutcome::Failed => "failed",
            AttemptOutcome::LeaseLost => "lease-lost",
        }
    }

    /// Reads the `outcome` column; `None` for anything else.
    pub fn parse(s: &str) -> Option<AttemptOutcome> {
        Some(match s {
            "running" => AttemptOutcome::Running,
            "succeeded" => AttemptOutcome::Succeeded,
            "failed" => AttemptOutcome::Failed,
            "lease-lost" => AttemptOutcome::LeaseLost,
            _ => return None,
        })
    }
}

/// One claim of a job and how it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttemptRecord {
    /// The fencing token the claim was given.
    pub token: u64,
    /// Who held the lease.
    pub owner: OwnerId,
    /// When the lease was first stamped.
    pub started_at: Millis,
    /// When the attempt ended (`None` while running).
    pub ended_at: Option<Millis>,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// The error of a failed attempt, or who took a lost lease over.
    pub error: Option<String>,
}

/// The exact lease a steal compares and swaps on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaseSnapshot {
    /// The recorded owner.
    pub owner: OwnerId,
    /// The fencing token of its claim.
    pub token: u64,
    /// Its last persisted heartbeat.
    pub heartbeat_at: Option<Millis>,
    /// The lease's stale window, in milliseconds.
    pub lease_ms: u64,
}

/// Everything the store knows about one job, with its attempts.
#[derive(Clone, Debug, PartialEq)]
pub struct JobRecord {
    /// The job.
    pub id: JobId,
    /// Its queue.
    pub queue: String,
    /// Where it is in its life.
    pub state: JobState,
    /// Its payload.
    pub payload: serde_json::Value,
    /// Lower runs first.
    pub priority: i32,
    /// When it is (or was) due, ms since the Unix epoch.
    pub run_at: Millis,
    /// Claims counted against its budget so far (a retry sets it back to
    /// 0; [`JobRecord::attempt_log`] keeps every attempt).
    pub attempts: u32,
    /// Its attempt budget.
    pub max_attempts: u32,
    /// Its idempotency key, if any.
    pub idempotency_key: Option<String>,
    /// Its per-attempt timeout, if any.
    pub timeout: Option<Duration>,
    /// The token of its latest claim (0: never claimed).
    pub token: u64,
    /// The lease of a running job.
    pub lease: Option<LeaseSnapshot>,
    /// The error of the last failed attempt.
    pub last_error: Option<String>,
    /// When it was enqueued.
    pub created_at: Millis,
    /// When it succeeded, was dead-lettered or was cancelled.
    pub finished_at: Option<Millis>,
    /// Who cancelled it, when and why, while it is cancelled.
    pub cancellation: Option<Cancellation>,
    /// Its attempts, oldest first; a running one is the last.
    pub attempt_log: Vec<AttemptRecord>,
}

/// Who cancelled a job, when and why ([`Store::cancel`](super::Store::cancel)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cancellation {
    /// When, ms since the Unix epoch (the database's clock on PostgreSQL).
    pub at: Millis,
    /// Who, as the canceller named itself (the CLI: `user@host`).
    pub by: String,
    /// Why, if a reason was given.
    pub reason: Option<String>,
}

/// Jobs of one queue by state ([`Store::counts`](super::Store::counts)):
/// the stored `queued` state split as `leasehold status`, the dashboard and
/// the npm package's `counts()` split it
/// ([`ShownState`](super::dashboard::ShownState)).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct QueueCounts {
    /// The queue.
    pub queue: String,
    /// Jobs due and never attempted.
    pub queued: u64,
    /// Jobs not yet due and never attempted (enqueued with a delay or a
    /// time).
    pub scheduled: u64,
    /// Jobs queued again after a failed attempt, due or waiting out their
    /// backoff.
    pub retrying: u64,
    /// Jobs under a lease (live or stale).
    pub running: u64,
    /// Jobs completed.
    pub succeeded: u64,
    /// Jobs dead-lettered.
    pub dead: u64,
    /// Jobs cancelled.
    pub cancelled: u64,
}

impl QueueCounts {
    /// Jobs waiting to be claimed, due or not: queued, scheduled and
    /// retrying together (the stored state `queued`).
    pub fn waiting(&self) -> u64 {
        self.queued + self.scheduled + self.retrying
    }
}

/// What a fenced `fail` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOutcome {
    /// Attempts remain: the job is queued again, due at `at` (the backoff).
    Retrying {
        /// The new due time.
        at: Millis,
    },
    /// That was the last attempt: the job is dead-lettered with the error.
    DeadLettered,
    /// The fence was lost; nothing changed.
    Lost(FenceOutcome),
}

impl FailOutcome {
    /// The fence answer: `Updated` unless the fence was lost.
    pub fn fence(self) -> FenceOutcome {
        match self {
            FailOutcome::Lost(lost) => lost,
            FailOutcome::Retrying { .. } | FailOutcome::DeadLettered => FenceOutcome::Updated,
        }
    }
}

/// What a steal did, once the steal rules accepted it.
#[derive(Clone, Debug, PartialEq)]
pub enum StealOutcome {
    /// The claimant holds the job now, under a fresh token.
    Stolen(ClaimedJob),
    /// The stolen lease was the job's last attempt: the job is dead-lettered
    /// instead of handed out.
    DeadLettered,
    /// The job no longer matches the snapshot (renewed, settled or taken by
    /// someone else since it was read): nothing changed.
    SnapshotChanged,
}
