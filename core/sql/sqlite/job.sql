-- job: one job row, as inspection reads it. Read with job_attempts.sql in
-- one transaction.
--
-- ?1 = id: the job (integer)
--
-- Returns the job's row, or none: every column of leasehold_jobs.
SELECT * FROM leasehold_jobs WHERE id = ?1
