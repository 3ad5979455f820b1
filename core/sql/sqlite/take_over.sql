-- take_over: takes a stale running job over for a claimant if it still
-- matches the exact snapshot read and still has attempts left: a fresh
-- token under a new lease. Stale on the caller's wall clock, or by its
-- lease watch (?12: the claimant saw that very lease unrenewed for longer
-- than its window on its own clock, which a step of either wall clock
-- cannot fool). Run in one transaction with bury.sql,
-- attempt_lost.sql and journal.sql.
--
-- ?1 = id: the job (integer)
-- ?2 = token: the token read (integer)
-- ?3 = nonce: the owner nonce read (text)
-- ?4 = heartbeat_at: the heartbeat read, ms, or NULL (integer)
-- ?5 = now: the caller's clock, ms (integer)
-- ?6 = owner_host: the claimant's host id (text)
-- ?7 = owner_pid: the claimant's pid (integer)
-- ?8 = owner_nonce: the claimant's nonce (text)
-- ?9 = owner_start_time: the claimant's start time, or NULL (integer)
-- ?10 = owner_boot_id: the claimant's boot id, or NULL (text)
-- ?11 = lease_ms: the new lease's stale window, ms (integer)
-- ?12 = watched: 1 if the claimant's lease watch let the lease go, else 0
--       (integer)
--
-- Returns one row if taken over: id, token, payload, attempts,
-- max_attempts, timeout_ms, now, queue.
UPDATE leasehold_jobs SET token = token + 1, attempts = attempts + 1,
    owner_host = ?6, owner_pid = ?7, owner_nonce = ?8, owner_start_time = ?9,
    owner_boot_id = ?10, claimed_at = ?5, heartbeat_at = ?5, lease_ms = ?11,
    expires_at = ?5 + ?11
WHERE id = ?1 AND state = 'running' AND token = ?2 AND owner_nonce = ?3
  AND heartbeat_at IS ?4 AND (expires_at < ?5 OR ?12 = 1)
  AND attempts < max_attempts
RETURNING id, token, payload, attempts, max_attempts, timeout_ms, claimed_at AS now, queue
