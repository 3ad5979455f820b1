-- fence_rows: the fence columns of jobs, to say why a fenced write did not
-- land on them.
--
-- ?1 = ids: a JSON array of job ids (text)
--
-- Returns one row per job found: id, token, state, owner_nonce.
SELECT id, token, state, owner_nonce FROM leasehold_jobs
WHERE id IN (SELECT value FROM json_each(?1))
