-- delete_attempts: deletes the attempt log of deleted jobs.
--
-- ?1 = ids: a JSON array of job ids (text)
DELETE FROM leasehold_attempts WHERE job_id IN (SELECT value FROM json_each(?1))
