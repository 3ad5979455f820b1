-- list_jobs: jobs newest first (highest id first), optionally of one queue
-- and in one state, without their attempts.
--
-- ?1 = queue: only this queue, or NULL (text)
-- ?2 = state: only this state, or NULL (text)
-- ?3 = limit: most rows (integer; LIMIT CAST: see stale.sql)
--
-- Returns one row per job: id, queue, payload, state, priority, run_at,
-- attempts, max_attempts, timeout_ms, idempotency_key, token, owner_host,
-- owner_pid, owner_nonce, owner_start_time, owner_boot_id, claimed_at,
-- heartbeat_at, lease_ms, last_error, created_at, finished_at,
-- cancelled_at, cancelled_by, cancel_reason.
SELECT id, queue, payload, state, priority, run_at, attempts, max_attempts, timeout_ms,
    idempotency_key, token, owner_host, owner_pid, owner_nonce, owner_start_time, owner_boot_id,
    claimed_at, heartbeat_at, lease_ms, last_error, created_at, finished_at, cancelled_at,
    cancelled_by, cancel_reason
FROM leasehold_jobs
WHERE (?1 IS NULL OR queue = ?1) AND (?2 IS NULL OR state = ?2)
ORDER BY id DESC LIMIT CAST(?3 AS INTEGER)
