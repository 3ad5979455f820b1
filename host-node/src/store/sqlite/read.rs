//! Reading on SQLite: counts per queue, and one job with its attempt log
//! from one read transaction.

use leasehold_core::queue::statements::sqlite as sql;
use sqlx::SqlitePool;

use crate::store::backend::{BoxFuture, Reads, boxed};
use crate::store::{JobId, JobRecord, QueueCounts, rows};

impl Reads for SqlitePool {
    fn counts<'a>(&'a self) -> BoxFuture<'a, Vec<QueueCounts>> {
        let pool = self;
        boxed(async move {
            let found = sqlx::query(sql::COUNTS.text)
                .fetch_all(pool)
                .await?;
            rows::counts(&found)
        })
    }

    fn job<'a>(&'a self, id: JobId) -> BoxFuture<'a, Option<JobRecord>> {
        let pool = self;
        boxed(async move {
            // One read transaction: the job row and its attempt log from one snapshot.
            let mut tx = pool.begin().await?;
            let Some(row) = sqlx::query(sql::JOB.text).bind(id.0).fetch_optional(&mut *tx).await? else {
                return Ok(None);
            };
            let attempts = sqlx::query(sql::JOB_ATTEMPTS.text).bind(id.0).fetch_all(&mut *tx).await?;
            tx.commit().await?;
            rows::job_with_attempts(&row, &attempts).map(Some)
        })
    }

    fn results<'a>(&'a self, id: i64) -> BoxFuture<'a, Vec<(i64, String)>> {
        boxed(async move { Ok(sqlx::query_as(sql::RESULTS.text).bind(id).fetch_all(self).await?) })
    }
}
