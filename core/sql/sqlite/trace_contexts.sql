-- trace_contexts: the trace contexts stored with the given jobs (those with
-- one).
--
-- ?1 = ids: a JSON array of job ids (text)
--
-- Returns per job with one: id, trace_context.
SELECT id, trace_context FROM leasehold_jobs
WHERE id IN (SELECT value FROM json_each(?1)) AND trace_context IS NOT NULL
