-- schedule_pause: pauses a schedule that is not paused.
--
-- ?1 = name: the schedule's name (text)
-- ?2 = now: the caller's clock, ms (integer)
--
-- Returns no rows; one row changed if it was running.
UPDATE leasehold_schedules SET paused_at = ?2 WHERE name = ?1 AND paused_at IS NULL
