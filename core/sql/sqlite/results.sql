-- results: the results recorded for a job's attempts.
--
-- ?1 = id: the job (integer)
--
-- Returns one row per result, by token: token, result (JSON text).
SELECT token, result FROM leasehold_results WHERE job_id = ?1 ORDER BY token
