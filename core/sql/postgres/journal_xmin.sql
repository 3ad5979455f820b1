-- journal_xmin: the oldest transaction still running in this snapshot: no
-- journal row with a lower xid can commit after it. Read in the snapshot of
-- settlements.sql (read_snapshot.sql).
--
-- Returns one row: the xid as text.
SELECT pg_snapshot_xmin(pg_current_snapshot())::text
