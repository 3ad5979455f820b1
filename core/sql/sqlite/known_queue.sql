-- known_queue: whether a queue has any job or schedule.
--
-- ?1 = queue: the queue's name (text)
--
-- Returns one row: whether it is known (0 or 1).
SELECT EXISTS (SELECT 1 FROM leasehold_jobs WHERE queue = ?1)
    OR EXISTS (SELECT 1 FROM leasehold_schedules WHERE queue = ?1)
