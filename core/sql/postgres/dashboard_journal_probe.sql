-- dashboard_journal_probe: the first journal row at or after a transaction id.
--
-- $1 = from_xid: the transaction id to start at (text)
--
-- Returns at most one row: xid (text), at.
--
-- Ordered by the table's column s.xid, not the output text (see
-- dashboard_journal_span.sql).
SELECT s.xid::text, s.at FROM leasehold_settlements s WHERE s.xid >= $1::text::xid8 ORDER BY s.xid LIMIT 1
