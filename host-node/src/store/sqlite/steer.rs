//! Steering on SQLite: the attempt log, the journal and the jobs change in
//! one transaction.

use sqlx::SqlitePool;

use leasehold_core::queue::statements::sqlite as sql;

use crate::store::backend::{BoxFuture, Steers, boxed};
use crate::store::steer::{Action, Due, Selection, Steered, cancel_note};

impl Steers for SqlitePool {
    fn steer<'a>(&'a self, action: Action<'a>, selection: &'a Selection<'a>, now: i64) -> BoxFuture<'a, Option<Vec<Steered>>> {
        boxed(async move {
            let ids = selection.ids.as_ref().map(|ids| serde_json::to_string(ids).expect("ids serialize"));
            let states = serde_json::to_string(selection.states).expect("states serialize");
            let queue = selection.queue;
            let mut tx = self.begin().await?;
            let changed: Vec<Steered> = match action {
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
                    let rows: Vec<(i64, String)> = sqlx::query_as(sql::CANCEL.text)
                        .bind(&ids)
                        .bind(queue)
                        .bind(&states)
                        .bind(now)
                        .bind(by)
                        .bind(reason)
                        .fetch_all(&mut *tx)
                        .await?;
                    rows.into_iter().map(|(id, queue)| Steered { id, queue, due: None }).collect()
                }
                Action::Retry => {
                    let rows: Vec<(i64, String, i64, i64, Option<i64>)> =
                        sqlx::query_as(sql::RETRY.text).bind(&ids).bind(queue).bind(&states).bind(now).fetch_all(&mut *tx).await?;
                    let due = |run_at, now, watch_ms| Some(Due { run_at, now, watch_ms });
                    rows.into_iter().map(|(id, queue, run_at, now, watch)| Steered { id, queue, due: due(run_at, now, watch) }).collect()
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
