//! Settling on SQLite: the fenced renewals, releases, completions and
//! failures, each with its settlements journal rows in one transaction, and
//! the fence rows that explain a write that did not land.

use sqlx::{Row, Sqlite, SqlitePool, Transaction};

use leasehold_core::queue::statements::sqlite as sql;

use super::immediate;
use crate::store::backend::{BoxFuture, Settles, boxed};
use crate::store::exchange::FenceRow;
use crate::store::{JobState, OnSuccess, StoreResult, rows};

impl Settles for SqlitePool {
    fn renew<'a>(
        &'a self,
        pairs: &'a [(i64, i64)],
        owner_nonce: Option<&'a str>,
        now: i64,
    ) -> BoxFuture<'a, Vec<i64>> {
        let pool = self;
        boxed(async move {
            Ok(sqlx::query_scalar(sql::RENEW.text)
                .bind(pairs_json(pairs))
                .bind(now)
                .bind(owner_nonce)
                .fetch_all(pool)
                .await?)
        })
    }

    fn release<'a>(&'a self, pairs: &'a [(i64, i64)], now: i64) -> BoxFuture<'a, Vec<i64>> {
        let pool = self;
        boxed(async move {
            let mut tx = immediate(pool).await?;
            let released: Vec<Ended> = sqlx::query_as(sql::RELEASE.text).bind(pairs_json(pairs)).fetch_all(&mut *tx).await?;
            journal(&mut tx, &released, "released", None, None, now).await?;
            tx.commit().await?;
            Ok(released.into_iter().map(|ended| ended.0).collect())
        })
    }

    /// Completes the fenced jobs. `Keep`: one transaction marks them succeeded
    /// and writes the results of those that landed (the succeeded attempt is
    /// not logged: the job row keeps what inspection shows of it, see
    /// [`rows::attempt_log`]). `Delete`: one transaction deletes the fenced
    /// rows, then the attempt log and results of those that were deleted.
    /// Either way the transaction journals each completion.
    fn complete<'a>(
        &'a self,
        pairs: &'a [(i64, i64)],
        results: &'a [Option<String>],
        on_success: OnSuccess,
        now: i64,
    ) -> BoxFuture<'a, Vec<i64>> {
        let pool = self;
        boxed(async move {
            match on_success {
                OnSuccess::Keep => complete_kept(pool, pairs, results, now).await,
                OnSuccess::Delete => delete_completed(pool, pairs, now).await,
            }
        })
    }

    fn fail<'a>(
        &'a self,
        (id, token): (i64, i64),
        error: &'a str,
        result: Option<&'a str>,
        retry_delays_ms: &'a [i64],
        now: i64,
    ) -> BoxFuture<'a, Option<(JobState, i64)>> {
        let pool = self;
        boxed(async move {
            let mut tx = immediate(pool).await?;
            let row = sqlx::query(sql::FAIL.text)
                .bind(id)
                .bind(token)
                .bind(now)
                .bind(serde_json::to_string(retry_delays_ms).expect("integers serialize"))
                .bind(error)
                .fetch_optional(&mut *tx)
                .await?;
            let Some(row) = row else { return Ok(None) };
            let state: String = row.try_get("state")?;
            let run_at: i64 = row.try_get("run_at")?;
            let ended: Ended = (
                id,
                token,
                row.try_get("queue")?,
                row.try_get("attempts")?,
                row.try_get("owner_host")?,
                row.try_get("owner_pid")?,
                row.try_get("owner_nonce")?,
            );
            let (outcome, retry_at) = if state == "dead" { ("dead", None) } else { ("retrying", Some(run_at)) };
            journal(&mut tx, &[ended], outcome, Some(error), retry_at, now).await?;
            sqlx::query(sql::ATTEMPT_FAILED.text)
                .bind(id)
                .bind(now)
                .bind(error)
                .execute(&mut *tx)
                .await?;
            if let Some(result) = result {
                sqlx::query(sql::KEEP_RESULTS.text)
                    .bind(serde_json::to_string(&[(id, token, result)]).expect("ids and strings serialize"))
                    .bind(now)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            Ok(Some((rows::job_state(&state)?, run_at)))
        })
    }

    fn fence_rows<'a>(&'a self, ids: &'a [i64]) -> BoxFuture<'a, Vec<FenceRow>> {
        let pool = self;
        boxed(async move {
            sqlx::query(sql::FENCE_ROWS.text)
                .bind(serde_json::to_string(ids).expect("ids serialize"))
                .fetch_all(pool)
                .await?
                .iter()
                .map(rows::fence_row)
                .collect()
        })
    }
}

