-- dashboard_journal_span: the settlements journal's first and last transaction ids.
--
-- Returns one row: the first xid, the last (as text: `xid8`; NULL when
-- empty).
--
-- The ORDER BYs name the table's column (s.xid): a bare `xid` names the
-- output column `xid::text`, which sorts the xids as text (1000 before 999)
-- and scans the whole journal instead of reading one end of its index.
SELECT (SELECT s.xid::text FROM leasehold_settlements s ORDER BY s.xid LIMIT 1),
       (SELECT s.xid::text FROM leasehold_settlements s ORDER BY s.xid DESC LIMIT 1)
