//! Enqueueing on SQLite: a batch of any size is one statement reading one
//! JSON text parameter; the ids of jobs whose idempotency key was taken are
//! read back in a second.

use leasehold_core::queue::statements::sqlite as sql;
use sqlx::SqlitePool;

use crate::store::backend::{BoxFuture, Enqueues, boxed};
use crate::store::validate::NewJob;

impl Enqueues for SqlitePool {
    fn insert_jobs<'a>(&'a self, queue: &'a str, jobs: &'a [NewJob], now: i64) -> BoxFuture<'a, Vec<(i64, Option<String>)>> {
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
            Ok(sqlx::query_as(sql::ENQUEUE.text).bind(queue).bind(now).bind(batch).fetch_all(pool).await?)
        })
    }
}
