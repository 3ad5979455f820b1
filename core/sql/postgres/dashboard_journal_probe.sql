-- dashboard_journal_probe: the first journal row at or after a transaction id.
--
-- $1 = from_xid: the transaction id to start at (text)
--
-- Returns at most one row: xid (text), at.
SELECT xid::text, at FROM leasehold_settlements WHERE xid >= $1::text::xid8 ORDER BY xid LIMIT 1
