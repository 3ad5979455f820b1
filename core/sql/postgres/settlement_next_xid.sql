-- settlement_next_xid: the next transaction id to be assigned, as of this
-- statement's snapshot (its xmax).
--
-- Returns one row: the xid (text).
SELECT pg_snapshot_xmax(pg_current_snapshot())::text
