//! Steering on PostgreSQL: one statement logs, journals and changes the
//! jobs; its NOTIFYs are sent at commit only. It stamps the server's
//! clock, as the purge does.

use sqlx::PgPool;

use leasehold_core::queue::statements::postgres as sql;

use crate::store::backend::{BoxFuture, Steers, boxed};
use crate::store::steer::{Action, Selection, cancel_note};

impl Steers for PgPool {
    fn steer<'a>(&'a self, action: Action<'a>, selection: &'a Selection<'a>, _now: i64) -> BoxFuture<'a, Option<Vec<(i64, String)>>> {
        boxed(async move {
            let mut tx = self.begin().await?;
            let query = match action {
                Action::Cancel { by, reason } => sqlx::query_as(sql::CANCEL.text)
                    .bind(&selection.ids)
                    .bind(selection.queue)
                    .bind(selection.states)
                    .bind(by)
                    .bind(reason)
                    .bind(cancel_note(by, reason)),
                Action::Retry => {
                    sqlx::query_as(sql::RETRY.text).bind(&selection.ids).bind(selection.queue).bind(selection.states)
                }
            };
            let changed: Vec<(i64, String, i64)> = query.fetch_all(&mut *tx).await?;
            if !selection.complete(changed.len()) {
                tx.rollback().await?;
                return Ok(None);
            }
            tx.commit().await?;
            Ok(Some(changed.into_iter().map(|(id, queue, _)| (id, queue)).collect()))
        })
    }
}
