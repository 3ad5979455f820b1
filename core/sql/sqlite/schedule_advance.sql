-- schedule_advance: the compare-and-swap on a schedule's cursor: lands only
-- while the schedule is the one read (same id), still at the cursor read,
-- and not paused.
--
-- ?1 = last_slot: the new cursor, ms (integer)
-- ?2 = next_slot: the next slot, ms (integer)
-- ?3 = last_run_slot: the slot a job was enqueued for, or NULL to keep it (integer)
-- ?4 = id: the schedule (integer)
-- ?5 = read_slot: the cursor as read, ms (integer)
--
-- Returns no rows; one row changed if the swap landed.
UPDATE leasehold_schedules
SET last_slot = ?1, next_slot = ?2, last_run_slot = coalesce(?3, last_run_slot)
WHERE id = ?4 AND last_slot = ?5 AND paused_at IS NULL
