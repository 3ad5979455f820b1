//! Steering on PostgreSQL: one statement logs, journals and changes the
//! jobs; its NOTIFYs are sent at commit only. It stamps the server's
//! clock, as the purge does.

use sqlx::PgPool;

use leasehold_core::queue::statements::postgres as sql;

use crate::store::backend::{BoxFuture, Steers, boxed};
use crate::store::steer::{Action, Due, Selection, Steered, cancel_note};

impl Steers for PgPool {
    fn steer<'a>(&'a self, action: Action<'a>, selection: &'a Selection<'a>, _now: i64) -> BoxFuture<'a, Option<Vec<Steered>>> {
        boxed(async move {
            let mut tx = self.begin().await?;
            let changed: Vec<Steered> = match action {
                Action::Cancel { by, reason } => {
                    let rows: Vec<(i64, String, i64)> = sqlx::query_as(sql::CANCEL.text)
                        .bind(&selection.ids)
                        .bind(selection.queue)
                        .bind(selection.states)
                        .bind(by)
                        .bind(reason)
                        .bind(cancel_note(by, reason))
                        .fetch_all(&mut *tx)
                        .await?;
                    rows.into_iter().map(|(id, queue, _)| Steered { id, queue, due: None }).collect()
                }
                Action::Retry => {
                    let rows: Vec<(i64, String, i64, i64, i64)> = sqlx::query_as(sql::RETRY.text)
                        .bind(&selection.ids)
                        .bind(selection.queue)
                        .bind(selection.states)
                        .fetch_all(&mut *tx)
                        .await?;
                    // The server judges every lease on its one clock: a
                    // claimant watches none (watch_ms).
                    let due = |run_at, now| Some(Due { run_at, now, watch_ms: None });
                    rows.into_iter().map(|(id, queue, run_at, now, _)| Steered { id, queue, due: due(run_at, now) }).collect()
                }
            };
            if !selection.complete(changed.len()) {
                tx.rollback().await?;
                return Ok(None);
            }
            tx.commit().await?;
            Ok(Some(changed))
        })
    }
}
