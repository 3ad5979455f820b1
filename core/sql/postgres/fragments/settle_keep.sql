-- fragment settle_keep: completes the jobs ${settle_ids} (ascending) under
-- their fencing tokens ${settle_tokens}, keeping each marked succeeded with
-- its result from ${settle_results} (NULL: none). Defines `done` (id, token,
-- queue, attempts, owner_host, owner_pid, owner_nonce: one row per
-- completion whose fence held; journal it with settle_journal.sql); needs
-- `clock`. settle_delete.sql is its twin that deletes the jobs instead:
-- two statements, not a switch parameter, so that each plans one way and
-- PostgreSQL caches a generic plan for it (with a switch it re-planned on
-- every call).
--
-- The fence is the UPDATE's (DELETE's) own WHERE: under READ COMMITTED a
-- row another transaction changed meanwhile is re-read in its latest
-- version and the whole WHERE tested again, so a stale token changes
-- nothing; rows are visited in the arrays' (ascending id) order, the order
-- every batch over running jobs locks them in, so two batches never
-- deadlock. `state = 'running'` sits inside a CASE on purpose: as a plain
-- condition it matches the partial index leasehold_jobs_running, whose
-- statistics may call it tiny while it holds an entry for every claim since
-- the last vacuum, and the planner might scan it whole instead of looking
-- each id up in the primary key. The arrays are read through scalar
-- subqueries so that no plan knows their length: a plan made for given
-- values would count a completion of one job 10 times cheaper than the
-- cached generic plan (which assumes 10) and PostgreSQL would keep
-- re-planning the statement on every call instead of using the cached plan.
done AS (
    UPDATE leasehold_jobs j SET state = 'succeeded', finished_at = (SELECT now FROM clock)
    FROM unnest((SELECT ${settle_ids}::int8[]), (SELECT ${settle_tokens}::int8[])) AS f(id, token)
    WHERE j.id = f.id AND j.token = f.token
      AND CASE WHEN j.state = 'running' THEN true ELSE false END
    RETURNING j.id, j.token, j.queue, j.attempts, j.owner_host, j.owner_pid, j.owner_nonce),
-- A result is written only where its fence held; a job listed twice keeps
-- one.
kept_results AS (
    INSERT INTO leasehold_results (job_id, token, recorded_at, result)
    SELECT DISTINCT ON (k.id) k.id, k.token, (SELECT now FROM clock), r.result::jsonb
    FROM done k
    JOIN unnest(${settle_ids}::int8[], ${settle_tokens}::int8[], ${settle_results}::text[]) AS r(id, token, result)
        ON r.id = k.id AND r.token = k.token
    WHERE r.result IS NOT NULL
    ORDER BY k.id
    ON CONFLICT (job_id, token) DO UPDATE
        SET recorded_at = EXCLUDED.recorded_at, result = EXCLUDED.result)
