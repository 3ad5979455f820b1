-- bury: dead-letters a stale running job whose lost lease was its last
-- attempt, if it still matches the exact snapshot read (see take_over.sql).
--
-- ?1 = id: the job (integer)
-- ?2 = token: the token read (integer)
-- ?3 = nonce: the owner nonce read (text)
-- ?4 = heartbeat_at: the heartbeat read, ms, or NULL (integer)
-- ?5 = now: the caller's clock, ms (integer)
-- ?6 = error: why, kept as the job's last error (text)
-- ?7 = watched: 1 if the claimant's lease watch let the lease go, else 0
--      (integer; see take_over.sql)
--
-- Returns one row if dead-lettered: id, attempts, queue.
UPDATE leasehold_jobs SET token = token + 1, state = 'dead', finished_at = ?5,
    last_error = ?6
WHERE id = ?1 AND state = 'running' AND token = ?2 AND owner_nonce = ?3
  AND heartbeat_at IS ?4 AND (expires_at < ?5 OR ?7 = 1)
  AND attempts >= max_attempts
RETURNING id, attempts, queue
