-- job_attempts: a job's attempts from the view leasehold_attempt_log
-- (ended attempts, and the running or succeeded one off the job row).
--
-- ?1 = id: the job (integer)
--
-- Returns one row per attempt, by token: every column of the view.
SELECT * FROM leasehold_attempt_log WHERE job_id = ?1 ORDER BY token
