-- delete_results: deletes the recorded results of deleted jobs.
--
-- ?1 = ids: a JSON array of job ids (text)
DELETE FROM leasehold_results WHERE job_id IN (SELECT value FROM json_each(?1))
