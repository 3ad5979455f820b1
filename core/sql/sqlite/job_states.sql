-- job_states: the states of jobs, to explain why a steer refused them.
--
-- ?1 = ids: a JSON array of job ids (text)
--
-- Returns one row per job found: id, state.
SELECT id, state FROM leasehold_jobs WHERE id IN (SELECT value FROM json_each(?1))
