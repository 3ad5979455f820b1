-- keyed_jobs: the jobs of a queue holding idempotency keys (an enqueue's
-- conflicts). Run as a statement of its own after enqueue.sql, so with a
-- new snapshot: it sees the job a concurrent enqueue with the same key
-- committed while ours waited on it.
--
-- $1 = queue: the queue's name (text)
-- $2 = keys: the idempotency keys (text[])
--
-- Returns one row per key found: idempotency_key, id.
SELECT idempotency_key, id FROM leasehold_jobs
WHERE queue = $1 AND idempotency_key = ANY($2)
