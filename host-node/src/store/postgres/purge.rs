//! Purging on PostgreSQL: one statement per range of at most
//! [`PURGE_CHUNK`] rows (row locks only, so ranges can be long), each
//! answering where the next starts; the cut is the server's clock less the
//! span.

use sqlx::PgPool;

use leasehold_core::queue::statements::postgres as sql;

use crate::store::backend::{BoxFuture, Purges, boxed};
use crate::store::purge::Cut;

/// Rows per purge statement.
const PURGE_CHUNK: i64 = 10_000;

impl Purges for PgPool {
    fn purge_jobs<'a>(&'a self, queue: Option<&'a str>, states: &'a [&'a str], cut: Cut) -> BoxFuture<'a, u64> {
        boxed(async move {
            let mut purged = 0u64;
            let mut from = i64::MIN;
            loop {
                let range = sqlx::query_as(sql::PURGE_JOBS.text).bind(from).bind(PURGE_CHUNK).bind(states);
                let (last, n): (Option<i64>, i64) = range.bind(cut.older_ms).bind(queue).fetch_one(self).await?;
                purged += n.max(0) as u64;
                match last {
                    Some(last) => from = last,
                    None => return Ok(purged),
                }
            }
        })
    }

    /// In the journal's `(xid, id)` order, the one index it has.
    fn purge_settlements<'a>(&'a self, queue: Option<&'a str>, cut: Cut) -> BoxFuture<'a, u64> {
        boxed(async move {
            let (mut xid, mut id) = ("0".to_owned(), i64::MIN);
            let mut purged = 0u64;
            loop {
                let range = sqlx::query_as(sql::PURGE_SETTLEMENTS.text).bind(&xid).bind(id).bind(PURGE_CHUNK);
                let (last_xid, last_id, n): (Option<String>, Option<i64>, i64) =
                    range.bind(cut.older_ms).bind(queue).fetch_one(self).await?;
                purged += n.max(0) as u64;
                match (last_xid, last_id) {
                    (Some(x), Some(i)) => (xid, id) = (x, i),
                    _ => return Ok(purged),
                }
            }
        })
    }
}
