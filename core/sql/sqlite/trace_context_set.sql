-- trace_context_set: stores a W3C traceparent with the given jobs that have
-- none yet (feature `otel`).
--
-- ?1 = traceparent: the enqueue span's traceparent
-- ?2 = ids: a JSON array of job ids (text)
--
-- Returns nothing.
UPDATE leasehold_jobs SET trace_context = ?1
WHERE id IN (SELECT value FROM json_each(?2)) AND trace_context IS NULL
