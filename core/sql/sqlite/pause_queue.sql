-- pause_queue: pauses a queue (claims skip it until it is resumed);
-- nothing if it is paused already.
--
-- ?1 = queue: the queue's name (text)
-- ?2 = now: the caller's clock, ms (integer)
-- ?3 = by: who pauses it (text)
--
-- Returns no rows; one row changed if it was not paused.
INSERT INTO leasehold_paused_queues (queue, paused_at, paused_by) VALUES (?1, ?2, ?3)
ON CONFLICT (queue) DO NOTHING
