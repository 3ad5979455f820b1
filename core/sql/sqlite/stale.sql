-- stale: a queue's running jobs whose lease expired, as takeover
-- candidates (read, not locked: take_over.sql compares and swaps on this
-- snapshot), oldest work first. Expired on the caller's wall clock, or
-- seen unrenewed for longer than its window by the claimant's lease watch
-- (?5): a lease stamped by an owner whose clock reads ahead of the
-- claimant's expires on the claimant's clock only that much later.
--
-- ?1 = queue: the queue's name (text)
-- ?2 = now: the caller's clock, ms (integer)
-- ?3 = refused_ids: a JSON array of jobs not to name (text)
-- ?4 = limit: most rows (integer)
-- ?5 = watched: jobs the claimant's lease watch saw unrenewed for longer
--      than their window, a JSON array (text)
--
-- Returns one row per candidate: id, token, owner_host, owner_pid,
-- owner_nonce, owner_start_time, owner_boot_id, claimed_at, heartbeat_at,
-- lease_ms.
--
-- LIMIT CAST(?4 AS INTEGER), not LIMIT ?4: SQLite reads a bare parameter in
-- LIMIT as a constant when it compiles the statement and marks the
-- statement to be compiled again whenever that parameter is bound, which is
-- every execution (a third of the CPU of one-job claims went to recompiling
-- them). Any expression but a bare parameter keeps the prepared statement.
SELECT id, token, owner_host, owner_pid, owner_nonce, owner_start_time,
    owner_boot_id, claimed_at, heartbeat_at, lease_ms
FROM leasehold_jobs
WHERE queue = ?1 AND state = 'running'
  AND (expires_at < ?2 OR id IN (SELECT value FROM json_each(?5)))
  AND id NOT IN (SELECT value FROM json_each(?3))
ORDER BY priority, run_at, id LIMIT CAST(?4 AS INTEGER)
