-- schedule_advance: the compare-and-swap on a schedule's cursor: lands only
-- while the schedule is the one read (same id), still at the cursor read,
-- and not paused. Under READ COMMITTED a second worker's swap waits for the
-- first's row lock, then re-reads the row, finds the cursor moved, and
-- updates nothing.
--
-- $1 = last_slot: the new cursor, ms (int8)
-- $2 = next_slot: the next slot, ms (int8)
-- $3 = last_run_slot: the slot a job was enqueued for, or NULL to keep it (int8)
-- $4 = id: the schedule (int8)
-- $5 = read_slot: the cursor as read, ms (int8)
--
-- Returns no rows; one row changed if the swap landed.
UPDATE leasehold_schedules
SET last_slot = $1, next_slot = $2, last_run_slot = coalesce($3, last_run_slot)
WHERE id = $4 AND last_slot = $5 AND paused_at IS NULL
