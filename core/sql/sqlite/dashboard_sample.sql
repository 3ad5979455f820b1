-- dashboard_sample: the queue and state of a sample of job ids.
--
-- ?1 = ids: a JSON array of job ids (text)
--
-- Returns per job found: queue, state.
SELECT queue, state FROM leasehold_jobs WHERE id IN (SELECT value FROM json_each(?1))
