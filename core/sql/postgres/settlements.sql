-- settlements: the settlements journal's rows from a transaction id on, in
-- commit order as far as the xid tells it (xid, then id). Ids are not in
-- commit order on PostgreSQL: the reader keeps a watermark at the
-- snapshot's xmin (journal_xmin.sql) and remembers the rows above it.
--
-- ORDER BY names the table's columns (s.xid): a bare `xid` would name the
-- output column `xid` (the text), sort the digits as text (1000 before
-- 999) and leave the (xid, id) index unused, so that every read scanned
-- and sorted the whole journal.
--
-- $1 = from_xid: the watermark, as text (text)
-- $2 = min_id: the lowest id the reader may still be missing (int8)
--
-- Returns one row per settlement: id, xid (text), job_id, queue, attempt
-- (numbered as the job's attempt log numbers it, or NULL:
-- fragments/settled_attempt.sql), token, owner_host, owner_pid, owner_nonce,
-- outcome, error, retry_at, at.
SELECT s.id, s.xid::text AS xid, s.job_id, s.queue,
\include fragments/settled_attempt.sql AS attempt,
    s.token, s.owner_host, s.owner_pid, s.owner_nonce, s.outcome, s.error, s.retry_at, s.at
FROM leasehold_settlements s WHERE s.xid >= $1::text::xid8 AND s.id >= $2 ORDER BY s.xid, s.id
