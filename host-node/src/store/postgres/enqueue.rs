//! Enqueueing on PostgreSQL: a batch is one statement over bound arrays; the
//! ids of jobs whose idempotency key was taken are read back by the store
//! (`store::enqueue`).

use sqlx::PgPool;

use leasehold_core::queue::statements::postgres as sql;

use crate::store::backend::{BoxFuture, Enqueues, boxed};
use crate::store::validate::NewJob;
use crate::store::wake::NOTIFY_CHANNEL;

impl Enqueues for PgPool {
    fn insert_jobs<'a>(&'a self, queue: &'a str, jobs: &'a [NewJob], _now: i64) -> BoxFuture<'a, Vec<(i64, Option<String>)>> {
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
            Ok(returned.into_iter().map(|(id, key, _)| (id, key)).collect())
        })
    }
}
