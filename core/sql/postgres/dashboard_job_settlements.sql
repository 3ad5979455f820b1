-- dashboard_job_settlements: the settlements journal's rows of one job within a
-- range of the journal.
--
-- $1 = from_xid: the first transaction id (text)
-- $2 = to_xid: the last transaction id (text)
-- $3 = job: the job's id
-- Returns the journal's columns, in commit order, the attempt as
-- settlements.sql answers it (fragments/settled_attempt.sql).
SELECT s.id, s.job_id, s.queue,
\include fragments/settled_attempt.sql AS attempt,
    s.token, s.owner_host, s.owner_pid, s.owner_nonce, s.outcome, s.error, s.retry_at, s.at
FROM leasehold_settlements s
WHERE s.xid >= $1::text::xid8 AND s.xid <= $2::text::xid8 AND s.job_id = $3 ORDER BY s.xid, s.id
