-- dashboard_journal_probe: the first journal row at or after an id.
--
-- ?1 = from_id: the journal id to start at
--
-- Returns at most one row: id, at.
SELECT id, at FROM leasehold_settlements WHERE id >= ?1 ORDER BY id LIMIT 1
