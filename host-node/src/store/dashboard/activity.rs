//! The journal's side of the dashboard: settlements per time bucket, one
//! job's settlements, and the binary search on the journal's commit order
//! that finds where a time range starts without scanning it.

use std::future::Future;

use leasehold_core::Millis;

use sqlx::Pool;

use super::{Activity, ActivityBucket, JOURNAL_SKEW_MS, SpanStats};
use crate::store::journal::{SettlementRecord, record};
use crate::store::backend::{BoxFuture, JournalSearch, boxed};
use crate::store::db::{self, AnyRow, Arg, Db, statement};
use crate::store::rows::DecodeRow;
use crate::store::{JobRecord, Store, StoreError, StoreResult, validate};

impl Store {
    /// The settlements from `since` to now in buckets of `bucket` (both ms;
    /// at most 1,440 buckets), with how long the settled attempts waited
    /// and ran ([`ActivityBucket`]). Times are the journal's: the settling
    /// caller's clock on SQLite, the server's on PostgreSQL. `now` is the
    /// end of the range (SQLite; PostgreSQL uses its own clock).
    ///
    /// # Errors
    /// [`StoreError::InvalidOption`] (`bucket`) for a zero bucket or more
    /// than 1,440 of them; [`StoreError::Database`] when a read fails.
    pub async fn activity(&self, since: Millis, bucket_ms: u64, now: Millis) -> StoreResult<Activity> {
        let since_ms = validate::millis("since", since)?;
        let now = self.backend().journal_now(now).await?;
        let count = match bucket_ms {
            0 => 0,
            _ => now.since(since).div_ceil(bucket_ms).max(1),
        };
        if count == 0 || count > 1440 {
            return Err(StoreError::InvalidOption {
                option: "bucket",
                reason: format!("{bucket_ms} ms makes {count} buckets from since to now: give 1 to 1440"),
            });
        }
        let bucket = i64::try_from(bucket_ms).unwrap_or(i64::MAX);
        let from = since.0.saturating_sub(JOURNAL_SKEW_MS);
        let Some(start) = self.backend().journal_key(from).await? else { return Ok(Activity::empty(since, bucket_ms, count)) };
        let mut offered = journal_range(start, None);
        offered.extend([("since", since_ms.into()), ("bucket_ms", bucket.into())]);
        let rows = self.rows("dashboard_activity", &offered, activity_row).await?;
        let mut activity = Activity::empty(since, bucket_ms, count);
        for row in rows {
            activity.add(row);
        }
        Ok(activity)
    }

    /// The settlements journaled for `job`, in commit order: those written
    /// from its creation on (to its finish, when it has finished). A job's
    /// settlements outlive it ([`Store::settlements`]); this reads them for
    /// a job still kept.
    ///
    /// # Errors
    /// [`StoreError::Database`] when a read fails; [`StoreError::CorruptRow`]
    /// for a row the store would not write.
    pub async fn job_settlements(&self, job: &JobRecord) -> StoreResult<Vec<SettlementRecord>> {
        let from = job.created_at.0.saturating_sub(JOURNAL_SKEW_MS);
        let to = job.finished_at.map(|at| at.0.saturating_add(JOURNAL_SKEW_MS));
        let backend = self.backend();
        let Some(start) = backend.journal_key(from).await? else { return Ok(Vec::new()) };
        let end = match to {
            Some(to) => backend.journal_key(to).await?.unwrap_or(u64::MAX),
            None => u64::MAX,
        };
        let mut offered = journal_range(start, Some(end));
        offered.push(("job", job.id.0.into()));
        self.rows("dashboard_job_settlements", &offered, record).await
    }
}

/// The journal range from `start` (to `end`) as each database names it:
/// ids on SQLite (`from_id`, `to_id`), transaction ids in text on
/// PostgreSQL (`from_xid`, `to_xid`).
fn journal_range(start: u64, end: Option<u64>) -> Vec<(&'static str, Arg<'static>)> {
    let id = |key: u64| Arg::from(i64::try_from(key).unwrap_or(i64::MAX));
    let xid = Arg::Decimal;
    let mut offered = vec![("from_id", id(start)), ("from_xid", xid(start))];
    if let Some(end) = end {
        offered.extend([("to_id", id(end)), ("to_xid", xid(end))]);
    }
    offered
}

/// One row of `dashboard_activity.sql`.
fn activity_row(row: &AnyRow) -> StoreResult<ActivityRow> {
    let (waited, ran) = ((row.int("waited_n")?, row.int("waited_sum")?, row.opt_int("waited_max")?), (row.int("ran_n")?, row.int("ran_sum")?, row.opt_int("ran_max")?));
    Ok((row.int("bucket")?, row.text("outcome")?, row.int("n")?, row.int("stolen")?, waited.0, waited.1, waited.2, ran.0, ran.1, ran.2))
}

/// `(bucket, outcome, n, stolen, waited_n, waited_sum, waited_max, ran_n, ran_sum, ran_max)`.
type ActivityRow = (i64, String, i64, i64, i64, i64, Option<i64>, i64, i64, Option<i64>);

impl Activity {
    fn empty(since: Millis, bucket_ms: u64, count: u64) -> Activity {
        let buckets = (0..count)
            .map(|i| ActivityBucket { start_ms: since.0 + i * bucket_ms, ..ActivityBucket::default() })
            .collect();
        Activity { since_ms: since.0, bucket_ms, buckets }
    }

