-- schedule_list: schedules by name, with the state of each one's last job.
--
-- ?1 = name: only this schedule, or NULL for all (text)
--
-- Returns one row per schedule: every column of leasehold_schedules and
-- last_state.
SELECT s.*, j.state AS last_state
FROM leasehold_schedules s LEFT JOIN leasehold_jobs j ON j.id = s.last_job_id
WHERE ?1 IS NULL OR s.name = ?1
ORDER BY s.name
