-- journal_cancelled: journals each job being cancelled as cancelled under
-- its current token, with its owner while it runs, in the cancel's
-- transaction (so journal ids commit in order).
--
-- ?1 = ids: only these jobs (a JSON array), or NULL for any (text)
-- ?2 = queue: only this queue, or NULL for any (text)
-- ?3 = states: the states it applies to (a JSON array) (text)
-- ?4 = now: the caller's clock, ms (integer)
-- ?5 = note: who cancelled and why (text)
INSERT INTO leasehold_settlements (job_id, token, queue, attempt, owner_host, owner_pid,
    owner_nonce, outcome, error, at)
SELECT id, token, queue, attempts,
    CASE WHEN state = 'running' THEN owner_host END,
    CASE WHEN state = 'running' THEN owner_pid END,
    CASE WHEN state = 'running' THEN owner_nonce END, 'cancelled', ?5, ?4
FROM leasehold_jobs
WHERE (?1 IS NULL OR id IN (SELECT value FROM json_each(?1))) AND (?2 IS NULL OR queue = ?2)
  AND state IN (SELECT value FROM json_each(?3))
ORDER BY id
