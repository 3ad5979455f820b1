-- purge_settlements: deletes the journal's rows of an id range settled
-- before a cut.
--
-- ?1 = after_id: the range starts after this id (integer)
-- ?2 = last_id: and ends at this id (integer)
-- ?3 = cut: delete what settled before this, ms (integer)
-- ?4 = queue: only this queue, or NULL for every queue (text)
DELETE FROM leasehold_settlements
WHERE id > ?1 AND id <= ?2 AND at < ?3 AND (?4 IS NULL OR queue = ?4)
