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

use std::collections::BTreeMap;
use std::future::Future;

use leasehold_core::Millis;

use super::journal::{SettlementRecord, record};
use super::{Pool, JobId, JobRecord, JobState, Store, StoreError, StoreResult, rows, validate};

#[cfg(feature = "postgres")]
use super::dashboard_sql::postgres as pg_sql;
#[cfg(feature = "sqlite")]
use super::dashboard_sql::sqlite as lite_sql;

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

/// Every queue with its counts ([`Store::overview`]).
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

/// Settlements in one time bucket ([`Store::activity`]).
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

/// The settlements of a time range in equal buckets ([`Store::activity`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Activity {
    /// The first bucket's start, ms since the Unix epoch.
    pub since_ms: u64,
    /// Each bucket's length, ms.
    pub bucket_ms: u64,
    /// Every bucket from `since_ms` on, oldest first (empty ones too).
    pub buckets: Vec<ActivityBucket>,
}

/// Which jobs a page lists ([`Store::job_page`]); `Default` is every job,
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

/// One page of jobs, newest first ([`Store::job_page`]).
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

impl Store {
    /// Every queue that has jobs or is paused, with its jobs counted by
    /// [`ShownState`] at `now` (SQLite; PostgreSQL uses its own clock), all
    /// from one snapshot. Exact but for the succeeded jobs of a table whose
    /// ids span more than [`EXACT_COUNT_SPAN`]: those are estimated from
    /// [`SAMPLE_IDS`] ids, which [`Overview::succeeded_estimated`] says.
    ///
    /// # Errors
    /// [`StoreError::Database`] when a read fails.
    pub async fn overview(&self, now: Millis) -> StoreResult<Overview> {
        let now_ms = validate::millis("now", now)?;
        let raw = match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                let mut tx = pool.begin().await?;
                let queued = sqlx::query_as(lite_sql::QUEUED).bind(now_ms).fetch_all(&mut *tx).await?;
                let running = sqlx::query_as(lite_sql::RUNNING).fetch_all(&mut *tx).await?;
                let parked = sqlx::query_as(lite_sql::PARKED).fetch_all(&mut *tx).await?;
                let span: (Option<i64>, Option<i64>) = sqlx::query_as(lite_sql::SPAN).fetch_one(&mut *tx).await?;
                let succeeded = match Sample::plan(span) {
                    Sample::Exact => Succeeded::Exact(sqlx::query_as(lite_sql::SUCCEEDED).fetch_all(&mut *tx).await?),
                    Sample::Ids { ids, span } => {
                        let json = serde_json::to_string(&ids).expect("ids serialize");
                        let rows = sqlx::query_as(lite_sql::SAMPLE).bind(json).fetch_all(&mut *tx).await?;
                        Succeeded::Sampled { rows, sampled: ids.len() as u64, span }
                    }
                };
                tx.commit().await?;
                RawOverview { queued, running, parked, succeeded, span }
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let _ = now_ms;
                let mut tx = pool.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").await?;
                let queued = sqlx::query_as(pg_sql::QUEUED).fetch_all(&mut *tx).await?;
                let running = sqlx::query_as(pg_sql::RUNNING).fetch_all(&mut *tx).await?;
                let parked = sqlx::query_as(pg_sql::PARKED).fetch_all(&mut *tx).await?;
                let span: (Option<i64>, Option<i64>) = sqlx::query_as(pg_sql::SPAN).fetch_one(&mut *tx).await?;
                let succeeded = match Sample::plan(span) {
                    Sample::Exact => Succeeded::Exact(sqlx::query_as(pg_sql::SUCCEEDED).fetch_all(&mut *tx).await?),
                    Sample::Ids { ids, span } => {
                        let rows = sqlx::query_as(pg_sql::SAMPLE).bind(&ids).fetch_all(&mut *tx).await?;
                        Succeeded::Sampled { rows, sampled: ids.len() as u64, span }
                    }
                };
                tx.commit().await?;
                RawOverview { queued, running, parked, succeeded, span }
            }
        };
        let paused = self.paused_queues().await?;
        Ok(raw.into_overview(paused))
    }

    /// The settlements from `since` to now in buckets of `bucket` (both ms;
    /// at most 1,440 buckets), with how long the settled attempts waited
    /// and ran ([`ActivityBucket`]). Times are the journal's: the settling
    /// caller's clock on SQLite, the server's on PostgreSQL. `now` is the
    /// end of the range (SQLite; PostgreSQL uses its own clock).
    ///
    /// # Errors
    /// [`StoreError::InvalidOption`] (`bucket`) for a zero bucket or more
    /// than 1,440 of them; [`StoreError::Database`] when a read fails.
    pub async fn activity(&self, since: Millis, bucket_ms: u64, now: Millis) -> StoreResult<Activity> {
        let since_ms = validate::millis("since", since)?;
        let now = match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => now,
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let _ = now;
                Millis(validate::unsigned("clock", "now", sqlx::query_scalar(pg_sql::NOW).fetch_one(pool).await?)?)
            }
        };
        let count = match bucket_ms {
            0 => 0,
            _ => now.since(since).div_ceil(bucket_ms).max(1),
        };
        if count == 0 || count > 1440 {
            return Err(StoreError::InvalidOption {
                option: "bucket",
                reason: format!("{bucket_ms} ms makes {count} buckets from since to now: give 1 to 1440"),
            });
        }
        let bucket = i64::try_from(bucket_ms).unwrap_or(i64::MAX);
        let from = since.0.saturating_sub(JOURNAL_SKEW_MS);
        let rows: Vec<ActivityRow> = match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                let Some(start) = lite_journal_key(pool, from).await? else { return Ok(Activity::empty(since, bucket_ms, count)) };
                sqlx::query_as(lite_sql::ACTIVITY).bind(start).bind(since_ms).bind(bucket).fetch_all(pool).await?
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let Some(start) = pg_journal_key(pool, from).await? else { return Ok(Activity::empty(since, bucket_ms, count)) };
                sqlx::query_as(pg_sql::ACTIVITY).bind(start.to_string()).bind(since_ms).bind(bucket).fetch_all(pool).await?
            }
        };
        let mut activity = Activity::empty(since, bucket_ms, count);
        for row in rows {
            activity.add(row);
        }
        Ok(activity)
    }

    /// The settlements journaled for `job`, in commit order: those written
    /// from its creation on (to its finish, when it has finished). A job's
    /// settlements outlive it ([`Store::settlements`]); this reads them for
    /// a job still kept.
    ///
    /// # Errors
    /// [`StoreError::Database`] when a read fails; [`StoreError::CorruptRow`]
    /// for a row the store would not write.
    pub async fn job_settlements(&self, job: &JobRecord) -> StoreResult<Vec<SettlementRecord>> {
        let from = job.created_at.0.saturating_sub(JOURNAL_SKEW_MS);
        let to = job.finished_at.map(|at| at.0.saturating_add(JOURNAL_SKEW_MS));
        match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                let Some(start) = lite_journal_key(pool, from).await? else { return Ok(Vec::new()) };
                let end = match to {
                    Some(to) => lite_journal_key(pool, to).await?.unwrap_or(i64::MAX),
                    None => i64::MAX,
                };
                let rows = sqlx::query(lite_sql::JOB_SETTLEMENTS).bind(start).bind(end).bind(job.id.0).fetch_all(pool).await?;
                rows.iter().map(record).collect()
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let Some(start) = pg_journal_key(pool, from).await? else { return Ok(Vec::new()) };
                let end = match to {
                    Some(to) => pg_journal_key(pool, to).await?.unwrap_or(u64::MAX),
                    None => u64::MAX,
                };
                let rows = sqlx::query(pg_sql::JOB_SETTLEMENTS)
                    .bind(start.to_string())
                    .bind(end.to_string())
                    .bind(job.id.0)
                    .fetch_all(pool)
                    .await?;
                rows.iter().map(record).collect()
            }
        }
    }

    /// One page of jobs matching `query`, newest first, without attempt
    /// logs; `now` (SQLite; PostgreSQL uses its own clock) tells queued,
    /// scheduled and retrying apart. Pages by id (keyset): a page costs the
    /// same at any depth. A state with an index of its own (running, dead,
    /// cancelled) is read through it; any other filter looks at up to
    /// [`PAGE_WINDOW`] ids and may end the page early ([`JobPage::next`]).
    ///
    /// # Errors
    /// [`StoreError::InvalidQueueName`] for a malformed queue;
    /// [`StoreError::InvalidOption`] (`limit`, `text`) for a limit outside 1
    /// to 500 or a text empty or longer than [`MAX_SEARCH_TEXT`];
    /// [`StoreError::Database`] when the read fails.
    pub async fn job_page(&self, query: &JobQuery, now: Millis) -> StoreResult<JobPage> {
        if let Some(queue) = &query.queue {
            validate::queue_name(queue)?;
        }
        if !(1..=500).contains(&query.limit) {
            return Err(StoreError::InvalidOption { option: "limit", reason: format!("{} is not 1 to 500", query.limit) });
        }
        if query.text.as_ref().is_some_and(|t| t.is_empty() || t.len() > MAX_SEARCH_TEXT) {
            return Err(StoreError::InvalidOption {
                option: "text",
                reason: format!("give 1 to {MAX_SEARCH_TEXT} bytes to search for"),
            });
        }
        // PostgreSQL splits queued jobs by its own clock.
        #[cfg_attr(not(feature = "sqlite"), allow(unused_variables))]
        let now_ms = validate::millis("now", now)?;
        let indexed = matches!(query.state, Some(ShownState::Running | ShownState::Dead | ShownState::Cancelled));
        let span: (Option<i64>, Option<i64>) = match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => sqlx::query_as(lite_sql::SPAN).fetch_one(pool).await?,
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => sqlx::query_as(pg_sql::SPAN).fetch_one(pool).await?,
        };
        let (Some(oldest), Some(newest)) = span else {
            return Ok(JobPage { jobs: Vec::new(), next: None, searched_down_to: None });
        };
        let below = query.before.map_or(newest.saturating_add(1), |b| b.0.min(newest.saturating_add(1)));
        let floor = if indexed { oldest } else { below.saturating_sub(PAGE_WINDOW).max(oldest) };
        let queue = query.queue.as_deref();
        let stored = query.state.map(|s| s.stored().as_str());
        let split = query.state.and_then(ShownState::queued_split);
        let text = query.text.as_deref();
        let limit = i64::from(query.limit);
        let found = match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                let sql = match query.state {
                    Some(ShownState::Running) => lite_sql::PAGE_RUNNING,
                    Some(ShownState::Dead | ShownState::Cancelled) => lite_sql::PAGE_PARKED,
                    _ => lite_sql::PAGE,
                };
                let rows = sqlx::query(sql)
                    .bind(below)
                    .bind(floor)
                    .bind(queue)
                    .bind(stored)
                    .bind(split)
                    .bind(now_ms)
                    .bind(text)
                    .bind(limit)
                    .fetch_all(pool)
                    .await?;
                rows.iter().map(rows::job).collect::<StoreResult<Vec<_>>>()?
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let sql = match query.state {
                    Some(ShownState::Running) => pg_sql::PAGE_RUNNING,
                    Some(ShownState::Dead | ShownState::Cancelled) => pg_sql::PAGE_PARKED,
                    _ => pg_sql::PAGE,
                };
                let rows = sqlx::query(sql)
                    .bind(below)
                    .bind(floor)
                    .bind(queue)
                    .bind(stored)
                    .bind(split)
                    .bind(text)
                    .bind(limit)
                    .fetch_all(pool)
                    .await?;
                rows.iter().map(rows::job).collect::<StoreResult<Vec<_>>>()?
            }
        };
        Ok(page(found, query.limit as usize, floor, oldest))
    }

    /// A text that changes when jobs change state: enqueued, claimed,
    /// settled, cancelled, retried, purged, or a queue paused or resumed
    /// (not at a lease renewal). Compare two answers for equality; the text
    /// itself means nothing. Cheap: a few index lookups.
    ///
    /// # Errors
    /// [`StoreError::Database`] when the read fails.
    pub async fn change_marker(&self) -> StoreResult<String> {
        Ok(match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => sqlx::query_scalar(lite_sql::CHANGE_MARKER).fetch_one(pool).await?,
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => sqlx::query_scalar(pg_sql::CHANGE_MARKER).fetch_one(pool).await?,
        })
    }
}

