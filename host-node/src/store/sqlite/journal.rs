//! Reading the settlements journal on SQLite: ids commit in order, so the
//! watermark is the last id read.

use sqlx::SqlitePool;

use leasehold_core::queue::statements::sqlite as sql;

use crate::store::StoreResult;
use crate::store::backend::{BoxFuture, Journals, boxed};
use crate::store::journal::{JournalCursor, SettlementRecord, record};

impl Journals for SqlitePool {
    fn settlements<'a>(&'a self, cursor: &'a mut JournalCursor) -> BoxFuture<'a, Vec<SettlementRecord>> {
        boxed(async move {
            let rows = sqlx::query(sql::SETTLEMENTS.text).bind(cursor.after_id).fetch_all(self).await?;
            let rows = rows.iter().map(record).collect::<StoreResult<Vec<_>>>()?;
            if let Some(last) = rows.last() {
                cursor.after_id = last.id;
            }
            Ok(rows)
        })
    }

    /// None: ids are final as they commit.
    fn settlement_fence(&self, _from: i64) -> BoxFuture<'_, Option<(i64, u64)>> {
        boxed(async { Ok(None) })
    }
}
