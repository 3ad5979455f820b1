-- dashboard_journal_span: the settlements journal's lowest and highest id.
--
-- Returns one row: the lowest id, the highest (NULL when empty).
SELECT (SELECT min(id) FROM leasehold_settlements), (SELECT max(id) FROM leasehold_settlements)
