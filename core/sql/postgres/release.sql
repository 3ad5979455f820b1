-- release: hands claimed, unperformed jobs back, each under its fence:
-- queued again at once, the attempt not counted; journals each release
-- with the attempt number it did not burn, in the same statement.
--
-- $1 = ids: the jobs (int8[])
-- $2 = tokens: their fencing tokens, in the same order (int8[])
--
-- Returns one row per release whose fence held: id.
--
-- Locks in id order and tests the fence on the locked rows, as renew.sql.
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
releasing AS (
    SELECT id, token, state, owner_nonce FROM leasehold_jobs
    WHERE id = ANY($1) ORDER BY id FOR UPDATE),
released AS (
    UPDATE leasehold_jobs j SET state = 'queued', attempts = j.attempts - 1,
        heartbeat_at = NULL, expires_at = NULL
    WHERE j.id = ANY(ARRAY(
        SELECT l.id FROM releasing l
        JOIN unnest($1::int8[], $2::int8[]) AS f(id, token) ON l.id = f.id AND l.token = f.token
        WHERE l.state = 'running'))
    RETURNING j.id, j.token, j.queue, j.attempts + 1 AS attempt, j.owner_host, j.owner_pid,
        j.owner_nonce),
journal AS (
    INSERT INTO leasehold_settlements (job_id, queue, attempt, token, owner_host, owner_pid,
        owner_nonce, outcome, at)
    SELECT id, queue, attempt, token, owner_host, owner_pid, owner_nonce, 'released',
        (SELECT now FROM clock)
    FROM released)
SELECT id FROM released
