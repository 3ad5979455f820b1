//! Steering on SQLite: the attempt log, the journal and the jobs change in
//! one transaction.

use sqlx::SqlitePool;

use leasehold_core::queue::statements::sqlite as sql;

use crate::store::backend::{BoxFuture, Steers, boxed};
use crate::store::steer::{Action, Selection, cancel_note};

impl Steers for SqlitePool {
    fn steer<'a>(&'a self, action: Action<'a>, selection: &'a Selection<'a>, now: i64) -> BoxFuture<'a, Option<Vec<(i64, String)>>> {
        boxed(async move {
            let ids = selection.ids.as_ref().map(|ids| serde_json::to_string(ids).expect("ids serialize"));
            let states = serde_json::to_string(selection.states).expect("states serialize");
            let queue = selection.queue;
            let mut tx = self.begin().await?;
            let changed: Vec<(i64, String)> = match action {
                Action::Cancel { by, reason } => {
                    let note = cancel_note(by, reason);
                    for statement in [sql::ATTEMPTS_CANCELLED.text, sql::JOURNAL_CANCELLED.text] {
                        sqlx::query(statement)
                            .bind(&ids)
                            .bind(queue)
                            .bind(&states)
                            .bind(now)
                            .bind(&note)
                            .execute(&mut *tx)
                            .await?;
                    }
                    sqlx::query_as(sql::CANCEL.text)
                        .bind(&ids)
                        .bind(queue)
                        .bind(&states)
                        .bind(now)
                        .bind(by)
                        .bind(reason)
                        .fetch_all(&mut *tx)
                        .await?
                }
                Action::Retry => {
                    sqlx::query_as(sql::RETRY.text).bind(&ids).bind(queue).bind(&states).bind(now).fetch_all(&mut *tx).await?
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
