-- claim: claims a page of a queue's due queued jobs (not of a paused
-- queue) for a claimant, by priority, due time, id, in one atomic UPDATE:
-- each gets a fresh fencing token and a lease.
--
-- ?1 = owner_host: the claimant's host id (text)
-- ?2 = owner_pid: the claimant's pid (integer)
-- ?3 = owner_nonce: the claimant's incarnation nonce (text)
-- ?4 = owner_start_time: the claimant's process start time, or NULL (integer)
-- ?5 = owner_boot_id: the claimant's boot id, or NULL (text)
-- ?6 = now: the caller's clock, ms (integer)
-- ?7 = lease_ms: the stale window, ms (integer)
-- ?8 = queue: the queue's name (text)
-- ?9 = limit: most jobs (integer; LIMIT CAST: see stale.sql)
-- ?10 = watched: the queued jobs carrying a cancelled attempt's lease
--       (expires_at, see retry.sql) that the claimant has watched unrenewed
--       for that lease's window, as a JSON array of 'id:token' texts; any
--       other such job is not claimed (text)
--
-- Returns one row per claimed job, in no particular order: id, token,
-- payload, attempts, max_attempts, timeout_ms, now, priority, run_at.
UPDATE leasehold_jobs SET state = 'running', token = token + 1,
    attempts = attempts + 1, owner_host = ?1, owner_pid = ?2, owner_nonce = ?3,
    owner_start_time = ?4, owner_boot_id = ?5, claimed_at = ?6, heartbeat_at = ?6,
    lease_ms = ?7, expires_at = ?6 + ?7
WHERE id IN (SELECT j.id FROM leasehold_jobs AS j
             WHERE j.queue = ?8 AND j.state = 'queued' AND j.run_at <= ?6
               AND (j.expires_at IS NULL
                    OR j.id || ':' || j.token IN (SELECT value FROM json_each(?10)))
               AND NOT EXISTS (SELECT 1 FROM leasehold_paused_queues WHERE queue = ?8)
             ORDER BY j.priority, j.run_at, j.id LIMIT CAST(?9 AS INTEGER))
RETURNING id, token, payload, attempts, max_attempts, timeout_ms, claimed_at AS now,
    priority, run_at
