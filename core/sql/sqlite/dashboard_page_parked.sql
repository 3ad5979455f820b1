-- dashboard_page_parked: dashboard_page of dead or cancelled jobs, through their
-- index. Binds as dashboard_page; the split and clock do not narrow it.
--
-- ?1 = below: ids below this one
-- ?2 = floor: ids at or above this one
-- ?3 = queue: the queue (NULL: any)
-- ?4 = state: the stored state (NULL: any)
-- ?5 = split: `queued`, `scheduled` or `retrying` (NULL: no split)
-- ?6 = now: the caller's clock (ms since the Unix epoch), for the split
-- ?7 = text: text the payload contains (NULL: any)
-- ?8 = limit: most rows
--
-- Returns the job rows (payload as text).
SELECT id, queue, payload AS payload, state, priority, run_at, attempts, max_attempts, timeout_ms,
       idempotency_key, token, owner_host, owner_pid, owner_nonce, owner_start_time, owner_boot_id,
       claimed_at, heartbeat_at, lease_ms, last_error, created_at, finished_at, cancelled_at,
       cancelled_by, cancel_reason
FROM leasehold_jobs INDEXED BY leasehold_jobs_parked
WHERE state IN ('dead', 'cancelled') AND state = ?4 AND id < ?1 AND id >= ?2
  AND (?3 IS NULL OR queue = ?3) AND (?5 IS NULL OR TRUE) AND (?6 IS NULL OR TRUE)
  AND (?7 IS NULL OR instr(payload, ?7) > 0)
ORDER BY id DESC LIMIT ?8
