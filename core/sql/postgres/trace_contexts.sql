-- trace_contexts: the trace contexts stored with the given jobs (those with
-- one).
--
-- $1 = ids: the job ids (bigint[])
--
-- Returns per job with one: id, trace_context.
SELECT id, trace_context FROM leasehold_jobs WHERE id = ANY($1) AND trace_context IS NOT NULL
