-- fail: fails a running job's attempt under its fence: with attempts left
-- the job is queued again after the retry delay, on its last attempt it is
-- dead-lettered; either way the error is kept, the attempt logged as failed
-- and journaled (retrying or dead), and the attempt's result, if any,
-- written, all in one statement. The lease's end goes (expires_at: the
-- owner settled the attempt itself, so no work of it can hold a retry back;
-- see retry.sql).
--
-- $1 = id: the job (int8)
-- $2 = token: its fencing token (int8)
-- $3 = retry_delays_ms: the retry delay after failed attempt k, ms, is
--      element k (1-based), the last element for every later attempt; the
--      store binds the delays its backoff computed (int8[], not empty)
-- $4 = error: the attempt's error (text)
-- $5 = result: the attempt's result as JSON text, or NULL (text)
--
-- Returns one row if the fence held: state ('queued' or 'dead'), run_at
-- (the retry's due time, ms since the Unix epoch).
--
-- The fence is tested on the locked row, not in the UPDATE: see renew.sql.
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
failing AS (SELECT id, token, state FROM leasehold_jobs WHERE id = $1 FOR UPDATE),
done AS (
    UPDATE leasehold_jobs j SET
        state = CASE WHEN j.attempts >= j.max_attempts THEN 'dead' ELSE 'queued' END,
        run_at = CASE WHEN j.attempts >= j.max_attempts THEN j.run_at
                 ELSE c.now + ($3::int8[])[least(greatest(j.attempts, 1), cardinality($3::int8[]))] END,
        last_error = $4, expires_at = NULL,
        finished_at = CASE WHEN j.attempts >= j.max_attempts THEN c.now END
    FROM clock c
    WHERE j.id = (SELECT id FROM failing WHERE token = $2 AND state = 'running')
    RETURNING j.id, j.token, j.owner_host, j.owner_pid, j.owner_nonce, j.owner_start_time,
        j.owner_boot_id, j.claimed_at, c.now, j.state, j.run_at, j.queue, j.attempts),
logged AS (
    INSERT INTO leasehold_attempts (job_id, token, owner_host, owner_pid, owner_nonce,
        owner_start_time, owner_boot_id, started_at, ended_at, outcome, error)
    SELECT id, token, owner_host, owner_pid, owner_nonce, owner_start_time, owner_boot_id,
        claimed_at, now, 'failed', $4
    FROM done),
journal AS (
    INSERT INTO leasehold_settlements (job_id, queue, attempt, token, owner_host, owner_pid,
        owner_nonce, outcome, error, retry_at, at)
    SELECT id, queue, attempts, token, owner_host, owner_pid, owner_nonce,
        CASE WHEN state = 'dead' THEN 'dead' ELSE 'retrying' END, $4,
        CASE WHEN state = 'dead' THEN NULL ELSE run_at END, now
    FROM done),
kept AS (
    INSERT INTO leasehold_results (job_id, token, recorded_at, result)
    SELECT id, token, now, $5::jsonb FROM done WHERE $5::text IS NOT NULL
    ON CONFLICT (job_id, token) DO UPDATE
        SET recorded_at = EXCLUDED.recorded_at, result = EXCLUDED.result)
SELECT state, run_at FROM done
