//! Enqueueing on PostgreSQL: a batch is one statement over bound arrays; the
//! ids of jobs whose idempotency key was taken are read back in a second.

use std::collections::HashMap;

use sqlx::PgPool;

use leasehold_core::queue::statements::postgres as sql;

use crate::store::backend::{BoxFuture, Enqueues, boxed};
use crate::store::exchange;
use crate::store::validate::NewJob;
use crate::store::JobId;
use crate::store::wake::NOTIFY_CHANNEL;

impl Enqueues for PgPool {
    fn enqueue<'a>(
        &'a self,
        queue: &'a str,
        jobs: &'a [NewJob],
        _now: i64,
    ) -> BoxFuture<'a, Vec<Option<JobId>>> {
        let pool = self;
        boxed(async move {
            debug_assert_eq!(NOTIFY_CHANNEL, "leasehold_jobs");
            // `notified` is read only so the planner must run the NOTIFY.
            let returned: Vec<(i64, Option<String>, i64)> = sqlx::query_as(sql::ENQUEUE.text)
                .bind(queue)
                .bind(jobs.iter().map(|j| j.payload.as_str()).collect::<Vec<_>>())
                .bind(jobs.iter().map(|j| j.priority).collect::<Vec<_>>())
                .bind(jobs.iter().map(|j| j.run_at).collect::<Vec<_>>())
                .bind(jobs.iter().map(|j| j.delay_ms).collect::<Vec<_>>())
                .bind(jobs.iter().map(|j| j.max_attempts).collect::<Vec<_>>())
                .bind(jobs.iter().map(|j| j.timeout_ms).collect::<Vec<_>>())
                .bind(
                    jobs.iter()
                        .map(|j| j.idempotency_key.as_deref())
                        .collect::<Vec<_>>(),
                )
                .fetch_all(pool)
                .await?;
            let returned: Vec<(i64, Option<String>)> =
                returned.into_iter().map(|(id, key, _)| (id, key)).collect();
            let conflicted = exchange::conflicted_keys(jobs, &returned);
            let existing: HashMap<String, i64> = if conflicted.is_empty() {
                HashMap::new()
            } else {
                // A new statement, so a new snapshot: it sees the job a concurrent
                // enqueue with the same key committed while ours waited on it.
                sqlx::query_as::<_, (String, i64)>(sql::KEYED_JOBS.text)
                    .bind(queue)
                    .bind(&conflicted)
                    .fetch_all(pool)
                    .await?
                    .into_iter()
                    .collect()
            };
            exchange::assign_ids(jobs, returned, &existing)
        })
    }
}
