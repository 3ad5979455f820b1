-- fail: fails a running job's attempt under its fence: with attempts left
-- the job is queued again after the retry delay, on its last attempt it is
-- dead-lettered; the error is kept either way. The lease's end goes
-- (expires_at: the owner settled the attempt itself, so no work of it can
-- hold a retry back; see retry.sql). Journal it (journal.sql),
-- log the attempt (attempt_failed.sql) and keep its result
-- (keep_results.sql) in the same transaction.
--
-- ?1 = id: the job (integer)
-- ?2 = token: its fencing token (integer)
-- ?3 = now: the caller's clock, ms (integer)
-- ?4 = retry_delays_ms: a JSON array: the retry delay after failed attempt
--      k, ms, is element k (from 1), the last element for every later
--      attempt; the store binds the delays its backoff computed (text)
-- ?5 = error: the attempt's error (text)
--
-- Returns one row if the fence held: state ('queued' or 'dead'), run_at,
-- queue, attempts, owner_host, owner_pid, owner_nonce.
UPDATE leasehold_jobs SET
    state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'queued' END,
    run_at = CASE WHEN attempts >= max_attempts THEN run_at
             ELSE ?3 + json_extract(?4, '$[' || (min(max(attempts, 1), json_array_length(?4)) - 1) || ']') END,
    last_error = ?5, expires_at = NULL,
    finished_at = CASE WHEN attempts >= max_attempts THEN ?3 ELSE NULL END
WHERE id = ?1 AND token = ?2 AND state = 'running'
RETURNING state, run_at, queue, attempts, owner_host, owner_pid, owner_nonce
