-- settlement_range_end: job_range_end.sql for the settlements journal.
--
-- ?1 = after_id: the range starts after this id (integer)
-- ?2 = range_rows: the range's length in rows (integer)
--
-- Returns one row: the range's last id, or NULL past the last row.
SELECT max(id) FROM (SELECT id FROM leasehold_settlements WHERE id > ?1 ORDER BY id
                     LIMIT CAST(?2 AS INTEGER))
