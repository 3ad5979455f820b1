-- cancel: cancels the selected jobs (queued or running) in one statement:
-- locks them in id order, journals each as cancelled and logs the running
-- attempts as lost under their own token, moves the token (so the owner's
-- next renewal or settle of a running job answers lost), and NOTIFYs
-- '<schema>/cancel/<id>/<token>' on channel leasehold_jobs per running job
-- so its owner can stop it at once (sent at commit). A completion racing it
-- either committed first (the job is no longer running: not selected) or
-- finds the token moved. expires_at is kept: on a running job it is its
-- lease's end, and its owner may not have heard the cancel and stops its
-- work by then at the latest, so retry.sql does not let another worker
-- start it earlier; on a queued job it is only ever the end of such a
-- cancelled attempt's lease, kept by retry.sql, and stays for that reason.
-- The caller runs it in a transaction and rolls back when fewer jobs
-- changed than it named.
--
-- $1 = ids: only these jobs, or NULL for any (int8[])
-- $2 = queue: only this queue, or NULL for any (text)
-- $3 = states: the states the cancel applies to (text[])
-- $4 = by: who cancels (text)
-- $5 = reason: why, or NULL (text)
-- $6 = note: who and why, as logged and journaled (text)
--
-- Returns one row per cancelled job: id, queue, told (how many NOTIFYs, int8).
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
target AS MATERIALIZED (
    SELECT id, queue, attempts, token, state, owner_host, owner_pid, owner_nonce,
        owner_start_time, owner_boot_id, claimed_at
    FROM leasehold_jobs
    WHERE ($1::bigint[] IS NULL OR id = ANY($1)) AND ($2::text IS NULL OR queue = $2)
      AND state = ANY($3::text[])
    ORDER BY id
    FOR UPDATE),
cancelled AS (
    UPDATE leasehold_jobs j SET state = 'cancelled', token = t.token + 1,
        finished_at = c.now, cancelled_at = c.now, cancelled_by = $4, cancel_reason = $5
    FROM target t, clock c
    WHERE j.id = t.id
    RETURNING j.id, j.queue),
logged AS (
    INSERT INTO leasehold_attempts (job_id, token, owner_host, owner_pid, owner_nonce,
        owner_start_time, owner_boot_id, started_at, ended_at, outcome, error)
    SELECT t.id, t.token, t.owner_host, t.owner_pid, t.owner_nonce, t.owner_start_time,
        t.owner_boot_id, t.claimed_at, c.now, 'lease-lost', $6
    FROM target t, clock c WHERE t.state = 'running'),
journaled AS (
    INSERT INTO leasehold_settlements (job_id, queue, attempt, token, owner_host, owner_pid,
        owner_nonce, outcome, error, at)
    SELECT t.id, t.queue, t.attempts, t.token,
        CASE WHEN t.state = 'running' THEN t.owner_host END,
        CASE WHEN t.state = 'running' THEN t.owner_pid END,
        CASE WHEN t.state = 'running' THEN t.owner_nonce END, 'cancelled', $6, c.now
    FROM target t, clock c),
told AS (
    SELECT pg_notify('leasehold_jobs', current_schema() || '/cancel/' || t.id || '/' || t.token)
    FROM target t WHERE t.state = 'running')
SELECT id, queue, (SELECT count(*) FROM told) AS told FROM cancelled
