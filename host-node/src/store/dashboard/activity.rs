//! The journal's side of the dashboard: settlements per time bucket, one
//! job's settlements, and the binary search on the journal's commit order
//! that finds where a time range starts without scanning it.

use std::future::Future;

use leasehold_core::Millis;

#[cfg(feature = "postgres")]
use leasehold_core::queue::statements::postgres as pg_sql;
#[cfg(feature = "sqlite")]
use leasehold_core::queue::statements::sqlite as lite_sql;

use super::{Activity, ActivityBucket, JOURNAL_SKEW_MS, SpanStats};
use crate::store::journal::{SettlementRecord, record};
use crate::store::{JobRecord, Pool, Store, StoreError, StoreResult, validate};

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
        let now = match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(_) => now,
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let _ = now;
                Millis(validate::unsigned("clock", "now", sqlx::query_scalar(pg_sql::DASHBOARD_NOW.text).fetch_one(pool).await?)?)
            }
        };
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
        let rows: Vec<ActivityRow> = match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                let Some(start) = lite_journal_key(pool, from).await? else { return Ok(Activity::empty(since, bucket_ms, count)) };
                sqlx::query_as(lite_sql::DASHBOARD_ACTIVITY.text).bind(start).bind(since_ms).bind(bucket).fetch_all(pool).await?
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let Some(start) = pg_journal_key(pool, from).await? else { return Ok(Activity::empty(since, bucket_ms, count)) };
                sqlx::query_as(pg_sql::DASHBOARD_ACTIVITY.text).bind(start.to_string()).bind(since_ms).bind(bucket).fetch_all(pool).await?
            }
        };
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
        match &self.inner.pool {
            #[cfg(feature = "sqlite")]
            Pool::Sqlite(pool) => {
                let Some(start) = lite_journal_key(pool, from).await? else { return Ok(Vec::new()) };
                let end = match to {
                    Some(to) => lite_journal_key(pool, to).await?.unwrap_or(i64::MAX),
                    None => i64::MAX,
                };
                let rows = sqlx::query(lite_sql::DASHBOARD_JOB_SETTLEMENTS.text).bind(start).bind(end).bind(job.id.0).fetch_all(pool).await?;
                rows.iter().map(record).collect()
            }
            #[cfg(feature = "postgres")]
            Pool::Postgres(pool) => {
                let Some(start) = pg_journal_key(pool, from).await? else { return Ok(Vec::new()) };
                let end = match to {
                    Some(to) => pg_journal_key(pool, to).await?.unwrap_or(u64::MAX),
                    None => u64::MAX,
                };
                let rows = sqlx::query(pg_sql::DASHBOARD_JOB_SETTLEMENTS.text)
                    .bind(start.to_string())
                    .bind(end.to_string())
                    .bind(job.id.0)
                    .fetch_all(pool)
                    .await?;
                rows.iter().map(record).collect()
            }
        }
    }
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

/// The SQLite journal id from which rows written at or after `at` start;
/// `None` for an empty journal.
#[cfg(feature = "sqlite")]
async fn lite_journal_key(pool: &sqlx::SqlitePool, at: u64) -> StoreResult<Option<i64>> {
    let (Some(lo), Some(hi)): (Option<i64>, Option<i64>) = sqlx::query_as(lite_sql::DASHBOARD_JOURNAL_SPAN.text).fetch_one(pool).await? else {
        return Ok(None);
    };
    let key = first_key_at(lo.max(0) as u64, hi.max(0) as u64, at, |key| async move {
        let row: Option<(i64, i64)> =
            sqlx::query_as(lite_sql::DASHBOARD_JOURNAL_PROBE.text).bind(key as i64).fetch_optional(pool).await?;
        Ok(row.map(|(id, at)| (id.max(0) as u64, at.max(0) as u64)))
    })
    .await?;
    Ok(Some(key as i64))
}

/// The PostgreSQL transaction id from which journal rows written at or
/// after `at` start; `None` for an empty journal.
#[cfg(feature = "postgres")]
async fn pg_journal_key(pool: &sqlx::PgPool, at: u64) -> StoreResult<Option<u64>> {
    let (Some(lo), Some(hi)): (Option<String>, Option<String>) = sqlx::query_as(pg_sql::DASHBOARD_JOURNAL_SPAN.text).fetch_one(pool).await? else {
        return Ok(None);
    };
    let number = |text: &str| {
        text.parse::<u64>().map_err(|_| StoreError::CorruptRow {
            table: "leasehold_settlements",
            detail: format!("xid {text:?} is not a number"),
        })
    };
    let key = first_key_at(number(&lo)?, number(&hi)?, at, |key| async move {
        let row: Option<(String, i64)> =
            sqlx::query_as(pg_sql::DASHBOARD_JOURNAL_PROBE.text).bind(key.to_string()).fetch_optional(pool).await?;
        match row {
            Some((xid, at)) => Ok(Some((number(&xid)?, at.max(0) as u64))),
            None => Ok(None),
        }
    })
    .await?;
    Ok(Some(key))
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
