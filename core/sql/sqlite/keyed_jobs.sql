-- keyed_jobs: the jobs of a queue holding idempotency keys (an enqueue's
-- conflicts).
--
-- ?1 = queue: the queue's name (text)
-- ?2 = keys: a JSON array of idempotency keys (text)
--
-- Returns one row per key found: idempotency_key, id.
SELECT idempotency_key, id FROM leasehold_jobs
WHERE queue = ?1 AND idempotency_key IN (SELECT value FROM json_each(?2))
