-- schedule_resume: resumes a paused schedule from now: the slots that fell
-- due while it was paused are skipped.
--
-- ?1 = name: the schedule's name (text)
-- ?2 = last_slot: the new cursor (now), ms (integer)
-- ?3 = next_slot: the next slot after it, ms (integer)
--
-- Returns no rows; one row changed if it was paused.
UPDATE leasehold_schedules SET paused_at = NULL, last_slot = ?2, next_slot = ?3
WHERE name = ?1 AND paused_at IS NOT NULL
