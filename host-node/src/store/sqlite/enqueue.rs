//! Enqueueing on SQLite: a batch of any size is one statement reading one
//! JSON text parameter; the ids of jobs whose idempotency key was taken are
//! read back in a second.

use std::collections::HashMap;

use leasehold_core::queue::statements::sqlite as sql;
use sqlx::SqlitePool;

use crate::store::backend::{BoxFuture, Enqueues, boxed};
use crate::store::exchange;
use crate::store::validate::NewJob;
use crate::store::JobId;

impl Enqueues for SqlitePool {
    fn enqueue<'a>(
        &'a self,
        queue: &'a str,
        jobs: &'a [NewJob],
        now: i64,
    ) -> BoxFuture<'a, Vec<Option<JobId>>> {
        let pool = self;
        boxed(async move {
            let batch: Vec<_> = jobs
                .iter()
                .map(|j| {
                    (
                        &j.payload,
                        j.priority,
                        j.due(now),
                        j.max_attempts,
                        j.timeout_ms,
                        &j.idempotency_key,
                    )
                })
                .collect();
            let batch = serde_json::to_string(&batch).expect("tuples of strings and numbers serialize");
            let returned: Vec<(i64, Option<String>)> = sqlx::query_as(sql::ENQUEUE.text)
                .bind(queue)
                .bind(now)
                .bind(batch)
                .fetch_all(pool)
                .await?;
            let conflicted = exchange::conflicted_keys(jobs, &returned);
            let existing: HashMap<String, i64> = if conflicted.is_empty() {
                HashMap::new()
            } else {
                sqlx::query_as::<_, (String, i64)>(sql::KEYED_JOBS.text)
                    .bind(queue)
                    .bind(serde_json::to_string(&conflicted).expect("strings serialize"))
                    .fetch_all(pool)
                    .await?
                    .into_iter()
                    .collect()
            };
            exchange::assign_ids(jobs, returned, &existing)
        })
    }
}