/// The page's `next`: after a full page, its last id; after a short one,
/// its window's floor when older jobs remain below it.
fn page(jobs: Vec<JobRecord>, limit: usize, floor: i64, oldest: i64) -> JobPage {
    if jobs.len() >= limit {
        let next = jobs.last().map(|j| j.id).filter(|id| id.0 > oldest);
        return JobPage { jobs, next, searched_down_to: None };
    }
    let more = floor > oldest;
    JobPage {
        jobs,
        next: more.then_some(JobId(floor)),
        searched_down_to: more.then_some(JobId(floor)),
    }
}

/// `(queue, queued, scheduled, retrying)`.
type QueuedRow = (String, i64, i64, i64);
/// `(queue, jobs)`.
type QueueRow = (String, i64);
/// `(queue, state, jobs)` or `(queue, state)` of a sample.
type QueueStateRow = (String, String, i64);
/// `(bucket, outcome, n, stolen, waited_n, waited_sum, waited_max, ran_n, ran_sum, ran_max)`.
type ActivityRow = (i64, String, i64, i64, i64, i64, Option<i64>, i64, i64, Option<i64>);

/// How the succeeded jobs are counted.
enum Sample {
    Exact,
    Ids { ids: Vec<i64>, span: u64 },
}

impl Sample {
    /// Exact up to [`EXACT_COUNT_SPAN`] ids from the oldest job to the
    /// newest; above, [`SAMPLE_IDS`] ids, one in each equal slice of the
    /// range at a place fixed by the range's start (so an unchanged range
    /// gives an unchanged estimate, and ids in a regular pattern — two
    /// queues enqueued in turn — are not hit in step).
    fn plan((oldest, newest): (Option<i64>, Option<i64>)) -> Sample {
        let (Some(oldest), Some(newest)) = (oldest, newest) else { return Sample::Exact };
        let span = newest.abs_diff(oldest) + 1;
        if span <= EXACT_COUNT_SPAN {
            return Sample::Exact;
        }
        let slices = SAMPLE_IDS as u128;
        let ids = (0..slices)
            .map(|i| {
                let start = u128::from(span) * i / slices;
                let width = (u128::from(span) * (i + 1) / slices - start).max(1);
                let offset = u128::from(mix(oldest as u64 ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))) % width;
                oldest + (start + offset) as i64
            })
            .collect();
        Sample::Ids { ids, span }
    }
}

