-- settlement_id_taken: the last id the settlements journal's sequence handed
-- out, exactly: the sequence's own row (`pg_sequences` may answer one logged
-- ahead, which would pass ids not taken yet). Read before
-- settlement_next_xid, in a statement of its own.
--
-- Returns one row: the id (0 before the first).
SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM leasehold_settlements_id_seq
