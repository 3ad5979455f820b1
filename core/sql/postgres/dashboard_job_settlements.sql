-- dashboard_job_settlements: the settlements journal's rows of one job within a
-- range of the journal.
--
-- $1 = from_xid: the first transaction id (text)
-- $2 = to_xid: the last transaction id (text)
-- $3 = job: the job's id
-- Returns the journal's columns, in commit order.
SELECT id, job_id, queue, attempt, token, owner_host, owner_pid, owner_nonce, outcome, error, retry_at, at
FROM leasehold_settlements
WHERE xid >= $1::text::xid8 AND xid <= $2::text::xid8 AND job_id = $3 ORDER BY xid, id
