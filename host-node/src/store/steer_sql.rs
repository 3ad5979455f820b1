//! The steering statements (`store::steer`), one module per backend.
//!
//! Cancel and retry pick their jobs with one selector: the ids given (NULL:
//! any), the queue (NULL: any) and the states the action applies to. The
//! caller runs them in a transaction and rolls back when fewer jobs changed
//! than were named, so a list of ids changes all of them or none.

#[cfg(feature = "sqlite")]
pub(super) mod sqlite {
    //! Binds: `?1` ids (JSON array or NULL), `?2` queue (or NULL), `?3`
    //! states (JSON array), `?4` the caller's clock, then per statement.

    /// Logs the running attempts being cancelled as lost (`?5`: who
    /// cancelled and why), under their own token, before the token moves.
    /// The first statement of the transaction is this write, so the
    /// transaction holds the write lock from its start.
    pub const LOG_CANCELLED: &str = "
        INSERT INTO leasehold_attempts (job_id, token, owner_host, owner_pid, owner_nonce,
            owner_start_time, owner_boot_id, started_at, ended_at, outcome, error)
        SELECT id, token, owner_host, owner_pid, owner_nonce, owner_start_time, owner_boot_id,
            claimed_at, ?4, 'lease-lost', ?5
        FROM leasehold_jobs
        WHERE (?1 IS NULL OR id IN (SELECT value FROM json_each(?1))) AND (?2 IS NULL OR queue = ?2)
          AND state IN (SELECT value FROM json_each(?3)) AND state = 'running'";

    /// Journals each job being cancelled as `cancelled` (`?5`: who and
    /// why) under its current token, with its owner while it runs, in the
    /// cancel's transaction (so journal ids commit in order).
    pub const JOURNAL_CANCELLED: &str = "
        INSERT INTO leasehold_settlements (job_id, token, queue, attempt, owner_host, owner_pid,
            owner_nonce, outcome, error, at)
        SELECT id, token, queue, attempts,
            CASE WHEN state = 'running' THEN owner_host END,
            CASE WHEN state = 'running' THEN owner_pid END,
            CASE WHEN state = 'running' THEN owner_nonce END, 'cancelled', ?5, ?4
        FROM leasehold_jobs
        WHERE (?1 IS NULL OR id IN (SELECT value FROM json_each(?1))) AND (?2 IS NULL OR queue = ?2)
          AND state IN (SELECT value FROM json_each(?3))
        ORDER BY id";

    /// Cancels: the token moves, so the owner's next renewal or settle of a
    /// running job answers lost. `?5` who, `?6` why.
    pub const CANCEL: &str = "
        UPDATE leasehold_jobs SET state = 'cancelled', token = token + 1, expires_at = NULL,
            finished_at = ?4, cancelled_at = ?4, cancelled_by = ?5, cancel_reason = ?6
        WHERE (?1 IS NULL OR id IN (SELECT value FROM json_each(?1))) AND (?2 IS NULL OR queue = ?2)
          AND state IN (SELECT value FROM json_each(?3))
        RETURNING id, queue";

    /// Queues again, due now, with a fresh attempt budget; the attempt log
    /// is kept (tokens keep growing, so old attempts keep their keys).
    pub const RETRY: &str = "
        UPDATE leasehold_jobs SET state = 'queued', attempts = 0, run_at = ?4, finished_at = NULL,
            cancelled_at = NULL, cancelled_by = NULL, cancel_reason = NULL
        WHERE (?1 IS NULL OR id IN (SELECT value FROM json_each(?1))) AND (?2 IS NULL OR queue = ?2)
          AND state IN (SELECT value FROM json_each(?3))
        RETURNING id, queue";

    /// The states of the ids `?1` (JSON array), to explain a refusal.
    pub const STATES: &str = "
        SELECT id, state FROM leasehold_jobs WHERE id IN (SELECT value FROM json_each(?1))";

    /// Whether queue `?1` has any job or schedule.
    pub const KNOWN_QUEUE: &str = "
        SELECT EXISTS (SELECT 1 FROM leasehold_jobs WHERE queue = ?1)
            OR EXISTS (SELECT 1 FROM leasehold_schedules WHERE queue = ?1)";

    pub const PAUSE: &str = "
        INSERT INTO leasehold_paused_queues (queue, paused_at, paused_by) VALUES (?1, ?2, ?3)
        ON CONFLICT (queue) DO NOTHING";

    pub const RESUME: &str = "DELETE FROM leasehold_paused_queues WHERE queue = ?1";

    pub const PAUSED: &str = "SELECT queue, paused_at, paused_by FROM leasehold_paused_queues ORDER BY queue";
}