/// Fences as a JSON array of `[id, token]`, read by `json_each`.
fn pairs_json(pairs: &[(i64, i64)]) -> String {
    serde_json::to_string(pairs).expect("pairs of integers serialize")
}

/// An attempt a settle ended, as the journal records it: job id, token,
/// queue, attempt number, owner host, pid and nonce.
pub(super) type Ended = (i64, i64, String, i64, Option<String>, Option<i64>, Option<String>);

/// Journals `ended` (nothing when empty) as settled with `outcome`.
pub(super) async fn journal(
    tx: &mut Transaction<'static, Sqlite>,
    ended: &[Ended],
    outcome: &str,
    error: Option<&str>,
    retry_at: Option<i64>,
    now: i64,
) -> StoreResult<()> {
    if ended.is_empty() {
        return Ok(());
    }
    sqlx::query(sql::JOURNAL.text)
        .bind(serde_json::to_string(ended).expect("numbers and strings serialize"))
        .bind(outcome)
        .bind(error)
        .bind(retry_at)
        .bind(now)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// [`complete`] under [`OnSuccess::Keep`]: answers the ids it completed.
async fn complete_kept(
    pool: &SqlitePool,
    pairs: &[(i64, i64)],
    results: &[Option<String>],
    now: i64,
) -> StoreResult<Vec<i64>> {
    let mut tx = immediate(pool).await?;
    let landed: Vec<Ended> = sqlx::query_as(sql::COMPLETE.text)
        .bind(pairs_json(pairs))
        .bind(now)
        .fetch_all(&mut *tx)
        .await?;
    journal(&mut tx, &landed, "done", None, None, now).await?;
    let kept = landed_results(pairs, results, &landed);
    if !kept.is_empty() {
        sqlx::query(sql::KEEP_RESULTS.text)
            .bind(serde_json::to_string(&kept).expect("ids and strings serialize"))
            .bind(now)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(landed.into_iter().map(|ended| ended.0).collect())
}

/// The results to keep: for each `(id, token)` that landed, the first
/// result given with that fence.
fn landed_results<'a>(
    pairs: &[(i64, i64)],
    results: &'a [Option<String>],
    landed: &[Ended],
) -> Vec<(i64, i64, &'a str)> {
    landed
        .iter()
        .filter_map(|&(id, token, ..)| {
            let i = pairs
                .iter()
                .zip(results)
                .position(|(&pair, result)| pair == (id, token) && result.is_some())?;
            Some((id, token, results[i].as_deref()?))
        })
        .collect()
}

/// [`complete`] under [`OnSuccess::Delete`]: answers the ids it deleted.
async fn delete_completed(pool: &SqlitePool, pairs: &[(i64, i64)], now: i64) -> StoreResult<Vec<i64>> {
    let mut tx = immediate(pool).await?;
    let ended: Vec<Ended> = sqlx::query_as(sql::COMPLETE_DELETING.text)
        .bind(pairs_json(pairs))
        .fetch_all(&mut *tx)
        .await?;
    // The journal keeps the completion of the job it deletes.
    journal(&mut tx, &ended, "done", None, None, now).await?;
    let deleted: Vec<i64> = ended.into_iter().map(|ended| ended.0).collect();
    if !deleted.is_empty() {
        let ids = serde_json::to_string(&deleted).expect("ids serialize");
        for statement in [sql::DELETE_ATTEMPTS, sql::DELETE_RESULTS] {
            sqlx::query(statement.text).bind(&ids).execute(&mut *tx).await?;
        }
    }
    tx.commit().await?;
    Ok(deleted)
}
