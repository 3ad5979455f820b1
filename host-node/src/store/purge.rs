//! Purging finished jobs: a busy queue writes a row per job and, without
//! this, keeps every succeeded and dead-lettered row (with its attempt log
//! and recorded results) for good. `leasehold purge` and [`Store::purge`]
//! remove those that finished longer ago than a retention span.
//!
//! Nothing else deletes a finished job: how long they are kept is the
//! caller's retention span.
//!
//! The purge walks the jobs in id order through the primary key, a range of
//! at most 10,000 rows per statement on PostgreSQL and 2,000 per transaction
//! on SQLite: no index on `finished_at` is kept for it, as one would cost
//! every completion an index insert, and short statements keep each lock
//! and transaction small however much is purged. Its work grows with the
//! rows there are, not with the highest id ever issued. On SQLite, where a
//! write locks the whole file, the purge rests between ranges as long as the
//! last range took, so workers get at least half of the write lock while it
//! runs. Jobs that finish while a purge runs are purged or not depending on
//! where its walk is; a job that is not finished is never touched
//! (succeeded and dead are final states).
//!
//! [`Store::purge_settlements`] walks the settlements journal the same way
//! (PostgreSQL: in its `(xid, id)` order, the one index it has).

use std::time::Duration;

use leasehold_core::Millis;

use super::{JobState, Store, StoreError, StoreResult, validate};

/// What a purge deletes up to, checked: rows older than `older_ms`
/// before the database's clock (PostgreSQL, which stamped them), or than
/// `at_ms` (SQLite: the caller's `now` less the span).
#[derive(Clone, Copy)]
pub(crate) struct Cut {
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) older_ms: i64,
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) at_ms: i64,
}

impl Cut {
    /// Checks `queue` (if any), `older_than` and `now` (each must fit in
    /// i64 milliseconds), whichever backend uses them.
    pub(super) fn checked(queue: Option<&str>, older_than: Duration, now: Millis) -> StoreResult<Cut> {
        if let Some(queue) = queue {
            validate::queue_name(queue)?;
        }
        let older_ms = validate::duration_ms("older_than", older_than)?;
        let now_ms = validate::millis("now", now)?;
        Ok(Cut { older_ms, at_ms: now_ms.saturating_sub(older_ms) })
    }
}

impl Store {
    /// Deletes the jobs in one of `states` (succeeded, dead, or both) that
    /// finished more than `older_than` before `now` (on PostgreSQL: before
    /// the database's clock, which stamped `finished_at`), of `queue` or of
    /// every queue (`None`), with their attempt log and recorded results.
    /// Answers how many jobs it deleted. Finished jobs are kept until a
    /// purge deletes them; see the module docs.
    ///
    /// A purged job is gone: [`Store::job`] answers
    /// [`StoreError::UnknownJob`], [`Store::counts`] no longer counts it, and
    /// its idempotency key is free again (a later enqueue with that key
    /// makes a new job). A SQLite file keeps its size (SQLite reuses the
    /// freed pages; `VACUUM` gives them back to the file system).
    ///
    /// # Errors
    /// [`StoreError::InvalidOption`] (`states`) when `states` is empty or
    /// names a state that is not final (queued, running): those jobs are
    /// still to be worked and are never purged; (`older_than`/`now`) for a
    /// span or instant that does not fit in i64 milliseconds.
    /// [`StoreError::InvalidQueueName`] for a malformed queue name.
    /// [`StoreError::Database`] when a statement fails: the ranges before it
    /// stay purged, the rest is left as it was.
    pub async fn purge(&self, queue: Option<&str>, states: &[JobState], older_than: Duration, now: Millis) -> StoreResult<u64> {
        let cut = Cut::checked(queue, older_than, now)?;
        let states = final_states(states)?;
        self.backend().purge_jobs(queue, &states, cut).await
    }

    /// Deletes the settlements journal's rows of `queue` (`None`: every
    /// queue) settled more than `older_than` before `now` (PostgreSQL:
    /// before the database's clock, which stamped them); answers how many.
    /// The journal keeps a deleted job's settlements until then (what
    /// [`Store::settlements`] lists does not depend on the job still being
    /// there), so `leasehold purge` runs this beside [`Store::purge`].
    ///
    /// # Errors
    /// [`StoreError::InvalidOption`] for a span or instant that does not fit
    /// in i64 milliseconds, [`StoreError::InvalidQueueName`],
    /// [`StoreError::Database`] (the ranges before it stay purged).
    pub async fn purge_settlements(&self, queue: Option<&str>, older_than: Duration, now: Millis) -> StoreResult<u64> {
        let cut = Cut::checked(queue, older_than, now)?;
        self.backend().purge_settlements(queue, cut).await
    }
}

/// The state names to purge: final states only, at least one.
fn final_states(states: &[JobState]) -> StoreResult<Vec<&'static str>> {
    if states.is_empty() {
        return Err(StoreError::InvalidOption {
            option: "states",
            reason: "name at least one finished state to purge (succeeded, dead)".to_owned(),
        });
    }
    if let Some(open) = states.iter().find(|s| matches!(s, JobState::Queued | JobState::Running)) {
        return Err(StoreError::InvalidOption {
            option: "states",
            reason: format!(
                "only finished jobs (succeeded, dead) can be purged; {} jobs are still to be worked",
                open.as_str()
            ),
        });
    }
    let mut names: Vec<&'static str> = states.iter().map(|s| s.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    Ok(names)
}