#[cfg(feature = "postgres")]
pub(super) mod postgres {
    //! Binds: `$1` ids (bigint[] or NULL), `$2` queue (or NULL), `$3` states
    //! (text[]), then per statement. Times are the database's clock.

    /// Cancels in one statement: locks the jobs, journals each as
    /// `cancelled` and logs the running attempts as lost, under their own
    /// token (`$6`: who cancelled and why), moves
    /// the token (`$4` who, `$5` why), and
    /// NOTIFYs `<schema>/cancel/<id>/<token>` per running job so its owner
    /// can stop it at once. A completion racing it either committed first
    /// (the job is no longer running: not selected) or finds the token moved.
    pub const CANCEL: &str = "
        WITH clock AS MATERIALIZED (
            SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
        target AS MATERIALIZED (
            SELECT id, queue, attempts, token, state, owner_host, owner_pid, owner_nonce,
                owner_start_time, owner_boot_id, claimed_at
            FROM leasehold_jobs
            WHERE ($1::bigint[] IS NULL OR id = ANY($1)) AND ($2::text IS NULL OR queue = $2)
              AND state = ANY($3::text[])
            ORDER BY id
            FOR UPDATE),
        cancelled AS (
            UPDATE leasehold_jobs j SET state = 'cancelled', token = t.token + 1, expires_at = NULL,
                finished_at = c.now, cancelled_at = c.now, cancelled_by = $4, cancel_reason = $5
            FROM target t, clock c
            WHERE j.id = t.id
            RETURNING j.id, j.queue),
        logged AS (
            INSERT INTO leasehold_attempts (job_id, token, owner_host, owner_pid, owner_nonce,
                owner_start_time, owner_boot_id, started_at, ended_at, outcome, error)
            SELECT t.id, t.token, t.owner_host, t.owner_pid, t.owner_nonce, t.owner_start_time,
                t.owner_boot_id, t.claimed_at, c.now, 'lease-lost', $6
            FROM target t, clock c WHERE t.state = 'running'),
        journaled AS (
            INSERT INTO leasehold_settlements (job_id, queue, attempt, token, owner_host, owner_pid,
                owner_nonce, outcome, error, at)
            SELECT t.id, t.queue, t.attempts, t.token,
                CASE WHEN t.state = 'running' THEN t.owner_host END,
                CASE WHEN t.state = 'running' THEN t.owner_pid END,
                CASE WHEN t.state = 'running' THEN t.owner_nonce END, 'cancelled', $6, c.now
            FROM target t, clock c),
        told AS (
            SELECT pg_notify('leasehold_jobs', current_schema() || '/cancel/' || t.id || '/' || t.token)
            FROM target t WHERE t.state = 'running')
        SELECT id, queue, (SELECT count(*) FROM told) AS told FROM cancelled";

    /// Queues again, due now, with a fresh attempt budget, and wakes the
    /// queues' workers.
    pub const RETRY: &str = "
        WITH clock AS MATERIALIZED (
            SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
        retried AS (
            UPDATE leasehold_jobs j SET state = 'queued', attempts = 0, run_at = c.now,
                finished_at = NULL, cancelled_at = NULL, cancelled_by = NULL, cancel_reason = NULL
            FROM clock c
            WHERE ($1::bigint[] IS NULL OR j.id = ANY($1)) AND ($2::text IS NULL OR j.queue = $2)
              AND j.state = ANY($3::text[])
            RETURNING j.id, j.queue),
        woken AS (
            SELECT pg_notify('leasehold_jobs', current_schema() || '/' || q.queue)
            FROM (SELECT DISTINCT queue FROM retried) q)
        SELECT id, queue, (SELECT count(*) FROM woken) AS told FROM retried";

    pub const STATES: &str = "SELECT id, state FROM leasehold_jobs WHERE id = ANY($1)";

    pub const KNOWN_QUEUE: &str = "
        SELECT EXISTS (SELECT 1 FROM leasehold_jobs WHERE queue = $1)
            OR EXISTS (SELECT 1 FROM leasehold_schedules WHERE queue = $1)";

    pub const PAUSE: &str = "
        INSERT INTO leasehold_paused_queues (queue, paused_at, paused_by)
        VALUES ($1, CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint), $2)
        ON CONFLICT (queue) DO NOTHING";

    pub const RESUME: &str = "DELETE FROM leasehold_paused_queues WHERE queue = $1";

    pub const PAUSED: &str = "SELECT queue, paused_at, paused_by FROM leasehold_paused_queues ORDER BY queue";
}
