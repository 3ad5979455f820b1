//! The schedule statements (`core/sql/*/schedule_*.sql`), run once for
//! both databases: every schedule column is read under the same name on
//! both, payload as text, and the state of the schedule's last job joined
//! in as `last_state`; where the statements differ (a SQLite job is
//! stamped with the caller's clock, a PostgreSQL one with the server's),
//! each takes the values its header names.

use leasehold_core::Millis;
use sqlx::Pool;

use super::backend::{BoxFuture, ScheduleChange, ScheduleRead, Schedules, boxed};
use super::db::{self, Arg, Db, statement};
use super::rows::DecodeRow;
use super::schedule::{ScheduleRow, Swap, read_row};

/// What a scheduled job is inserted with, as bound.
pub(crate) struct JobRow<'a> {
    pub(crate) queue: &'a str,
    pub(crate) payload: &'a str,
    pub(crate) max_attempts: i32,
    pub(crate) timeout_ms: Option<i64>,
}

impl<DB: Db> Schedules for Pool<DB> {
    fn add_schedule<'a>(&'a self, offered: &'a [(&'a str, Arg<'a>)]) -> BoxFuture<'a, Option<i64>> {
        boxed(async move {
            let added = db::query(const { statement::<DB>("schedule_add") }, offered)?.fetch_optional(DB::on_pool(self)).await?;
            added.map(|row| row.int("id")).transpose()
        })
    }

    fn read_schedules<'a>(&'a self, which: ScheduleRead, offered: &'a [(&'a str, Arg<'a>)]) -> BoxFuture<'a, Vec<ScheduleRow>> {
        let statement = match which {
            ScheduleRead::List => const { statement::<DB>("schedule_list") },
            ScheduleRead::Due => const { statement::<DB>("schedule_due") },
        };
        boxed(async move { db::query(statement, offered)?.fetch_all(DB::on_pool(self)).await?.iter().map(read_row).collect() })
    }

    fn next_due<'a>(&'a self, queue: &'a str) -> BoxFuture<'a, Option<i64>> {
        boxed(async move {
            let next_due = const { statement::<DB>("schedule_next_due") };
            db::query(next_due, &[("queue", queue.into())])?.fetch_one(DB::on_pool(self)).await?.opt_int_at(0)
        })
    }

    fn change_schedule<'a>(&'a self, which: ScheduleChange, offered: &'a [(&'a str, Arg<'a>)]) -> BoxFuture<'a, u64> {
        let statement = match which {
            ScheduleChange::Remove => const { statement::<DB>("schedule_remove") },
            ScheduleChange::Pause => const { statement::<DB>("schedule_pause") },
            ScheduleChange::Resume => const { statement::<DB>("schedule_resume") },
        };
        boxed(db::execute(DB::on_pool(self), statement, offered))
    }

    fn advance<'a>(&'a self, swap: &'a Swap, slots: &'a [Millis], job: &'a JobRow<'a>, now: i64) -> BoxFuture<'a, Option<Vec<i64>>> {
        boxed(async move {
            let Swap { id, from, to, next } = *swap;
            let mut tx = self.begin().await?;
            let cursor = [
                ("last_slot", to.into()),
                ("next_slot", next.into()),
                ("last_run_slot", slots.last().map(|at| at.0 as i64).into()),
                ("id", id.into()),
                ("read_slot", from.into()),
            ];
            if db::execute(DB::on_conn(&mut tx), const { statement::<DB>("schedule_advance") }, &cursor).await? == 0 {
                tx.rollback().await?;
                return Ok(None);
            }
            let mut ids = Vec::with_capacity(slots.len());
            for slot in slots {
                let row = [
                    ("queue", job.queue.into()),
                    ("payload", job.payload.into()),
                    ("run_at", (slot.0 as i64).into()),
                    ("max_attempts", job.max_attempts.into()),
                    ("timeout_ms", job.timeout_ms.into()),
                    ("now", now.into()),
                ];
                let insert = db::query(const { statement::<DB>("schedule_insert_job") }, &row)?;
                ids.push(insert.fetch_one(DB::on_conn(&mut tx)).await?.int("id")?);
            }
            if let Some(&last) = ids.last() {
                let set = [("job_id", last.into()), ("id", id.into())];
                db::execute(DB::on_conn(&mut tx), const { statement::<DB>("schedule_set_last_job") }, &set).await?;
                if let Some(notify) = DB::NOTIFY {
                    db::execute(DB::on_conn(&mut tx), notify, &[("queue", job.queue.into())]).await?;
                }
            }
            tx.commit().await?;
            Ok(Some(ids))
        })
    }
}