/// splitmix64's finaliser: a fixed, well-spread pseudo-random number.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

enum Succeeded {
    Exact(Vec<QueueRow>),
    Sampled { rows: Vec<(String, String)>, sampled: u64, span: u64 },
}

struct RawOverview {
    queued: Vec<QueuedRow>,
    running: Vec<QueueRow>,
    parked: Vec<QueueStateRow>,
    succeeded: Succeeded,
    span: (Option<i64>, Option<i64>),
}

/// The summary of `queue`, blank when it is new.
fn entry(queues: &mut BTreeMap<String, QueueSummary>, queue: String) -> &mut QueueSummary {
    let blank = QueueSummary { queue: queue.clone(), counts: StateCounts::default(), paused_at_ms: None, paused_by: None };
    queues.entry(queue).or_insert(blank)
}

impl RawOverview {
    fn into_overview(self, paused: Vec<super::PausedQueue>) -> Overview {
        let n = |v: i64| v.max(0) as u64;
        let mut queues: BTreeMap<String, QueueSummary> = BTreeMap::new();
        for (queue, queued, scheduled, retrying) in self.queued {
            let c = &mut entry(&mut queues, queue).counts;
            (c.queued, c.scheduled, c.retrying) = (n(queued), n(scheduled), n(retrying));
        }
        for (queue, running) in self.running {
            entry(&mut queues, queue).counts.running = n(running);
        }
        for (queue, state, count) in self.parked {
            let c = &mut entry(&mut queues, queue).counts;
            match state.as_str() {
                "dead" => c.dead = n(count),
                _ => c.cancelled = n(count),
            }
        }
        let (estimated, sampled) = match self.succeeded {
            Succeeded::Exact(rows) => {
                for (queue, count) in rows {
                    entry(&mut queues, queue).counts.succeeded = n(count);
                }
                (false, 0)
            }
            Succeeded::Sampled { rows, sampled, span } => {
                let mut hits: BTreeMap<String, u64> = BTreeMap::new();
                for (queue, state) in rows {
                    if state == "succeeded" {
                        *hits.entry(queue).or_default() += 1;
                    }
                }
                for (queue, hit) in hits {
                    // Rounded to the nearest whole job.
                    let estimate = (u128::from(hit) * u128::from(span) * 2 + u128::from(sampled)) / (2 * u128::from(sampled));
                    entry(&mut queues, queue).counts.succeeded = estimate as u64;
                }
                (true, sampled)
            }
        };
        for p in paused {
            let q = entry(&mut queues, p.queue);
            q.paused_at_ms = Some(p.paused_at.0);
            q.paused_by = Some(p.paused_by);
        }
        let id_span = match self.span {
            (Some(oldest), Some(newest)) => newest.abs_diff(oldest) + 1,
            _ => 0,
        };
        Overview { queues: queues.into_values().collect(), succeeded_estimated: estimated, sampled_ids: sampled, id_span }
    }
}

