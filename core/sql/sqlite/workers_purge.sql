-- workers_purge: deletes the worker records last seen before a cut.
--
-- ?1 = cut: the cut (ms since the Unix epoch)
-- ?2 = queue: the queue (NULL: any)
--
-- Returns nothing.
DELETE FROM leasehold_workers WHERE last_seen < ?1 AND (?2 IS NULL OR queue = ?2)
