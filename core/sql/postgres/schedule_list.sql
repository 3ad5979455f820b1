-- schedule_list: schedules by name, with the state of each one's last job.
--
-- $1 = name: only this schedule, or NULL for all (text)
--
-- Returns one row per schedule: id, name, queue, payload (text),
-- max_attempts, timeout_ms, every_ms, cron, time_zone, catch_up, overlap,
-- paused_at, created_at, last_slot, next_slot, last_run_slot, last_job_id,
-- last_state.
SELECT s.id, s.name, s.queue, s.payload::text AS payload, s.max_attempts, s.timeout_ms,
       s.every_ms, s.cron, s.time_zone, s.catch_up, s.overlap, s.paused_at, s.created_at,
       s.last_slot, s.next_slot, s.last_run_slot, s.last_job_id, j.state AS last_state
FROM leasehold_schedules s LEFT JOIN leasehold_jobs j ON j.id = s.last_job_id
WHERE $1::text IS NULL OR s.name = $1
ORDER BY s.name
