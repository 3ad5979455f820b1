-- settlements: the settlements journal's rows after an id, in id order
-- (which is commit order on SQLite: ids are assigned under the write lock).
--
-- ?1 = after_id: the last id read (integer)
--
-- Returns one row per settlement: id, job_id, queue, attempt (numbered as the
-- job's attempt log numbers it, or NULL: fragments/settled_attempt.sql), token,
-- owner_host, owner_pid, owner_nonce, outcome, error, retry_at, at.
SELECT s.id, s.job_id, s.queue,
\include fragments/settled_attempt.sql AS attempt,
    s.token, s.owner_host, s.owner_pid, s.owner_nonce, s.outcome, s.error, s.retry_at, s.at
FROM leasehold_settlements s WHERE s.id > ?1 ORDER BY s.id
