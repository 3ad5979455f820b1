-- schedule_set_last_job: remembers a schedule's last enqueued job.
--
-- $1 = job_id: the job (int8)
-- $2 = id: the schedule (int8)
UPDATE leasehold_schedules SET last_job_id = $1 WHERE id = $2
