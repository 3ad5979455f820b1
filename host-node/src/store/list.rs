//! Listing jobs and tallying a set of them: what `leasehold jobs` shows and
//! what `leasehold run` watches until its jobs are drained.
//!
//! Both are read-only and written once for both backends (their SQL differs
//! only in how a list of ids is bound: a JSON array through `json_each` on
//! SQLite, a `bigint[]` with `= ANY` on PostgreSQL).

use super::{JobId, JobRecord, JobState, Store, StoreResult, rows, validate};

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
    /// A count of ids; finished jobs are kept until purged ([`Store::purge`]).
    pub deleted: u64,
}

impl JobTally {
    /// Jobs not yet settled: queued or running. A set is drained at zero.
    pub fn unsettled(&self) -> u64 {
        self.queued + self.running
    }
}

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
        let offered = [("queue", queue.into()), ("state", state.into()), ("limit", limit.into())];
        self.rows("list_jobs", &offered, rows::job).await
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
        let (mut states, mut retried, mut reclaimed) = (Vec::new(), None, None);
        // One snapshot: the states and the attempts of the same moment.
        let reads = ["tally_states", "tally_attempts"];
        self.read_together(&reads, &[("ids", ids.as_slice().into())], |read, row| {
            if read == 0 {
                states.push((row.text("state")?, row.int("n")?));
            } else {
                (retried, reclaimed) = (row.opt_int("retried")?, row.opt_int("reclaimed")?);
            }
            Ok(())
        })
        .await?;
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

