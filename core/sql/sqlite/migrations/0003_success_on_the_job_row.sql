-- 0003_success_on_the_job_row: from this migration on, a completion does not log its attempt: it is
-- one UPDATE of the job row, which keeps the owner, token and claim time of
-- the attempt that succeeded and gains its finished_at. The view
-- leasehold_attempt_log is every ended attempt: the logged ones (failed,
-- lease lost, and the successes logged before this migration), plus each
-- succeeded job's last attempt read off its row unless it was logged.
CREATE VIEW leasehold_attempt_log AS
SELECT job_id, token, owner_host, owner_pid, owner_nonce, owner_start_time, owner_boot_id,
       started_at, ended_at, outcome, error
FROM leasehold_attempts
UNION ALL
SELECT j.id, j.token, j.owner_host, j.owner_pid, j.owner_nonce, j.owner_start_time,
       j.owner_boot_id, j.claimed_at, j.finished_at, 'succeeded', NULL
FROM leasehold_jobs j
WHERE j.state = 'succeeded'
  AND NOT EXISTS (SELECT 1 FROM leasehold_attempts a WHERE a.job_id = j.id AND a.token = j.token);
