-- enqueue: inserts a batch of jobs into one queue, in input order; a job
-- whose idempotency key this queue already holds is not inserted.
--
-- ?1 = queue: the queue's name (text)
-- ?2 = now: the caller's clock, ms: created_at (integer)
-- ?3 = jobs: a JSON array of [payload (JSON text), priority, run_at (ms),
--      max_attempts, timeout_ms or null, idempotency key or null] (text)
--
-- Returns one row per job inserted: id, idempotency_key. A keyed job that
-- conflicted returns no row: read its id with keyed_jobs.sql.
INSERT INTO leasehold_jobs
     (queue, payload, priority, run_at, max_attempts, timeout_ms, idempotency_key, created_at)
SELECT ?1, json_extract(j.value, '$[0]'), json_extract(j.value, '$[1]'),
       json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]'),
       json_extract(j.value, '$[4]'), json_extract(j.value, '$[5]'), ?2
FROM json_each(?3) AS j WHERE true ORDER BY j.key
ON CONFLICT (queue, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
RETURNING id, idempotency_key
