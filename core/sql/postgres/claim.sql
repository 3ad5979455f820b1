-- claim: completes the jobs a worker finished, each under its fence, and
-- claims a page of the queue's due jobs for it, in ONE statement (one
-- commit, one round trip). Either part may be empty: no jobs to complete,
-- or a page size of 0 (a completion alone; the Rust store runs
-- complete.sql for that instead, which plans only the settling part).
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
-- $11 = settle_ids: jobs to complete, ascending, may be empty (int8[])
-- $12 = settle_tokens: their fencing tokens, in the same order (int8[])
-- $13 = settle_results: their results as JSON text, NULL for none (text[])
-- $14 = delete_completed: delete the completed jobs with their attempt log
--       and results (true), or keep them marked succeeded with their
--       results (false) (bool)
--
-- Returns one row per job, `kind` first:
--   'done'    id: a completion whose fence held (other columns NULL);
--   'claimed' id, token, payload (text), attempts, max_attempts, timeout_ms,
--             now, priority, run_at: a claimed job, in no particular order;
--   'stale'   id, token, now, priority, run_at, owner_host, owner_pid,
--             owner_nonce, owner_start_time, owner_boot_id, claimed_at,
--             heartbeat_at, lease_ms: a candidate for takeover, read but not
--             locked (take_over.sql compares and swaps on this snapshot).
-- `now` is the statement's clock, ms since the Unix epoch.
--
-- Every completion is journaled (the journal keeps a deleted job's). Stale
-- candidates take the page's first slots; due queued jobs (not of a paused
-- queue) fill the rest, by priority, due time, id, skipping rows another
-- claim holds (SKIP LOCKED). $9 and $14 are one-time filters: the parts
-- they switch off are never scanned.
--
-- The completion runs first (its CTE comes first in the result): it takes
-- the statement's one blocking lock (on the job it completes) before
-- `picked` locks anything. `picked` never waits, but it can keep a lock on a
-- row that turned from queued to running under it; a statement that waited
-- while holding such a lock could close a cycle with another worker's
-- completion.
--
-- The completion's fence is its UPDATE's (DELETE's) own WHERE: under READ
-- COMMITTED a row another transaction changed meanwhile is re-read in its
-- latest version and the whole WHERE tested again, so a stale token
-- changes nothing; rows are visited in the arrays' (ascending id) order,
-- the order every batch over running jobs locks them in, so two batches
-- never deadlock. `state = 'running'` sits inside a CASE on purpose: as a
-- plain condition it matches the partial index leasehold_jobs_running,
-- whose statistics may call it tiny while it holds an entry for every claim
-- since the last vacuum, and the planner might scan it whole instead of
-- looking each id up in the primary key.
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
kept AS (
    UPDATE leasehold_jobs j SET state = 'succeeded', finished_at = (SELECT now FROM clock)
    FROM unnest($11::int8[], $12::int8[]) AS f(id, token)
    WHERE NOT $14::bool AND j.id = f.id AND j.token = f.token
      AND CASE WHEN j.state = 'running' THEN true ELSE false END
    RETURNING j.id, j.token, j.queue, j.attempts, j.owner_host, j.owner_pid, j.owner_nonce),
deleted AS (
    DELETE FROM leasehold_jobs j
    USING unnest($11::int8[], $12::int8[]) AS f(id, token)
    WHERE $14::bool AND j.id = f.id AND j.token = f.token
      AND CASE WHEN j.state = 'running' THEN true ELSE false END
    RETURNING j.id, j.token, j.queue, j.attempts, j.owner_host, j.owner_pid, j.owner_nonce),
done AS (SELECT * FROM kept UNION ALL SELECT * FROM deleted),
done_journal AS (
    INSERT INTO leasehold_settlements (job_id, queue, attempt, token, owner_host, owner_pid,
        owner_nonce, outcome, at)
    SELECT id, queue, attempts, token, owner_host, owner_pid, owner_nonce, 'done',
        (SELECT now FROM clock)
    FROM done),
-- A kept job's result is written only where its fence held; a job listed
-- twice keeps one.
kept_results AS (
    INSERT INTO leasehold_results (job_id, token, recorded_at, result)
    SELECT DISTINCT ON (k.id) k.id, k.token, (SELECT now FROM clock), r.result::jsonb
    FROM kept k
    JOIN unnest($11::int8[], $12::int8[], $13::text[]) AS r(id, token, result)
        ON r.id = k.id AND r.token = k.token
    WHERE r.result IS NOT NULL
    ORDER BY k.id
    ON CONFLICT (job_id, token) DO UPDATE
        SET recorded_at = EXCLUDED.recorded_at, result = EXCLUDED.result),
-- A deleted job's attempt log and results go with it. (A data-modifying
-- CTE runs to completion even if nothing reads it.)
deleted_log AS (
    DELETE FROM leasehold_attempts a WHERE a.job_id = ANY(ARRAY(SELECT id FROM deleted))),
deleted_results AS (
    DELETE FROM leasehold_results r WHERE r.job_id = ANY(ARRAY(SELECT id FROM deleted))),
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
SELECT 'done' AS kind, id, NULL::bigint AS token, NULL::text AS payload,
    NULL::int4 AS attempts, NULL::int4 AS max_attempts, NULL::bigint AS timeout_ms,
    NULL::bigint AS now, NULL::int4 AS priority, NULL::bigint AS run_at,
    NULL::text AS owner_host, NULL::bigint AS owner_pid, NULL::text AS owner_nonce,
    NULL::bigint AS owner_start_time, NULL::text AS owner_boot_id,
    NULL::bigint AS claimed_at, NULL::bigint AS heartbeat_at, NULL::bigint AS lease_ms
FROM done
UNION ALL
SELECT 'claimed', id, token, payload, attempts, max_attempts, timeout_ms, now, priority, run_at,
    NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
FROM claimed
UNION ALL
SELECT 'stale', s.id, s.token, NULL, NULL, NULL, NULL, (SELECT now FROM clock),
    s.priority, s.run_at, s.owner_host, s.owner_pid, s.owner_nonce, s.owner_start_time,
    s.owner_boot_id, s.claimed_at, s.heartbeat_at, s.lease_ms
FROM stale s
