//! What a dashboard reads (the `leasehold ui` command): the queues with their
//! jobs counted by state, the settlements of the last hour in time buckets,
//! pages of jobs with filters, one job's settlements, and a change marker to
//! poll.
//!
//! Every read stays fast on a table of millions of jobs: counts and pages go
//! through indexes (the partial indexes of queued, running, dead and
//! cancelled jobs, the primary key), the journal is entered by a binary
//! search on its commit order (its rows are in time order there, give or
//! take a clock's skew), and the one count no index serves — the succeeded
//! jobs of a large table — is estimated from a fixed sample of job ids and
//! said to be ([`Overview::succeeded_estimated`]).

use leasehold_core::Millis;

use super::{JobId, JobRecord, JobState};

mod activity;
mod overview;
mod pages;

/// Up to this many job ids between the oldest and the newest job, the
/// succeeded jobs are counted exactly; above it they are estimated.
pub const EXACT_COUNT_SPAN: u64 = 100_000;

/// How many job ids an estimate samples (one in each of as many equal
/// slices of the id range, at a fixed pseudo-random place): a share `p` of
/// the jobs is estimated within about `sqrt((1 - p) / (p * 4096))` of
/// itself (0.5% at 90%, 5% at 10%).
pub const SAMPLE_IDS: usize = 4096;

/// At most this many job ids are looked at for one page of a filtered list
/// that no index serves (a state among many, a text): a page that finds
/// fewer jobs there ends early and says where to go on ([`JobPage::next`]).
pub const PAGE_WINDOW: i64 = 100_000;

/// How far apart in time two journal rows in commit order may be written
/// the other way round (writers' clocks on one host; one server's clock
/// across a transaction): the binary search into the journal starts this
/// much earlier than asked, and the rows are filtered by time after.
const JOURNAL_SKEW_MS: u64 = 60_000;

/// A job's state as a person reads it: the stored state, with a queued job
/// told apart by whether it is due and whether it ran before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ShownState {
    /// Queued, due, never attempted.
    Queued,
    /// Queued, not yet due, never attempted.
    Scheduled,
    /// Queued after a failed attempt (due or waiting for its backoff).
    Retrying,
    /// Claimed, under a lease.
    Running,
    /// Completed.
    Succeeded,
    /// Dead-lettered.
    Dead,
    /// Cancelled by hand.
    Cancelled,
}

impl ShownState {
    /// Every state, in the order a dashboard shows them.
    pub const ALL: [ShownState; 7] = [
        ShownState::Queued,
        ShownState::Scheduled,
        ShownState::Retrying,
        ShownState::Running,
        ShownState::Succeeded,
        ShownState::Dead,
        ShownState::Cancelled,
    ];

    /// Its name: `queued`, `scheduled`, `retrying`, `running`, `succeeded`,
    /// `dead`, `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            ShownState::Queued => "queued",
            ShownState::Scheduled => "scheduled",
            ShownState::Retrying => "retrying",
            ShownState::Running => "running",
            ShownState::Succeeded => "succeeded",
            ShownState::Dead => "dead",
            ShownState::Cancelled => "cancelled",
        }
    }

    /// Reads a name [`ShownState::as_str`] gives; `None` for anything else.
    pub fn parse(name: &str) -> Option<ShownState> {
        ShownState::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The stored state it is one of.
    pub fn stored(self) -> JobState {
        match self {
            ShownState::Queued | ShownState::Scheduled | ShownState::Retrying => JobState::Queued,
            ShownState::Running => JobState::Running,
            ShownState::Succeeded => JobState::Succeeded,
            ShownState::Dead => JobState::Dead,
            ShownState::Cancelled => JobState::Cancelled,
        }
    }

    /// The state `job` shows at `now` (ms since the Unix epoch).
    pub fn of(job: &JobRecord, now: Millis) -> ShownState {
        match job.state {
            JobState::Queued if job.attempts > 0 => ShownState::Retrying,
            JobState::Queued if job.run_at > now => ShownState::Scheduled,
            JobState::Queued => ShownState::Queued,
            JobState::Running => ShownState::Running,
            JobState::Succeeded => ShownState::Succeeded,
            JobState::Dead => ShownState::Dead,
            JobState::Cancelled => ShownState::Cancelled,
        }
    }

    /// The split of stored `queued` this is, for the page statements.
    fn queued_split(self) -> Option<&'static str> {
        matches!(self, ShownState::Queued | ShownState::Scheduled | ShownState::Retrying).then(|| self.as_str())
    }
}

