-- schedule_insert_job: inserts one scheduled job due at its slot; the
-- statement's clock stamps created_at, as every enqueue on PostgreSQL.
--
-- $1 = queue: the queue's name (text)
-- $2 = payload: JSON text (text)
-- $3 = run_at: the slot, ms (int8)
-- $4 = max_attempts: the attempt budget (int4)
-- $5 = timeout_ms: the per-attempt timeout, ms, or NULL (int8)
--
-- Returns one row: the job's id.
INSERT INTO leasehold_jobs (queue, payload, run_at, max_attempts, timeout_ms, created_at)
VALUES ($1, $2::jsonb, $3, $4, $5,
        CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint))
RETURNING id
