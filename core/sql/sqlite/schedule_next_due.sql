-- schedule_next_due: when a queue's next schedule slot falls due.
--
-- ?1 = queue: the queue's name (text)
--
-- Returns one row: the earliest next_slot of its unpaused schedules, ms, or NULL.
SELECT min(next_slot) FROM leasehold_schedules WHERE queue = ?1 AND paused_at IS NULL
