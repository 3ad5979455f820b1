-- results: the results recorded for a job's attempts.
--
-- $1 = id: the job (int8)
--
-- Returns one row per result, by token: token, result (JSON text).
SELECT token, result::text FROM leasehold_results WHERE job_id = $1 ORDER BY token
