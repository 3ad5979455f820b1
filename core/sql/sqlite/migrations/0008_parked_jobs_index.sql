-- 0008_parked_jobs_index: the dead-lettered and cancelled jobs by queue, for what a
-- dashboard counts and lists: without it, counting a queue's dead jobs or
-- listing them reads the whole table. Partial, so the hot path (a job going
-- from queued to running to succeeded) never writes to it; on PostgreSQL
-- with the id, so a queue's dead jobs are listed newest first off the index.
CREATE INDEX leasehold_jobs_parked ON leasehold_jobs (queue, state)
    WHERE state IN ('dead', 'cancelled');
