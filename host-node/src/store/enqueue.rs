//! Enqueueing: validation, the insert, the retry of a keyed job whose
//! conflicting job vanished before its id was read, and the local wake-up of
//! a queue that got due work.

use leasehold_core::Millis;

use std::collections::HashMap;

use super::db::Arg;
use super::exchange;
use super::validate::{self, NewJob};
use super::{EnqueueOptions, JobId, Store, StoreError, StoreResult};

/// How many times an enqueue inserts a keyed job again whose conflicting
/// job vanished before its id was read (see `Store::insert`).
const ENQUEUE_TRIES: usize = 5;

impl Store {
    /// Enqueues one job; answers its id. With an idempotency key already used
    /// in this queue, answers the first job's id and writes nothing — while
    /// that job is kept: once it is purged, or deleted by a completion under
    /// [`OnSuccess::Delete`](super::OnSuccess::Delete), the key makes a new job.
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
        validate::delays_fit(&jobs, now_ms)?;
        let due_now = jobs
            .iter()
            .any(|j| j.run_at.is_none_or(|at| at <= now_ms) && j.delay_ms == 0);
        #[cfg(feature = "otel")]
        let span = crate::otel::send(queue, jobs.len());
        #[cfg(feature = "otel")]
        let ids = {
            // Open but not entered meanwhile, so it has ended when this returns (see crate::otel).
            let ids = self.insert(queue, &jobs, now_ms).await?;
            if let [id] = ids.as_slice() {
                span.record("messaging.message.id", id.0.to_string());
            }
            if let Some(traceparent) = crate::otel::traceparent(&span) {
                self.set_trace_context(&ids, &traceparent).await?;
            }
            drop(span);
            ids
        };
        #[cfg(not(feature = "otel"))]
        let ids = self.insert(queue, &jobs, now_ms).await?;
        if due_now {
            self.inner.wakers.wake(queue);
        }
        Ok(ids)
    }

    /// One insert of `jobs`: each one's id in input order, or `None` for a
    /// job whose idempotency key conflicted with a job deleted before its id
    /// could be read. The ids of the jobs that held the keys are read by a
    /// new statement, so a new snapshot: it sees the job a concurrent
    /// enqueue with the same key committed while ours waited on it.
    async fn insert_once(&self, queue: &str, jobs: &[NewJob], now_ms: i64) -> StoreResult<Vec<Option<JobId>>> {
        let returned = self.backend().insert_jobs(queue, jobs, now_ms).await?;
        let conflicted = exchange::conflicted_keys(jobs, &returned);
        let existing = if conflicted.is_empty() {
            HashMap::new()
        } else {
            let keys: Vec<&str> = conflicted.iter().map(String::as_str).collect();
            let offered = [("queue", queue.into()), ("keys", Arg::Texts(&keys))];
            self.rows("keyed_jobs", &offered, |row| Ok((row.text_at(0)?, row.int_at(1)?))).await?.into_iter().collect()
        };
        exchange::assign_ids(jobs, returned, &existing)
    }

    /// Inserts `jobs` (validated) and answers their ids in input order.
    ///
    /// A job whose key conflicted with a job deleted before its id could be
    /// read (completed under `OnSuccess::Delete`, or purged, between the
    /// insert and the read) got none: its key is free again, so it is
    /// inserted again, as if it had come a moment later.
    async fn insert(&self, queue: &str, jobs: &[NewJob], now_ms: i64) -> StoreResult<Vec<JobId>> {
        let mut ids = self.insert_once(queue, jobs, now_ms).await?;
        for _ in 0..ENQUEUE_TRIES {
            let missing: Vec<usize> = (0..ids.len()).filter(|&i| ids[i].is_none()).collect();
            if missing.is_empty() {
                break;
            }
            let again: Vec<NewJob> = missing.iter().map(|&i| jobs[i].clone()).collect();
            let found = self.insert_once(queue, &again, now_ms).await?;
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
}