impl Activity {
    fn empty(since: Millis, bucket_ms: u64, count: u64) -> Activity {
        let buckets = (0..count)
            .map(|i| ActivityBucket { start_ms: since.0 + i * bucket_ms, ..ActivityBucket::default() })
            .collect();
        Activity { since_ms: since.0, bucket_ms, buckets }
    }

    fn add(&mut self, (bucket, outcome, n, stolen, waited_n, waited_sum, waited_max, ran_n, ran_sum, ran_max): ActivityRow) {
        let Some(b) = usize::try_from(bucket).ok().and_then(|i| self.buckets.get_mut(i)) else { return };
        let n = n.max(0) as u64;
        match outcome.as_str() {
            "done" => b.done += n,
            "retrying" => b.retrying += n,
            "dead" => b.dead += n,
            "lost" => {
                b.lost += n;
                b.stolen += stolen.max(0) as u64;
            }
            "released" => b.released += n,
            "cancelled" => b.cancelled += n,
            _ => {}
        }
        b.waited.merge(waited_n, waited_sum, waited_max);
        b.ran.merge(ran_n, ran_sum, ran_max);
    }
}

impl SpanStats {
    /// Adds `count` spans summing to `sum` ms, the longest `max` ms.
    fn merge(&mut self, count: i64, sum: i64, max: Option<i64>) {
        let count = count.max(0) as u64;
        if count == 0 {
            return;
        }
        let total = self.mean_ms as u128 * u128::from(self.count) + sum.max(0) as u128;
        self.count += count;
        self.mean_ms = (total / u128::from(self.count)) as u64;
        self.max_ms = self.max_ms.max(max.unwrap_or(0).max(0) as u64);
    }
}

