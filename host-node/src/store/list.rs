//! Listing jobs and tallying a set of them: what `leasehold jobs` shows and
//! what `leasehold run` watches until its jobs are drained.
//!
//! Both are read-only and run one statement per backend (the same SQL apart
//! from how a list of ids is bound: a JSON array through `json_each` on
//! SQLite, a `bigint[]` with `= ANY` on PostgreSQL).

use leasehold_core::queue::statements;

use super::{Pool, JobId, JobRecord, JobState, Store, StoreResult, rows, validate};

/// How far a set of jobs has come ([`Store::tally`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobTally {
    /// Jobs waiting (due or not, first attempt or a retry).
    pub queued: u64,
    /// Jobs under a lease (live or stale).
    pub running: u64,
    /// Jobs completed.
    pub succeeded: u64,
    /// Jobs dead-lettered.
    pub dead: u64,
    /// Jobs cancelled ([`Store::cancel`]).
    pub cancelled: u64,
    /// Failed attempts that were followed by another attempt (or are
    /// waiting for one): every failed attempt but a dead job's last.
    pub retried: u64,
    /// Attempts whose lease was taken over from a lost worker (reclaimed
    /// after the stale window, or stolen with evidence) by another owner: a
    /// worker that takes its own stale lease back is not counted.
    pub reclaimed: u64,
    /// Jobs no longer there: only finished jobs are ever deleted (completed
    /// by a store under `OnSuccess::Delete`, or purged), and their
    /// attempts went with them, so `retried` and `reclaimed` leave them out.
    /// A count of ids; the reference implementation keeps finished work forever.
    pub deleted: u64,
}

impl JobTally {
    /// Jobs not yet settled: queued or running. A set is drained at zero.
    pub fn unsettled(&self) -> u64 {
        self.queued + self.running
    }
}

/// `(state, jobs)` rows of a tally.
type StateCounts = Vec<(String, i64)>;
/// `(retried, reclaimed)` of a tally (NULL sums when no attempt matched).
type AttemptCounts = (Option<i64>, Option<i64>);

impl Store {
    /// Jobs newest first (highest id first), at most `limit`, optionally of
    /// one `queue` and in one `state`. The records carry no attempt log (read
    /// one job with [`Store::job`] for that).
    ///
    /// # Errors
    /// [`super::StoreError::InvalidQueueName`] for a malformed queue name,
    /// [`super::StoreError::Database`] when the read fails.
    pub async fn list_jobs(&self, queue: Option<&str>, state: Option<JobState>, limit: u32) -> StoreResult<Vec<JobRecord>> {
        if let Some(queue) = queue {
            validate::queue_name(queue)?;
        }
        let state = state.map(JobState::as_str);
        let limit = i64::from(limit);
        match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                let sql = statements::sqlite::LIST_JOBS.text;
                let found = sqlx::query(sql).bind(queue).bind(state).bind(limit).fetch_all(pool).await?;
                found.iter().map(rows::job).collect()
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let sql = statements::postgres::LIST_JOBS.text;
                let found = sqlx::query(sql).bind(queue).bind(state).bind(limit).fetch_all(pool).await?;
                found.iter().map(rows::job).collect()
            }
        }
    }

    /// How far the jobs `ids` have come: counts by state, retried failures,
    /// reclaimed attempts. Ids not found (each counted once) are `deleted`:
    /// an id this store handed out and that is gone was deleted once it
    /// had finished.
    ///
    /// # Errors
    /// [`super::StoreError::Database`] when the read fails.
    pub async fn tally(&self, ids: &[JobId]) -> StoreResult<JobTally> {
        let ids: Vec<i64> = ids.iter().map(|id| id.0).collect();
        let mut tally = JobTally::default();
        let (states, (retried, reclaimed)): (StateCounts, AttemptCounts) = match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                let json = serde_json::to_string(&ids).unwrap_or_else(|_| "[]".to_owned());
                let mut tx = pool.begin().await?;
                let states = sqlx::query_as(statements::sqlite::TALLY_STATES.text).bind(&json).fetch_all(&mut *tx).await?;
                let attempts = sqlx::query_as(statements::sqlite::TALLY_ATTEMPTS.text).bind(&json).fetch_one(&mut *tx).await?;
                tx.commit().await?;
                (states, attempts)
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let mut tx = pool.begin_with(statements::postgres::READ_SNAPSHOT.text).await?;
                let states = sqlx::query_as(statements::postgres::TALLY_STATES.text).bind(&ids).fetch_all(&mut *tx).await?;
                let attempts = sqlx::query_as(statements::postgres::TALLY_ATTEMPTS.text).bind(&ids).fetch_one(&mut *tx).await?;
                tx.commit().await?;
                (states, attempts)
            }
        };
        for (state, n) in states {
            let n = n.max(0) as u64;
            match JobState::parse(&state) {
                Some(JobState::Queued) => tally.queued = n,
                Some(JobState::Running) => tally.running = n,
                Some(JobState::Succeeded) => tally.succeeded = n,
                Some(JobState::Dead) => tally.dead = n,
                Some(JobState::Cancelled) => tally.cancelled = n,
                None => {}
            }
        }
        let distinct: std::collections::HashSet<i64> = ids.iter().copied().collect();
        let found = tally.queued + tally.running + tally.succeeded + tally.dead + tally.cancelled;
        tally.deleted = (distinct.len() as u64).saturating_sub(found);
        tally.retried = retried.unwrap_or(0).max(0) as u64;
        tally.reclaimed = reclaimed.unwrap_or(0).max(0) as u64;
        Ok(tally)
    }
}
