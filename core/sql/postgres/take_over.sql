-- take_over: takes stale running jobs over for a claimant, each only if it
-- still matches the exact snapshot read (same token, owner nonce and
-- heartbeat) and is still stale by the statement's clock: a fresh token
-- under a new lease, or, when the lost lease was its last attempt, the job
-- dead-lettered. The replaced attempt is logged as lease-lost and journaled
-- as lost (or dead), in the same statement.
--
-- $1 = ids: the jobs (int8[])
-- $2 = tokens: the tokens read (int8[])
-- $3 = nonces: the owner nonces read (text[])
-- $4 = heartbeats: the heartbeats read, ms, NULL for none (int8[])
-- $5 = notes: why each is taken over, logged with it (text[])
-- $6 = old_hosts: the replaced owners' host ids (text[])
-- $7 = old_pids: the replaced owners' pids (int8[])
-- $8 = old_start_times: the replaced owners' start times, or NULL (int8[])
-- $9 = old_boot_ids: the replaced owners' boot ids, or NULL (text[])
-- $10 = old_claimed_at: when the replaced attempts started, ms (int8[])
-- $11 = owner_host: the claimant's host id (text)
-- $12 = owner_pid: the claimant's pid (int8)
-- $13 = owner_nonce: the claimant's nonce (text)
-- $14 = owner_start_time: the claimant's start time, or NULL (int8)
-- $15 = owner_boot_id: the claimant's boot id, or NULL (text)
-- $16 = lease_ms: the new lease's stale window, ms (int8)
--
-- Returns one row per job taken over, `kind` first:
--   'claimed' id, token, payload (text), attempts, max_attempts, timeout_ms,
--             now: handed to the claimant;
--   'dead'    id: dead-lettered (the other columns NULL).
-- A job whose snapshot changed returns no row.
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
input AS (
    SELECT * FROM unnest($1::int8[], $2::int8[], $3::text[], $4::int8[], $5::text[],
                         $6::text[], $7::int8[], $8::int8[], $9::text[], $10::int8[])
        AS i(id, token, nonce, heartbeat_at, note, old_host, old_pid, old_start_time,
             old_boot_id, old_claimed_at)),
-- A job another claimant is taking over right now is skipped, not waited
-- for: its snapshot is about to change anyway, and not waiting means two
-- takeovers over overlapping pages can never deadlock.
locked AS (
    SELECT id FROM leasehold_jobs WHERE id = ANY($1) ORDER BY id FOR UPDATE SKIP LOCKED),
taken AS (
    UPDATE leasehold_jobs j SET token = j.token + 1, attempts = j.attempts + 1,
        owner_host = $11, owner_pid = $12, owner_nonce = $13, owner_start_time = $14,
        owner_boot_id = $15, claimed_at = c.now, heartbeat_at = c.now, lease_ms = $16,
        expires_at = c.now + $16
    FROM input i, clock c
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked)) AND j.id = i.id AND j.state = 'running'
      AND j.token = i.token AND j.owner_nonce = i.nonce
      AND j.heartbeat_at IS NOT DISTINCT FROM i.heartbeat_at AND j.expires_at < c.now
      AND j.attempts < j.max_attempts
    RETURNING j.id, j.token, j.payload::text AS payload, j.attempts, j.max_attempts,
        j.timeout_ms, c.now, j.queue),
buried AS (
    UPDATE leasehold_jobs j SET token = j.token + 1, state = 'dead', finished_at = c.now,
        last_error = 'lease lost on the final attempt: ' || i.note
    FROM input i, clock c
    WHERE j.id = ANY(ARRAY(SELECT id FROM locked)) AND j.id = i.id AND j.state = 'running'
      AND j.token = i.token AND j.owner_nonce = i.nonce
      AND j.heartbeat_at IS NOT DISTINCT FROM i.heartbeat_at AND j.expires_at < c.now
      AND j.attempts >= j.max_attempts
    RETURNING j.id, j.queue, j.attempts),
ended AS (
    INSERT INTO leasehold_attempts (job_id, token, owner_host, owner_pid, owner_nonce,
        owner_start_time, owner_boot_id, started_at, ended_at, outcome, error)
    SELECT i.id, i.token, i.old_host, i.old_pid, i.nonce, i.old_start_time, i.old_boot_id,
        i.old_claimed_at, c.now, 'lease-lost', i.note
    FROM input i, clock c
    WHERE i.id IN (SELECT id FROM taken UNION ALL SELECT id FROM buried)),
-- The replaced owner's attempt, journaled as lost (or, on the last
-- attempt, the job as dead-lettered).
journal AS (
    INSERT INTO leasehold_settlements (job_id, queue, attempt, token, owner_host, owner_pid,
        owner_nonce, outcome, error, at)
    SELECT i.id, t.queue, t.attempts - 1, i.token, i.old_host, i.old_pid, i.nonce, 'lost',
        i.note, c.now
    FROM input i JOIN taken t ON t.id = i.id, clock c
    UNION ALL
    SELECT i.id, b.queue, b.attempts, i.token, i.old_host, i.old_pid, i.nonce, 'dead',
        'lease lost on the final attempt: ' || i.note, c.now
    FROM input i JOIN buried b ON b.id = i.id, clock c)
SELECT 'claimed' AS kind, id, token, payload, attempts, max_attempts, timeout_ms, now
FROM taken
UNION ALL
SELECT 'dead', id, NULL::bigint, NULL::text, NULL::int4, NULL::int4, NULL::bigint,
    NULL::bigint
FROM buried
