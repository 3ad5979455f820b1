-- schedule_insert_job: inserts one scheduled job due at its slot, stamped
-- with the caller's clock.
--
-- ?1 = queue: the queue's name (text)
-- ?2 = payload: JSON text (text)
-- ?3 = run_at: the slot, ms (integer)
-- ?4 = max_attempts: the attempt budget (integer)
-- ?5 = timeout_ms: the per-attempt timeout, ms, or NULL (integer)
-- ?6 = now: the caller's clock, ms (integer)
--
-- Returns one row: the job's id.
INSERT INTO leasehold_jobs (queue, payload, run_at, max_attempts, timeout_ms, created_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6)
RETURNING id
