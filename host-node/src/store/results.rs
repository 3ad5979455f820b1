//! Reading attempt results: what an attempt produced (for the CLI, a
//! command's exit code and the tail of its output). They are written by the
//! settle statements themselves (`complete`, `fail`), under the attempt's
//! fence, so a result is never left behind by a settle that did not land.

use super::error::StoreResult;

#[cfg(feature = "sqlite")]
pub(crate) mod sqlite {
    use super::StoreResult;
    use sqlx::SqlitePool;

    pub(crate) async fn read(pool: &SqlitePool, id: i64) -> StoreResult<Vec<(i64, String)>> {
        Ok(sqlx::query_as(leasehold_core::queue::statements::sqlite::RESULTS.text)
            .bind(id)
            .fetch_all(pool)
            .await?)
    }
}

#[cfg(feature = "postgres")]
pub(crate) mod postgres {
    use super::StoreResult;
    use sqlx::PgPool;

    pub(crate) async fn read(pool: &PgPool, id: i64) -> StoreResult<Vec<(i64, String)>> {
        Ok(sqlx::query_as(leasehold_core::queue::statements::postgres::RESULTS.text)
            .bind(id)
            .fetch_all(pool)
            .await?)
    }
}
