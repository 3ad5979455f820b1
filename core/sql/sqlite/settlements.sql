-- settlements: the settlements journal's rows after an id, in id order
-- (which is commit order on SQLite: ids are assigned under the write lock).
--
-- ?1 = after_id: the last id read (integer)
--
-- Returns one row per settlement: id, job_id, queue, attempt, token,
-- owner_host, owner_pid, owner_nonce, outcome, error, retry_at, at.
SELECT id, job_id, queue, attempt, token, owner_host, owner_pid, owner_nonce, outcome,
    error, retry_at, at
FROM leasehold_settlements WHERE id > ?1 ORDER BY id
