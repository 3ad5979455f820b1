-- enqueue: inserts a batch of jobs into one queue, in input order; a job
-- whose idempotency key this queue already holds is not inserted. Wakes the
-- queue's listeners (NOTIFY on channel leasehold_jobs, payload
-- '<schema>/<queue>', sent at commit) when a job is due at once.
--
-- $1 = queue: the queue's name (text)
-- $2 = payloads: JSON text per job (text[])
-- $3 = priorities: lower first (int4[])
-- $4 = run_at: absolute due times, ms since the Unix epoch, or NULL (int8[])
-- $5 = delays_ms: due this long after now when run_at is NULL, ms (int8[])
-- $6 = max_attempts: attempt budgets, at least 1 (int4[])
-- $7 = timeouts_ms: per-attempt timeouts, ms, or NULL (int8[])
-- $8 = keys: idempotency keys, or NULL (text[])
--
-- Returns one row per job inserted: id, idempotency_key, notified (read only
-- so that the planner must run the NOTIFY). A keyed job that conflicted
-- returns no row: read its id with keyed_jobs.sql.
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
ins AS (
    INSERT INTO leasehold_jobs
        (queue, payload, priority, run_at, max_attempts, timeout_ms, idempotency_key, created_at)
    SELECT $1, i.payload::jsonb, i.priority, coalesce(i.run_at, c.now + i.delay_ms),
           i.max_attempts, i.timeout_ms, i.key, c.now
    FROM unnest($2::text[], $3::int4[], $4::int8[], $5::int8[], $6::int4[], $7::int8[], $8::text[])
         WITH ORDINALITY AS i(payload, priority, run_at, delay_ms, max_attempts, timeout_ms, key, ord),
         clock c
    ORDER BY i.ord
    ON CONFLICT (queue, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING id, idempotency_key, run_at),
wake AS (
    SELECT pg_notify('leasehold_jobs', current_schema() || '/' || $1)
    FROM clock c WHERE EXISTS (SELECT 1 FROM ins WHERE ins.run_at <= c.now))
SELECT ins.id, ins.idempotency_key, (SELECT count(*) FROM wake) AS notified FROM ins
