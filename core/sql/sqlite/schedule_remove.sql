-- schedule_remove: deletes a schedule (its jobs stay).
--
-- ?1 = name: the schedule's name (text)
--
-- Returns no rows; one row changed if it existed.
DELETE FROM leasehold_schedules WHERE name = ?1
