//! Settling on PostgreSQL: the fenced renewals, releases, completions (the
//! settling part of the claim statement alone) and failures, one statement
//! each, and the fence rows that explain a write that did not land.

use sqlx::PgPool;

use leasehold_core::queue::statements::postgres as sql;

use super::claim::by_id;
use crate::store::backend::{BoxFuture, Settles, boxed};
use crate::store::exchange::FenceRow;
use crate::store::{JobState, OnSuccess, StoreResult, rows};

impl Settles for PgPool {
    fn renew<'a>(
        &'a self,
        pairs: &'a [(i64, i64)],
        owner_nonce: Option<&'a str>,
        _now: i64,
    ) -> BoxFuture<'a, Vec<i64>> {
        let pool = self;
        boxed(async move {
            let (ids, tokens): (Vec<i64>, Vec<i64>) = pairs.iter().copied().unzip();
            Ok(sqlx::query_scalar(sql::RENEW.text)
                .bind(ids)
                .bind(tokens)
                .bind(owner_nonce)
                .fetch_all(pool)
                .await?)
        })
    }

    fn release<'a>(&'a self, pairs: &'a [(i64, i64)], _now: i64) -> BoxFuture<'a, Vec<i64>> {
        let pool = self;
        boxed(async move {
            fenced_batch(pool, sql::RELEASE.text, pairs).await
        })
    }

    /// Completes the fenced jobs with the completion statement alone
    /// (complete.sql, or complete_deleting.sql: the settling part of the
    /// claim statements): the claim statement with a page of 0 would be
    /// planned whole on every call, claim and stale-lease parts included,
    /// roughly doubling a lone completion's server time.
    fn complete<'a>(
        &'a self,
        pairs: &'a [(i64, i64)],
        results: &'a [Option<String>],
        on_success: OnSuccess,
        _now: i64,
    ) -> BoxFuture<'a, Vec<i64>> {
        let pool = self;
        boxed(async move {
            let (ids, tokens, results) = by_id(pairs, results);
            let query = match on_success {
                OnSuccess::Keep => sqlx::query_scalar(sql::COMPLETE.text).bind(ids).bind(tokens).bind(results),
                OnSuccess::Delete => sqlx::query_scalar(sql::COMPLETE_DELETING.text).bind(ids).bind(tokens),
            };
            Ok(query.fetch_all(pool).await?)
        })
    }

    fn fail<'a>(
        &'a self,
        (id, token): (i64, i64),
        error: &'a str,
        result: Option<&'a str>,
        retry_delays_ms: &'a [i64],
        _now: i64,
    ) -> BoxFuture<'a, Option<(JobState, i64)>> {
        let pool = self;
        boxed(async move {
            let row: Option<(String, i64)> = sqlx::query_as(sql::FAIL.text)
                .bind(id)
                .bind(token)
                .bind(retry_delays_ms)
                .bind(error)
                .bind(result)
                .fetch_optional(pool)
                .await?;
            let Some((state, run_at)) = row else {
                return Ok(None);
            };
            Ok(Some((rows::job_state(&state)?, run_at)))
        })
    }

    fn fence_rows<'a>(&'a self, ids: &'a [i64]) -> BoxFuture<'a, Vec<FenceRow>> {
        let pool = self;
        boxed(async move {
            sqlx::query(sql::FENCE_ROWS.text)
                .bind(ids)
                .fetch_all(pool)
                .await?
                .iter()
                .map(rows::fence_row)
                .collect()
        })
    }
}

/// Runs a fenced batch statement that binds `$1` ids and `$2` tokens and
/// returns the ids it landed on.
async fn fenced_batch(
    pool: &PgPool,
    sql: &'static str,
    pairs: &[(i64, i64)],
) -> StoreResult<Vec<i64>> {
    let (ids, tokens): (Vec<i64>, Vec<i64>) = pairs.iter().copied().unzip();
    Ok(sqlx::query_scalar(sql)
        .bind(ids)
        .bind(tokens)
        .fetch_all(pool)
        .await?)
}
