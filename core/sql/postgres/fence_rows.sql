-- fence_rows: the fence columns of jobs, to say why a fenced write did not
-- land on them.
--
-- $1 = ids: the jobs (int8[])
--
-- Returns one row per job found: id, token, state, owner_nonce.
SELECT id, token, state, owner_nonce FROM leasehold_jobs WHERE id = ANY($1)
