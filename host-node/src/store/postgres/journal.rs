//! Reading the settlements journal on PostgreSQL: a row may commit after
//! rows with higher ids, so reads go by transaction ids (see
//! `store::journal`).

use sqlx::PgPool;

use leasehold_core::queue::statements::postgres as sql;

use crate::store::backend::{BoxFuture, Journals, boxed};
use crate::store::journal::{JournalCursor, SettlementRecord, record};
use crate::store::rows::DecodeRow;
use crate::store::{StoreError, StoreResult};

impl Journals for PgPool {
    fn settlements<'a>(&'a self, cursor: &'a mut JournalCursor) -> BoxFuture<'a, Vec<SettlementRecord>> {
        boxed(async move {
            // One snapshot for the xmin and the rows it bounds.
            let mut tx = self.begin_with(sql::READ_SNAPSHOT.text).await?;
            let xmin: String = sqlx::query_scalar(sql::JOURNAL_XMIN.text).fetch_one(&mut *tx).await?;
            let rows = sqlx::query(sql::SETTLEMENTS.text)
                .bind(cursor.xmin.to_string())
                .bind(cursor.min_id)
                .fetch_all(&mut *tx)
                .await?;
            tx.commit().await?;
            let rows = rows
                .iter()
                .map(|row| Ok((xid(&row.text("xid")?)?, record(row)?)))
                .collect::<StoreResult<Vec<_>>>()?;
            let mut fresh = cursor.admit(rows, xid(&xmin)?);
            fresh.sort_unstable_by_key(|row| row.id);
            Ok(fresh)
        })
    }

    fn settlement_fence(&self, from: i64) -> BoxFuture<'_, Option<(i64, u64)>> {
        boxed(async move {
            // Two statements, so the transaction id is taken after the
            // sequence was read.
            let taken: i64 = sqlx::query_scalar(sql::SETTLEMENT_ID_TAKEN.text).fetch_one(self).await?;
            if taken < from {
                // Nothing taken past what the reader holds: a fence any
                // read passes, and no transaction id spent on it.
                return Ok(Some((taken, 0)));
            }
            let next: String = sqlx::query_scalar(sql::SETTLEMENT_NEXT_XID.text).fetch_one(self).await?;
            Ok(Some((taken, xid(&next)?)))
        })
    }
}

/// A transaction id as PostgreSQL writes an `xid8` in text.
pub(super) fn xid(text: &str) -> StoreResult<u64> {
    text.parse().map_err(|_| StoreError::CorruptRow {
        table: "leasehold_settlements",
        detail: format!("xid {text:?} is not a number"),
    })
}