/// Jobs of one queue by [`ShownState`].
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct StateCounts {
    /// Due, never attempted.
    pub queued: u64,
    /// Not yet due, never attempted.
    pub scheduled: u64,
    /// Queued again after a failed attempt.
    pub retrying: u64,
    /// Under a lease (live or stale).
    pub running: u64,
    /// Completed: exact, or estimated when [`Overview::succeeded_estimated`].
    pub succeeded: u64,
    /// Dead-lettered.
    pub dead: u64,
    /// Cancelled.
    pub cancelled: u64,
}

/// One queue on the overview.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct QueueSummary {
    /// The queue.
    pub queue: String,
    /// Its jobs by state.
    pub counts: StateCounts,
    /// When it was paused (ms since the Unix epoch), if it is.
    pub paused_at_ms: Option<u64>,
    /// Who paused it, if it is paused.
    pub paused_by: Option<String>,
}

/// Every queue with its counts ([`Store::overview`](super::Store::overview)).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Overview {
    /// The queues that have jobs or are paused, by name. A queue whose only
    /// jobs are a few succeeded ones among millions may be missed while the
    /// succeeded jobs are estimated.
    pub queues: Vec<QueueSummary>,
    /// Whether the succeeded counts are estimates: the ids from the oldest
    /// job to the newest span more than [`EXACT_COUNT_SPAN`]. Every other
    /// count is exact.
    pub succeeded_estimated: bool,
    /// Job ids looked at for the estimate (0 when exact).
    pub sampled_ids: u64,
    /// Job ids from the oldest job to the newest (0: no job).
    pub id_span: u64,
}

/// Mean and longest of a set of spans, in ms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SpanStats {
    /// How many spans.
    pub count: u64,
    /// Their mean, rounded down.
    pub mean_ms: u64,
    /// The longest.
    pub max_ms: u64,
}

/// Settlements in one time bucket ([`Store::activity`](super::Store::activity)).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ActivityBucket {
    /// The bucket's start, ms since the Unix epoch.
    pub start_ms: u64,
    /// Attempts completed.
    pub done: u64,
    /// Attempts failed with attempts left.
    pub retrying: u64,
    /// Jobs dead-lettered.
    pub dead: u64,
    /// Leases taken over from their owner (reclaimed once stale, or stolen).
    pub lost: u64,
    /// Of `lost`, the ones stolen with evidence before they were stale.
    pub stolen: u64,
    /// Claims handed back unstarted.
    pub released: u64,
    /// Jobs cancelled by hand.
    pub cancelled: u64,
    /// From due to claimed, of the attempts that ended their job (done,
    /// dead) and are still its latest: a retry's settle moves the job's due
    /// time, so earlier attempts' waits are not kept.
    pub waited: SpanStats,
    /// From claimed to settled, of the attempts that ended their work
    /// (done, retrying, dead).
    pub ran: SpanStats,
}

/// The settlements of a time range in equal buckets ([`Store::activity`](super::Store::activity)).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Activity {
    /// The first bucket's start, ms since the Unix epoch.
    pub since_ms: u64,
    /// Each bucket's length, ms.
    pub bucket_ms: u64,
    /// Every bucket from `since_ms` on, oldest first (empty ones too).
    pub buckets: Vec<ActivityBucket>,
}

/// Which jobs a page lists ([`Store::job_page`](super::Store::job_page)); `Default` is every job,
/// newest first, 50 to a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobQuery {
    /// Only this queue's.
    pub queue: Option<String>,
    /// Only jobs in this state.
    pub state: Option<ShownState>,
    /// Only jobs whose payload (its JSON text; a command's line is in it)
    /// contains this text, case-sensitive; 1 to 1024 bytes.
    pub text: Option<String>,
    /// Only jobs with a lower id (the `next` of the page before).
    pub before: Option<JobId>,
    /// At most this many, 1 to 500.
    pub limit: u32,
}

impl Default for JobQuery {
    fn default() -> Self {
        JobQuery { queue: None, state: None, text: None, before: None, limit: 50 }
    }
}

/// One page of jobs, newest first ([`Store::job_page`](super::Store::job_page)).
#[derive(Clone, Debug, PartialEq)]
pub struct JobPage {
    /// The jobs, without their attempt logs.
    pub jobs: Vec<JobRecord>,
    /// Where the next page starts (its [`JobQuery::before`]); `None` when no
    /// older job can match. A page with fewer jobs than asked may still have
    /// a `next`: its search stopped after [`PAGE_WINDOW`] ids.
    pub next: Option<JobId>,
    /// The lowest id this page looked at, when it stopped early at the end
    /// of its window (so a dashboard can say how far it searched).
    pub searched_down_to: Option<JobId>,
}

/// The longest search text a [`JobQuery`] takes, in bytes.
pub const MAX_SEARCH_TEXT: usize = 1024;
