-- resume_queue: resumes a paused queue.
--
-- ?1 = queue: the queue's name (text)
--
-- Returns no rows; one row changed if it was paused.
DELETE FROM leasehold_paused_queues WHERE queue = ?1
