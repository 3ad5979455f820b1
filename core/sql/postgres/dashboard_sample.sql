-- dashboard_sample: the queue and state of a sample of job ids.
--
-- $1 = ids: the job ids (bigint[])
--
-- Returns per job found: queue, state.
SELECT queue, state FROM leasehold_jobs WHERE id = ANY($1)
