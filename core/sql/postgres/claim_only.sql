-- claim_only: claims a page of the queue's due jobs for a worker and names
-- stale candidates, completing nothing: claim.sql without its settling
-- CTEs, for a claim with no completion to carry. PostgreSQL plans
-- claim.sql afresh on every execution (its settling CTEs keep the generic
-- plan dear), which costs a lone claim more than its work; this statement
-- settles into a cached generic plan.
--
-- $1 = queue: the queue's name (text)
-- $2 = page_size: most jobs to claim, 0..=1000 (int8)
-- $3 = owner_host: the claimant's host id (text)
-- $4 = owner_pid: the claimant's pid (int8)
-- $5 = owner_nonce: the claimant's incarnation nonce (text)
-- $6 = owner_start_time: the claimant's process start time, or NULL (int8)
-- $7 = owner_boot_id: the claimant's boot id, or NULL (text)
-- $8 = lease_ms: the stale window of the claims, ms (int8)
-- $9 = look_for_stale: whether to name stale running jobs as candidates (bool)
-- $10 = refused_ids: stale jobs not to name (int8[])
--
-- Returns one row per job, `kind` first, exactly as claim.sql (never
-- 'done'). Its CTEs are claim.sql's claim CTEs, word for word (a statement
-- file cannot include another): change both together, and see claim.sql
-- for why each is written as it is.
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
-- Candidates only: the takeover compares and swaps on what is read here.
-- $9 is a one-time filter: a claim that does not look never scans.
stale AS MATERIALIZED (
    SELECT j.id, j.token, j.owner_host, j.owner_pid, j.owner_nonce, j.owner_start_time,
           j.owner_boot_id, j.claimed_at, j.heartbeat_at, j.lease_ms, j.priority, j.run_at
    FROM leasehold_jobs j
    WHERE $9::bool AND j.queue = $1 AND j.state = 'running'
      AND j.expires_at < (SELECT now FROM clock)
      AND j.id <> ALL($10::int8[])
    ORDER BY j.priority, j.run_at, j.id
    LIMIT $2),
picked AS (
    SELECT j.ctid FROM leasehold_jobs j
    WHERE j.queue = $1 AND j.state = 'queued' AND j.run_at <= (SELECT now FROM clock)
      AND NOT EXISTS (SELECT 1 FROM leasehold_paused_queues WHERE queue = $1)
    ORDER BY j.priority, j.run_at, j.id
    LIMIT greatest($2 - (SELECT count(*) FROM stale), 0)
    FOR UPDATE SKIP LOCKED),
claimed AS (
    UPDATE leasehold_jobs j SET state = 'running', token = j.token + 1,
        attempts = j.attempts + 1, owner_host = $3, owner_pid = $4, owner_nonce = $5,
        owner_start_time = $6, owner_boot_id = $7, claimed_at = c.now, heartbeat_at = c.now,
        lease_ms = $8, expires_at = c.now + $8
    FROM clock c
    -- ANY(ARRAY(...)) rather than a join: the planner cannot know the page
    -- is small and would hash-join it against a scan of the table. By ctid,
    -- the row versions `picked` locked (the latest ones: a locked row cannot
    -- change under us), so the update fetches each row directly instead of
    -- looking it up again in the primary key. A row claimed and handed back
    -- by others while this statement ran is locked in a version this
    -- statement's snapshot cannot see: the update skips it and it stays
    -- queued for the next claim.
    WHERE j.ctid = ANY(ARRAY(SELECT ctid FROM picked))
    RETURNING j.id, j.token, j.payload::text AS payload, j.attempts, j.max_attempts,
        j.timeout_ms, c.now, j.priority, j.run_at)
SELECT 'claimed' AS kind, id, token, payload, attempts, max_attempts, timeout_ms, now,
    priority, run_at, NULL::text AS owner_host, NULL::bigint AS owner_pid,
    NULL::text AS owner_nonce, NULL::bigint AS owner_start_time, NULL::text AS owner_boot_id,
    NULL::bigint AS claimed_at, NULL::bigint AS heartbeat_at, NULL::bigint AS lease_ms
FROM claimed
UNION ALL
SELECT 'stale', s.id, s.token, NULL, NULL, NULL, NULL, (SELECT now FROM clock),
    s.priority, s.run_at, s.owner_host, s.owner_pid, s.owner_nonce, s.owner_start_time,
    s.owner_boot_id, s.claimed_at, s.heartbeat_at, s.lease_ms
FROM stale s
