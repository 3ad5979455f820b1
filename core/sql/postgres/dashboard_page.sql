-- dashboard_page: a page of jobs, newest first, within an id window.
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
WHERE id < $1 AND id >= $2 AND ($3::text IS NULL OR queue = $3) AND ($4::text IS NULL OR state = $4)
  AND ($5::text IS NULL
       OR ($5 = 'queued' AND attempts = 0 AND run_at <= CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint))
       OR ($5 = 'scheduled' AND attempts = 0 AND run_at > CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint))
       OR ($5 = 'retrying' AND attempts > 0))
  AND ($6::text IS NULL OR strpos(payload::text, $6) > 0)
ORDER BY id DESC LIMIT $7
