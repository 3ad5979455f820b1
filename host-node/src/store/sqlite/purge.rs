//! Purging on SQLite: id ranges of at most [`PURGE_CHUNK`] rows, each in
//! one transaction (the whole file is locked meanwhile), with a rest after
//! each as long as it took, so workers keep at least half of the write lock.

use std::future::Future;

use sqlx::SqlitePool;

use leasehold_core::queue::statements::sqlite as sql;

use crate::store::StoreResult;
use crate::store::backend::{BoxFuture, Purges, boxed};
use crate::store::purge::Cut;

/// Rows per purge transaction.
const PURGE_CHUNK: i64 = 2_000;

impl Purges for SqlitePool {
    fn purge_jobs<'a>(&'a self, queue: Option<&'a str>, states: &'a [&'a str], cut: Cut) -> BoxFuture<'a, u64> {
        boxed(async move {
            let states = serde_json::to_string(&states).expect("strings serialize");
            let states = states.as_str();
            in_ranges(self, sql::JOB_RANGE_END.text, |range| purge_range(self, range, queue, states, cut.at_ms)).await
        })
    }

    fn purge_settlements<'a>(&'a self, queue: Option<&'a str>, cut: Cut) -> BoxFuture<'a, u64> {
        boxed(in_ranges(self, sql::SETTLEMENT_RANGE_END.text, move |(from, to)| async move {
            let purge = sqlx::query(sql::PURGE_SETTLEMENTS.text).bind(from).bind(to).bind(cut.at_ms).bind(queue);
            Ok(purge.execute(self).await?.rows_affected())
        }))
    }
}

/// Runs `purge` on each id range `(from, to]` of at most [`PURGE_CHUNK`]
/// rows, in id order, the ranges' ends read with `ranges` (bound the last
/// end and the chunk); rests after each as long as it took. Answers the sum
/// of what `purge` answered.
async fn in_ranges<F, Fut>(pool: &SqlitePool, ranges: &'static str, mut purge: F) -> StoreResult<u64>
where
    F: FnMut((i64, i64)) -> Fut,
    Fut: Future<Output = StoreResult<u64>>,
{
    let mut purged = 0;
    let mut from = i64::MIN;
    // The range's upper id, read on its own (not in the write
    // transaction: a read first would make the transaction's write fail
    // at once when another connection wrote since).
    while let Some(to) = sqlx::query_scalar::<_, Option<i64>>(ranges).bind(from).bind(PURGE_CHUNK).fetch_one(pool).await? {
        let started = std::time::Instant::now();
        purged += purge((from, to)).await?;
        from = to;
        tokio::time::sleep(started.elapsed()).await;
    }
    Ok(purged)
}

/// Purges one id range in one transaction: the attempt log and results
/// first, then the jobs (the first statement is a write, so the
/// transaction holds the write lock from its start).
async fn purge_range(pool: &SqlitePool, (from, to): (i64, i64), queue: Option<&str>, states: &str, cut: i64) -> StoreResult<u64> {
    let mut tx = pool.begin().await?;
    let mut gone = 0;
    for statement in [sql::PURGE_ATTEMPTS, sql::PURGE_RESULTS, sql::PURGE_JOBS] {
        let purge = sqlx::query(statement.text).bind(from).bind(to).bind(states).bind(cut).bind(queue);
        gone = purge.execute(&mut *tx).await?.rows_affected();
    }
    tx.commit().await?;
    Ok(gone)
}
