//! Attempt results: what an attempt produced (for the CLI, a command's exit
//! code and the tail of its output), recorded under the attempt's fencing
//! token while that token still holds the job.

use super::error::StoreResult;

#[cfg(feature = "sqlite")]
pub(crate) mod sqlite {
    use super::StoreResult;
    use sqlx::SqlitePool;

    /// Inserts (or replaces) the result of `(id, token)` only while the job is
    /// running under that token. Answers whether it landed.
    pub(crate) async fn record(pool: &SqlitePool, (id, token): (i64, i64), result: &str, now: i64) -> StoreResult<bool> {
        let done = sqlx::query(
            "INSERT OR REPLACE INTO leasehold_results (job_id, token, recorded_at, result)
             SELECT id, token, ?3, ?4 FROM leasehold_jobs
             WHERE id = ?1 AND token = ?2 AND state = 'running'",
        )
        .bind(id)
        .bind(token)
        .bind(now)
        .bind(result)
        .execute(pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub(crate) async fn read(pool: &SqlitePool, id: i64) -> StoreResult<Vec<(i64, String)>> {
        Ok(sqlx::query_as("SELECT token, result FROM leasehold_results WHERE job_id = ?1 ORDER BY token")
            .bind(id)
            .fetch_all(pool)
            .await?)
    }
}

#[cfg(feature = "postgres")]
pub(crate) mod postgres {
    use super::StoreResult;
    use sqlx::PgPool;

    pub(crate) async fn record(pool: &PgPool, (id, token): (i64, i64), result: &str, now: i64) -> StoreResult<bool> {
        let done = sqlx::query(
            "INSERT INTO leasehold_results (job_id, token, recorded_at, result)
             SELECT id, token, $3, $4::jsonb FROM leasehold_jobs
             WHERE id = $1 AND token = $2 AND state = 'running'
             ON CONFLICT (job_id, token) DO UPDATE SET recorded_at = EXCLUDED.recorded_at, result = EXCLUDED.result",
        )
        .bind(id)
        .bind(token)
        .bind(now)
        .bind(result)
        .execute(pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }

    pub(crate) async fn read(pool: &PgPool, id: i64) -> StoreResult<Vec<(i64, String)>> {
        Ok(sqlx::query_as("SELECT token, result::text FROM leasehold_results WHERE job_id = $1 ORDER BY token")
            .bind(id)
            .fetch_all(pool)
            .await?)
    }
}
