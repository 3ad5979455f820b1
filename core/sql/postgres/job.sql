-- job: one job row, as inspection reads it (payload as text). Read with
-- job_attempts.sql in one REPEATABLE READ transaction.
--
-- $1 = id: the job (int8)
--
-- Returns the job's row, or none: id, queue, payload, state, priority,
-- run_at, attempts, max_attempts, timeout_ms, idempotency_key, token,
-- owner_host, owner_pid, owner_nonce, owner_start_time, owner_boot_id,
-- claimed_at, heartbeat_at, lease_ms, last_error, created_at, finished_at,
-- cancelled_at, cancelled_by, cancel_reason, and shown_state: the state as the
-- dashboard and `leasehold status` count it (fragments/shown_state.sql).
SELECT id, queue, payload::text AS payload, state, priority, run_at, attempts,
    max_attempts, timeout_ms, idempotency_key, token, owner_host, owner_pid, owner_nonce,
    owner_start_time, owner_boot_id, claimed_at, heartbeat_at, lease_ms, last_error,
    created_at, finished_at, cancelled_at, cancelled_by, cancel_reason,
\include fragments/shown_state.sql AS shown_state
FROM leasehold_jobs WHERE id = $1
