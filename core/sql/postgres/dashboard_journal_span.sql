-- dashboard_journal_span: the settlements journal's first and last transaction ids.
--
-- Returns one row: the first xid, the last (as text: `xid8`; NULL when
-- empty).
SELECT (SELECT xid::text FROM leasehold_settlements ORDER BY xid LIMIT 1),
       (SELECT xid::text FROM leasehold_settlements ORDER BY xid DESC LIMIT 1)
