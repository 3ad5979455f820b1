-- schedule_due: a queue's schedules that are not paused and have a slot
-- due, the earliest first.
--
-- ?1 = queue: the queue's name (text)
-- ?2 = now: the caller's clock, ms (integer)
--
-- Returns the columns of schedule_list.sql, one row per schedule.
SELECT s.*, j.state AS last_state
FROM leasehold_schedules s LEFT JOIN leasehold_jobs j ON j.id = s.last_job_id
WHERE s.queue = ?1 AND s.paused_at IS NULL AND s.next_slot <= ?2
ORDER BY s.next_slot
