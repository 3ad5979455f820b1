-- dashboard_page_parked: dashboard_page of dead or cancelled jobs. Binds as
-- dashboard_page; the split does not narrow it.
--
-- $1 = below: ids below this one
-- $2 = floor: ids at or above this one
-- $3 = queue: the queue (NULL: any)
-- $4 = state: the stored state (NULL: any)
-- $5 = split: `queued`, `scheduled` or `retrying` at the server's clock (NULL: no split)
-- $6 = text: text the payload contains (NULL: any)
-- $7 = limit: most rows
--
-- Returns the job rows (payload as text).
SELECT id, queue, payload::text AS payload, state, priority, run_at, attempts, max_attempts, timeout_ms,
       idempotency_key, token, owner_host, owner_pid, owner_nonce, owner_start_time, owner_boot_id,
       claimed_at, heartbeat_at, lease_ms, last_error, created_at, finished_at, cancelled_at,
       cancelled_by, cancel_reason
FROM leasehold_jobs
WHERE state IN ('dead', 'cancelled') AND state = $4 AND id < $1 AND id >= $2
  AND ($3::text IS NULL OR queue = $3) AND ($5::text IS NULL OR TRUE)
  AND ($6::text IS NULL OR strpos(payload::text, $6) > 0)
ORDER BY id DESC LIMIT $7