/// Finds, by binary search over `lo..=hi`, the first key whose row (the
/// first at or after it, as `probe` answers `(key, at)`) was written at or
/// after `target` ms; the journal's rows are in time order along their
/// commit order, give or take [`JOURNAL_SKEW_MS`], which the callers allow
/// for. About 2·log2(hi − lo) index lookups.
async fn first_key_at<F, Fut>(lo: u64, hi: u64, target: u64, mut probe: F) -> StoreResult<u64>
where
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = StoreResult<Option<(u64, u64)>>>,
{
    let (mut lo, mut hi) = (lo, hi.saturating_add(1));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match probe(mid).await? {
            Some((key, at)) if at < target => lo = key.saturating_add(1).max(mid + 1),
            _ => hi = mid,
        }
    }
    Ok(lo)
}

/// The SQLite journal id from which rows written at or after `at` start;
/// `None` for an empty journal.
#[cfg(feature = "sqlite")]
async fn lite_journal_key(pool: &sqlx::SqlitePool, at: u64) -> StoreResult<Option<i64>> {
    let (Some(lo), Some(hi)): (Option<i64>, Option<i64>) = sqlx::query_as(lite_sql::JOURNAL_SPAN).fetch_one(pool).await? else {
        return Ok(None);
    };
    let key = first_key_at(lo.max(0) as u64, hi.max(0) as u64, at, |key| async move {
        let row: Option<(i64, i64)> =
            sqlx::query_as(lite_sql::JOURNAL_PROBE).bind(key as i64).fetch_optional(pool).await?;
        Ok(row.map(|(id, at)| (id.max(0) as u64, at.max(0) as u64)))
    })
    .await?;
    Ok(Some(key as i64))
}

