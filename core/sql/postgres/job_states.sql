-- job_states: the states of jobs, to explain why a steer refused them.
--
-- $1 = ids: the jobs (int8[])
--
-- Returns one row per job found: id, state.
SELECT id, state FROM leasehold_jobs WHERE id = ANY($1)
