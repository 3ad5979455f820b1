-- attempts_cancelled: logs the running attempts of the jobs being
-- cancelled as lost, under their own token, before the token moves. The
-- first statement of the cancel's transaction: a write, so the transaction
-- holds the write lock from its start.
--
-- ?1 = ids: only these jobs (a JSON array), or NULL for any (text)
-- ?2 = queue: only this queue, or NULL for any (text)
-- ?3 = states: the states it applies to (a JSON array) (text)
-- ?4 = now: the caller's clock, ms (integer)
-- ?5 = note: who cancelled and why (text)
INSERT INTO leasehold_attempts (job_id, token, owner_host, owner_pid, owner_nonce,
    owner_start_time, owner_boot_id, started_at, ended_at, outcome, error)
SELECT id, token, owner_host, owner_pid, owner_nonce, owner_start_time, owner_boot_id,
    claimed_at, ?4, 'lease-lost', ?5
FROM leasehold_jobs
WHERE (?1 IS NULL OR id IN (SELECT value FROM json_each(?1))) AND (?2 IS NULL OR queue = ?2)
  AND state IN (SELECT value FROM json_each(?3)) AND state = 'running'