/// The PostgreSQL transaction id from which journal rows written at or
/// after `at` start; `None` for an empty journal.
#[cfg(feature = "postgres")]
async fn pg_journal_key(pool: &sqlx::PgPool, at: u64) -> StoreResult<Option<u64>> {
    let (Some(lo), Some(hi)): (Option<String>, Option<String>) = sqlx::query_as(pg_sql::JOURNAL_SPAN).fetch_one(pool).await? else {
        return Ok(None);
    };
    let number = |text: &str| {
        text.parse::<u64>().map_err(|_| StoreError::CorruptRow {
            table: "leasehold_settlements",
            detail: format!("xid {text:?} is not a number"),
        })
    };
    let key = first_key_at(number(&lo)?, number(&hi)?, at, |key| async move {
        let row: Option<(String, i64)> =
            sqlx::query_as(pg_sql::JOURNAL_PROBE).bind(key.to_string()).fetch_optional(pool).await?;
        match row {
            Some((xid, at)) => Ok(Some((number(&xid)?, at.max(0) as u64))),
            None => Ok(None),
        }
    })
    .await?;
    Ok(Some(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_id_range_is_counted_exactly() {
        assert!(matches!(Sample::plan((Some(1), Some(EXACT_COUNT_SPAN as i64))), Sample::Exact));
        assert!(matches!(Sample::plan((None, None)), Sample::Exact));
    }

    #[test]
    fn a_sample_takes_one_id_in_each_slice_inside_the_range_and_the_same_each_time() {
        let Sample::Ids { ids, span } = Sample::plan((Some(11), Some(1_000_010))) else { panic!("sampled") };
        assert_eq!(span, 1_000_000);
        assert_eq!(ids.len(), SAMPLE_IDS);
        let slice = 1_000_000 / SAMPLE_IDS as i64;
        for (i, id) in ids.iter().enumerate() {
            let start = 11 + (1_000_000 * i as i64) / SAMPLE_IDS as i64;
            assert!((start..=start + slice).contains(id), "id {id} outside slice {i}");
        }
        let Sample::Ids { ids: again, .. } = Sample::plan((Some(11), Some(1_000_010))) else { panic!("sampled") };
        assert_eq!(ids, again);
        // Not in step with a pattern of period 2 (two queues in turn).
        let even = ids.iter().filter(|id| *id % 2 == 0).count();
        assert!((1800..2300).contains(&even), "{even} even ids of {SAMPLE_IDS}");
    }

    #[test]
    fn the_binary_search_finds_the_first_key_written_at_or_after_the_target() {
        // Keys 10..=1000 with gaps of 3, written at key * 2 ms.
        let keys: Vec<u64> = (10..=1000).step_by(3).collect();
        let probe = |k: u64| {
            let found = keys.iter().find(|&&key| key >= k).map(|&key| (key, key * 2));
            async move { Ok(found) }
        };
        let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        for target in [0, 20, 21, 22, 500, 1999, 2000] {
            let key = rt.block_on(first_key_at(10, 1000, target, probe)).expect("search");
            let first = keys.iter().copied().find(|&key| key * 2 >= target);
            match first {
                // Never above the first key written at or after target, and
                // no key written before target lies at or above it.
                Some(first) => {
                    assert!(key <= first, "target {target}: {key} > {first}");
                    assert!(keys.iter().all(|&k| k < key || k * 2 >= target), "target {target}: {key}");
                }
                None => assert!(key > 1000),
            }
        }
    }

    #[test]
    fn span_stats_merge_into_one_mean_and_max() {
        let mut stats = SpanStats::default();
        stats.merge(2, 300, Some(200));
        stats.merge(0, 0, None);
        stats.merge(1, 600, Some(600));
        assert_eq!(stats, SpanStats { count: 3, mean_ms: 300, max_ms: 600 });
    }
}
