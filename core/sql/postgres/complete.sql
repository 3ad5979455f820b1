-- complete: completes the jobs a worker finished, each under its fence, and
-- nothing else: the completion part of claim.sql alone, for a completion
-- that claims nothing (the claim statement with a page of 0 would still
-- plan and run its claim and stale-lease parts on every call).
--
-- $1 = settle_ids: jobs to complete, ascending (int8[])
-- $2 = settle_tokens: their fencing tokens, in the same order (int8[])
-- $3 = settle_results: their results as JSON text, NULL for none (text[])
-- $4 = delete_completed: delete the completed jobs with their attempt log
--      and results (true), or keep them marked succeeded with their
--      results (false) (bool)
--
-- Returns one row per completion whose fence held: id.
--
-- Every completion is journaled (the journal keeps a deleted job's). The
-- fence is the UPDATE's (DELETE's) own WHERE, re-tested on the latest row
-- version under READ COMMITTED, rows visited in ascending id order, and
-- `state = 'running'` inside a CASE, all for the reasons claim.sql gives.
-- Its CTEs are claim.sql's completion CTEs, word for word (a statement
-- file cannot include another): change both together.
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
kept AS (
    UPDATE leasehold_jobs j SET state = 'succeeded', finished_at = (SELECT now FROM clock)
    FROM unnest($1::int8[], $2::int8[]) AS f(id, token)
    WHERE NOT $4::bool AND j.id = f.id AND j.token = f.token
      AND CASE WHEN j.state = 'running' THEN true ELSE false END
    RETURNING j.id, j.token, j.queue, j.attempts, j.owner_host, j.owner_pid, j.owner_nonce),
deleted AS (
    DELETE FROM leasehold_jobs j
    USING unnest($1::int8[], $2::int8[]) AS f(id, token)
    WHERE $4::bool AND j.id = f.id AND j.token = f.token
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
    JOIN unnest($1::int8[], $2::int8[], $3::text[]) AS r(id, token, result)
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
    DELETE FROM leasehold_results r WHERE r.job_id = ANY(ARRAY(SELECT id FROM deleted)))
SELECT id FROM done