    fn add(&mut self, (bucket, outcome, n, stolen, waited_n, waited_sum, waited_max, ran_n, ran_sum, ran_max): ActivityRow) {
        let Some(b) = usize::try_from(bucket).ok().and_then(|i| self.buckets.get_mut(i)) else { return };
        let n = n.max(0) as u64;
        match outcome.as_str() {
            "done" => b.done += n,
            "retrying" => b.retrying += n,
            "dead" => b.dead += n,
            "lost" => {
                b.lost += n;
                b.stolen += stolen.max(0) as u64;
            }
            "released" => b.released += n,
            "cancelled" => b.cancelled += n,
            _ => {}
        }
        b.waited.merge(waited_n, waited_sum, waited_max);
        b.ran.merge(ran_n, ran_sum, ran_max);
    }
}

impl SpanStats {
    /// Adds `count` spans summing to `sum` ms, the longest `max` ms.
    fn merge(&mut self, count: i64, sum: i64, max: Option<i64>) {
        let count = count.max(0) as u64;
        if count == 0 {
            return;
        }
        let total = self.mean_ms as u128 * u128::from(self.count) + sum.max(0) as u128;
        self.count += count;
        self.mean_ms = (total / u128::from(self.count)) as u64;
        self.max_ms = self.max_ms.max(max.unwrap_or(0).max(0) as u64);
    }
}

/// Finds, by binary search over `lo..=hi`, the first key whose row (the
/// first at or after it, as `probe` answers `(key, at)`) was written at or
/// after `target` ms; the journal's rows are in time order along their
/// commit order, give or take [`JOURNAL_SKEW_MS`], which the callers allow
/// for. About 2·log2(hi − lo) index lookups.
async fn first_key_at<F, Fut>(lo: u64, hi: u64, target: u64, mut probe: F) -> StoreResult<u64>
where
    F: FnMut(u64) -> Fut,
    Fut: Future<Output = StoreResult<Option<(u64, u64)>>>,
{
    let (mut lo, mut hi) = (lo, hi.saturating_add(1));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match probe(mid).await? {
            Some((key, at)) if at < target => lo = key.saturating_add(1).max(mid + 1),
            _ => hi = mid,
        }
    }
    Ok(lo)
}

/// Where the journal's rows written at a time start, and its clock: the
/// same search on both databases, over each one's commit order (ids on
/// SQLite, transaction ids on PostgreSQL: see [`Db::journal_key`]).
impl<DB: Db> JournalSearch for Pool<DB> {
    fn journal_key(&self, at: u64) -> BoxFuture<'_, Option<u64>> {
        boxed(async move {
            let span = db::query(const { statement::<DB>("dashboard_journal_span") }, &[])?.fetch_one(DB::on_pool(self)).await?;
            let (Some(lo), Some(hi)) = (DB::journal_key(&span, 0)?, DB::journal_key(&span, 1)?) else {
                return Ok(None);
            };
            let key = first_key_at(lo, hi, at, |key| async move {
                let probe = db::query(const { statement::<DB>("dashboard_journal_probe") }, &journal_range(key, None))?;
                let Some(row) = probe.fetch_optional(DB::on_pool(self)).await? else { return Ok(None) };
                Ok(DB::journal_key(&row, 0)?.map(|key| (key, row.int("at").map_or(0, |at| at.max(0) as u64))))
            })
            .await?;
            Ok(Some(key))
        })
    }

    fn journal_now(&self, now: Millis) -> BoxFuture<'_, Millis> {
        boxed(async move {
            let Some(clock) = DB::SERVER_CLOCK else { return Ok(now) };
            let row = db::query(clock, &[])?.fetch_one(DB::on_pool(self)).await?;
            Ok(Millis(validate::unsigned("clock", "now", row.opt_int_at(0)?.unwrap_or(0))?))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;


    #[test]
    fn the_binary_search_finds_the_first_key_written_at_or_after_the_target() {
        // Keys 10..=1000 with gaps of 3, written at key * 2 ms.
        let keys: Vec<u64> = (10..=1000).step_by(3).collect();
        let probe = |k: u64| {
            let found = keys.iter().find(|&&key| key >= k).map(|&key| (key, key * 2));
            async move { Ok(found) }
        };
        let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        for target in [0, 20, 21, 22, 500, 1999, 2000] {
            let key = rt.block_on(first_key_at(10, 1000, target, probe)).expect("search");
            let first = keys.iter().copied().find(|&key| key * 2 >= target);
            match first {
                // Never above the first key written at or after target, and
                // no key written before target lies at or above it.
                Some(first) => {
                    assert!(key <= first, "target {target}: {key} > {first}");
                    assert!(keys.iter().all(|&k| k < key || k * 2 >= target), "target {target}: {key}");
                }
                None => assert!(key > 1000),
            }
        }
    }

    #[test]
    fn span_stats_merge_into_one_mean_and_max() {
        let mut stats = SpanStats::default();
        stats.merge(2, 300, Some(200));
        stats.merge(0, 0, None);
        stats.merge(1, 600, Some(600));
        assert_eq!(stats, SpanStats { count: 3, mean_ms: 300, max_ms: 600 });
    }
}
