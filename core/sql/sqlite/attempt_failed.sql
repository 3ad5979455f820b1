-- attempt_failed: logs a job's attempt that just failed (the job row still
-- carries its token, owner and claim time).
--
-- ?1 = id: the job (integer)
-- ?2 = now: the caller's clock, ms (integer)
-- ?3 = error: the attempt's error (text)
INSERT INTO leasehold_attempts (job_id, token, owner_host, owner_pid,
    owner_nonce, owner_start_time, owner_boot_id, started_at, ended_at, outcome, error)
SELECT id, token, owner_host, owner_pid, owner_nonce, owner_start_time, owner_boot_id,
    claimed_at, ?2, 'failed', ?3
FROM leasehold_jobs WHERE id = ?1
