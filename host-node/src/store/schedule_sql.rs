//! The schedule statements (the catalogue's, `core/sql/*/`), one module
//! per backend with the same names
//! (`store::schedule` runs each flow once for both). Every schedule column
//! is read under the same name on both backends, payload as text, and the
//! state of the schedule's last job joined in as `last_state`.

/// What a scheduled job is inserted with, as bound.
pub(super) struct JobRow<'a> {
    pub queue: &'a str,
    pub payload: &'a str,
    pub max_attempts: i32,
    pub timeout_ms: Option<i64>,
}

#[cfg(feature = "sqlite")]
pub(super) mod sqlite {
    use leasehold_core::queue::statements::sqlite as sql;

    pub const ADD: &str = sql::SCHEDULE_ADD.text;

    pub const LIST: &str = sql::SCHEDULE_LIST.text;

    pub const DUE: &str = sql::SCHEDULE_DUE.text;

    pub const NEXT_DUE: &str = sql::SCHEDULE_NEXT_DUE.text;

    pub const ADVANCE: &str = sql::SCHEDULE_ADVANCE.text;

    const INSERT_JOB: &str = sql::SCHEDULE_INSERT_JOB.text;

    /// Inserts one scheduled job due at `slot`, stamped with the caller's
    /// clock; answers its id.
    pub async fn insert_job(
        tx: &mut sqlx::SqliteConnection,
        job: &super::JobRow<'_>,
        slot: i64,
        now: i64,
    ) -> sqlx::Result<i64> {
        sqlx::query_scalar(INSERT_JOB)
            .bind(job.queue)
            .bind(job.payload)
            .bind(slot)
            .bind(job.max_attempts)
            .bind(job.timeout_ms)
            .bind(now)
            .fetch_one(tx)
            .await
    }

    pub const SET_LAST_JOB: &str = sql::SCHEDULE_SET_LAST_JOB.text;

    /// Nothing to do: the store's local wakers are all a SQLite queue has.
    pub async fn notify(_tx: &mut sqlx::SqliteConnection, _queue: &str) -> sqlx::Result<()> {
        Ok(())
    }

    pub const REMOVE: &str = sql::SCHEDULE_REMOVE.text;

    pub const PAUSE: &str = sql::SCHEDULE_PAUSE.text;

    pub const RESUME: &str = sql::SCHEDULE_RESUME.text;
}

#[cfg(feature = "postgres")]
pub(super) mod postgres {
    use leasehold_core::queue::statements::postgres as sql;

    pub const ADD: &str = sql::SCHEDULE_ADD.text;

    pub const LIST: &str = sql::SCHEDULE_LIST.text;

    pub const DUE: &str = sql::SCHEDULE_DUE.text;

    pub const NEXT_DUE: &str = sql::SCHEDULE_NEXT_DUE.text;

    pub const ADVANCE: &str = sql::SCHEDULE_ADVANCE.text;

    const INSERT_JOB: &str = sql::SCHEDULE_INSERT_JOB.text;

    /// Inserts one scheduled job due at `slot`; answers its id.
    pub async fn insert_job(
        tx: &mut sqlx::PgConnection,
        job: &super::JobRow<'_>,
        slot: i64,
        _now: i64,
    ) -> sqlx::Result<i64> {
        sqlx::query_scalar(INSERT_JOB)
            .bind(job.queue)
            .bind(job.payload)
            .bind(slot)
            .bind(job.max_attempts)
            .bind(job.timeout_ms)
            .fetch_one(tx)
            .await
    }

    const NOTIFY: &str = sql::NOTIFY_QUEUE.text;

    /// Runs [`NOTIFY`] for `queue` in the transaction.
    pub async fn notify(tx: &mut sqlx::PgConnection, queue: &str) -> sqlx::Result<()> {
        sqlx::query(NOTIFY).bind(queue).execute(tx).await.map(drop)
    }

    pub const SET_LAST_JOB: &str = sql::SCHEDULE_SET_LAST_JOB.text;

    pub const REMOVE: &str = sql::SCHEDULE_REMOVE.text;

    pub const PAUSE: &str = sql::SCHEDULE_PAUSE.text;

    pub const RESUME: &str = sql::SCHEDULE_RESUME.text;
}
