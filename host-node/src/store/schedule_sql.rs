//! The schedule statements, one module per backend with the same names
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
    pub const ADD: &str = "
        INSERT INTO leasehold_schedules
            (name, queue, payload, max_attempts, timeout_ms, every_ms, cron, time_zone,
             catch_up, overlap, created_at, last_slot, next_slot)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?12)
        ON CONFLICT (name) DO NOTHING
        RETURNING id";

    pub const LIST: &str = "
        SELECT s.*, j.state AS last_state
        FROM leasehold_schedules s LEFT JOIN leasehold_jobs j ON j.id = s.last_job_id
        WHERE ?1 IS NULL OR s.name = ?1
        ORDER BY s.name";

    pub const DUE: &str = "
        SELECT s.*, j.state AS last_state
        FROM leasehold_schedules s LEFT JOIN leasehold_jobs j ON j.id = s.last_job_id
        WHERE s.queue = ?1 AND s.paused_at IS NULL AND s.next_slot <= ?2
        ORDER BY s.next_slot";

    pub const NEXT_DUE: &str = "
        SELECT min(next_slot) FROM leasehold_schedules WHERE queue = ?1 AND paused_at IS NULL";

    /// The compare-and-swap on the cursor: lands only while the schedule is
    /// the one read (same id), still at the cursor read, and not paused.
    pub const ADVANCE: &str = "
        UPDATE leasehold_schedules
        SET last_slot = ?1, next_slot = ?2, last_run_slot = coalesce(?3, last_run_slot)
        WHERE id = ?4 AND last_slot = ?5 AND paused_at IS NULL";

    const INSERT_JOB: &str = "
        INSERT INTO leasehold_jobs (queue, payload, run_at, max_attempts, timeout_ms, created_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6)
        RETURNING id";

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

    pub const SET_LAST_JOB: &str = "UPDATE leasehold_schedules SET last_job_id = ?1 WHERE id = ?2";

    /// Nothing to do: the store's local wakers are all a SQLite queue has.
    pub async fn notify(_tx: &mut sqlx::SqliteConnection, _queue: &str) -> sqlx::Result<()> {
        Ok(())
    }

    pub const REMOVE: &str = "DELETE FROM leasehold_schedules WHERE name = ?1";

    pub const PAUSE: &str = "
        UPDATE leasehold_schedules SET paused_at = ?2 WHERE name = ?1 AND paused_at IS NULL";

    /// Resumes from `now`: the slots that fell due while paused are skipped.
    pub const RESUME: &str = "
        UPDATE leasehold_schedules SET paused_at = NULL, last_slot = ?2, next_slot = ?3
        WHERE name = ?1 AND paused_at IS NOT NULL";
}

#[cfg(feature = "postgres")]
pub(super) mod postgres {
    pub const ADD: &str = "
        INSERT INTO leasehold_schedules
            (name, queue, payload, max_attempts, timeout_ms, every_ms, cron, time_zone,
             catch_up, overlap, created_at, last_slot, next_slot)
        VALUES ($1, $2, $3::jsonb, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12)
        ON CONFLICT (name) DO NOTHING
        RETURNING id";

    pub const LIST: &str = "
        SELECT s.id, s.name, s.queue, s.payload::text AS payload, s.max_attempts, s.timeout_ms,
               s.every_ms, s.cron, s.time_zone, s.catch_up, s.overlap, s.paused_at, s.created_at,
               s.last_slot, s.next_slot, s.last_run_slot, s.last_job_id, j.state AS last_state
        FROM leasehold_schedules s LEFT JOIN leasehold_jobs j ON j.id = s.last_job_id
        WHERE $1::text IS NULL OR s.name = $1
        ORDER BY s.name";

    pub const DUE: &str = "
        SELECT s.id, s.name, s.queue, s.payload::text AS payload, s.max_attempts, s.timeout_ms,
               s.every_ms, s.cron, s.time_zone, s.catch_up, s.overlap, s.paused_at, s.created_at,
               s.last_slot, s.next_slot, s.last_run_slot, s.last_job_id, j.state AS last_state
        FROM leasehold_schedules s LEFT JOIN leasehold_jobs j ON j.id = s.last_job_id
        WHERE s.queue = $1 AND s.paused_at IS NULL AND s.next_slot <= $2
        ORDER BY s.next_slot";

    pub const NEXT_DUE: &str = "
        SELECT min(next_slot) FROM leasehold_schedules WHERE queue = $1 AND paused_at IS NULL";

    /// The compare-and-swap on the cursor (see the SQLite twin). Under READ
    /// COMMITTED a second worker's swap waits for the first's row lock, then
    /// re-reads the row, finds the cursor moved, and updates nothing.
    pub const ADVANCE: &str = "
        UPDATE leasehold_schedules
        SET last_slot = $1, next_slot = $2, last_run_slot = coalesce($3, last_run_slot)
        WHERE id = $4 AND last_slot = $5 AND paused_at IS NULL";

    /// The database's clock stamps `created_at`, as every other enqueue on
    /// PostgreSQL does.
    const INSERT_JOB: &str = "
        INSERT INTO leasehold_jobs (queue, payload, run_at, max_attempts, timeout_ms, created_at)
        VALUES ($1, $2::jsonb, $3, $4, $5,
                CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint))
        RETURNING id";

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

    /// Wakes the queue's listeners on every machine when the transaction
    /// commits (the channel and payload of every enqueue).
    const NOTIFY: &str = "SELECT pg_notify('leasehold_jobs', current_schema() || '/' || $1)";

    /// Runs [`NOTIFY`] for `queue` in the transaction.
    pub async fn notify(tx: &mut sqlx::PgConnection, queue: &str) -> sqlx::Result<()> {
        sqlx::query(NOTIFY).bind(queue).execute(tx).await.map(drop)
    }

    pub const SET_LAST_JOB: &str = "UPDATE leasehold_schedules SET last_job_id = $1 WHERE id = $2";

    pub const REMOVE: &str = "DELETE FROM leasehold_schedules WHERE name = $1";

    pub const PAUSE: &str = "
        UPDATE leasehold_schedules SET paused_at = $2 WHERE name = $1 AND paused_at IS NULL";

    /// Resumes from `now`: the slots that fell due while paused are skipped.
    pub const RESUME: &str = "
        UPDATE leasehold_schedules SET paused_at = NULL, last_slot = $2, next_slot = $3
        WHERE name = $1 AND paused_at IS NOT NULL";
}
