-- schedule_set_last_job: remembers a schedule's last enqueued job.
--
-- ?1 = job_id: the job (integer)
-- ?2 = id: the schedule (integer)
UPDATE leasehold_schedules SET last_job_id = ?1 WHERE id = ?2
