//! Reading on PostgreSQL: counts per queue, and one job with its attempt log
//! from one snapshot.

use sqlx::PgPool;
use sqlx::postgres::PgRow;

use leasehold_core::queue::statements::postgres as sql;

use crate::store::backend::{BoxFuture, Reads, boxed};
use crate::store::{JobId, JobRecord, QueueCounts, rows};

impl Reads for PgPool {
    fn counts<'a>(&'a self) -> BoxFuture<'a, Vec<QueueCounts>> {
        let pool = self;
        boxed(async move {
            let found: Vec<PgRow> = sqlx::query(sql::COUNTS.text)
                .fetch_all(pool)
                .await?;
            rows::counts(&found)
        })
    }

    fn job<'a>(&'a self, id: JobId) -> BoxFuture<'a, Option<JobRecord>> {
        let pool = self;
        boxed(async move {
            // One snapshot for the job row and its attempt log.
            let mut tx = pool
                .begin_with(sql::READ_SNAPSHOT.text)
                .await?;
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
