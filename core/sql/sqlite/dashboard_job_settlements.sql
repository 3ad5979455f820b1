-- dashboard_job_settlements: the settlements journal's rows of one job within a
-- range of the journal.
--
-- ?1 = from_id: the first journal id
-- ?2 = to_id: the last journal id
-- ?3 = job: the job's id
-- Returns the journal's columns, in commit order.
SELECT id, job_id, queue, attempt, token, owner_host, owner_pid, owner_nonce, outcome, error, retry_at, at
FROM leasehold_settlements WHERE id >= ?1 AND id <= ?2 AND job_id = ?3 ORDER BY id
