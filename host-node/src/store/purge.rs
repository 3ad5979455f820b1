//! Purging finished jobs: a busy queue writes a row per job and, without
//! this, keeps every succeeded and dead-lettered row (with its attempt log
//! and recorded results) for good. `leasehold purge` and [`Store::purge`]
//! remove those that finished longer ago than a retention span.
//!
//! The purge walks the job ids in ranges of [`PURGE_CHUNK`], one statement
//! (PostgreSQL) or one transaction (SQLite) per range, through the primary
//! key: no index on `finished_at` is kept for it, as one would cost every
//! completion an index insert, and short statements keep each lock and
//! transaction small however much is purged. Jobs that finish while a purge
//! runs are purged or not depending on where its walk is; a job that is not
//! finished is never touched (succeeded and dead are final states).

use std::time::Duration;

use leasehold_core::Millis;

use super::{Backend, JobState, Store, StoreError, StoreResult, validate};

/// Job ids per purge statement.
const PURGE_CHUNK: i64 = 10_000;

impl Store {
    /// Deletes the jobs in one of `states` (succeeded, dead, or both) that
    /// finished more than `older_than` before `now` (on PostgreSQL: before
    /// the database's clock, which stamped `finished_at`), with their
    /// attempt log and recorded results. Answers how many jobs it deleted.
    ///
    /// A purged job is gone: [`Store::job`] answers
    /// [`StoreError::UnknownJob`], [`Store::counts`] no longer counts it, and
    /// its idempotency key is free again (a later enqueue with that key
    /// makes a new job).
    ///
    /// # Errors
    /// [`StoreError::InvalidOption`] (`states`) when `states` is empty or
    /// names a state that is not final (queued, running): those jobs are
    /// still to be worked and are never purged; (`older_than`/`now`) for a
    /// span or instant that does not fit in i64 milliseconds.
    /// [`StoreError::Database`] when a statement fails: the ranges before it
    /// stay purged, the rest is left as it was.
    pub async fn purge(&self, states: &[JobState], older_than: Duration, now: Millis) -> StoreResult<u64> {
        let states = final_states(states)?;
        let older_ms = validate::duration_ms("older_than", older_than)?;
        let now_ms = validate::millis("now", now)?;
        let mut purged = 0u64;
        match &self.inner.backend {
            #[cfg(feature = "sqlite")]
            Backend::Sqlite(pool) => {
                let last: Option<i64> = sqlx::query_scalar("SELECT max(id) FROM leasehold_jobs").fetch_one(pool).await?;
                let states = serde_json::to_string(&states).expect("strings serialize");
                let cut = now_ms.saturating_sub(older_ms);
                let mut from = 0i64;
                while from < last.unwrap_or(0) {
                    let to = from.saturating_add(PURGE_CHUNK);
                    purged += sqlite::purge_range(pool, from, to, &states, cut).await?;
                    from = to;
                }
            }
            #[cfg(feature = "postgres")]
            Backend::Postgres(pool) => {
                let last: Option<i64> = sqlx::query_scalar("SELECT max(id) FROM leasehold_jobs").fetch_one(pool).await?;
                let mut from = 0i64;
                while from < last.unwrap_or(0) {
                    let to = from.saturating_add(PURGE_CHUNK);
                    let n: i64 = sqlx::query_scalar(super::postgres::PURGE_RANGE)
                        .bind(from)
                        .bind(to)
                        .bind(&states)
                        .bind(older_ms)
                        .fetch_one(pool)
                        .await?;
                    purged += n.max(0) as u64;
                    from = to;
                }
            }
        }
        Ok(purged)
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

#[cfg(feature = "sqlite")]
mod sqlite {
    use sqlx::SqlitePool;

    use crate::store::StoreResult;

    /// The jobs of the range `(from, to]` to purge, as a subquery on
    /// `?1` from, `?2` to, `?3` states (JSON array), `?4` the cut.
    macro_rules! doomed {
        () => {
            "SELECT id FROM leasehold_jobs WHERE id > ?1 AND id <= ?2
               AND state IN (SELECT value FROM json_each(?3)) AND finished_at < ?4"
        };
    }

    /// Purges one id range in one transaction: the attempt log and results
    /// first, then the jobs (the first statement is a write, so the
    /// transaction holds the write lock from its start).
    pub(super) async fn purge_range(pool: &SqlitePool, from: i64, to: i64, states: &str, cut: i64) -> StoreResult<u64> {
        let mut tx = pool.begin().await?;
        for sql in [
            concat!("DELETE FROM leasehold_attempts WHERE job_id IN (", doomed!(), ")"),
            concat!("DELETE FROM leasehold_results WHERE job_id IN (", doomed!(), ")"),
        ] {
            sqlx::query(sql).bind(from).bind(to).bind(states).bind(cut).execute(&mut *tx).await?;
        }
        let gone = sqlx::query(concat!("DELETE FROM leasehold_jobs WHERE id IN (", doomed!(), ")"))
            .bind(from)
            .bind(to)
            .bind(states)
            .bind(cut)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        tx.commit().await?;
        Ok(gone)
    }
}
