-- fragment settle_delete: completes the jobs ${settle_ids} (ascending)
-- under their fencing tokens ${settle_tokens} by deleting each with its
-- attempt log and results. Defines `done` as settle_keep.sql does (journal
-- it with settle_journal.sql: the journal keeps a deleted job's
-- completion); needs `clock`. The fence, the lock order and the CASE are
-- settle_keep.sql's, for the reasons it gives.
done AS (
    DELETE FROM leasehold_jobs j
    USING unnest((SELECT ${settle_ids}::int8[]), (SELECT ${settle_tokens}::int8[])) AS f(id, token)
    WHERE j.id = f.id AND j.token = f.token
      AND CASE WHEN j.state = 'running' THEN true ELSE false END
    RETURNING j.id, j.token, j.queue, j.attempts, j.owner_host, j.owner_pid, j.owner_nonce),
-- The attempt log and results go with the job. (A data-modifying CTE runs
-- to completion even if nothing reads it.)
deleted_log AS (
    DELETE FROM leasehold_attempts a WHERE a.job_id = ANY(ARRAY(SELECT id FROM done))),
deleted_results AS (
    DELETE FROM leasehold_results r WHERE r.job_id = ANY(ARRAY(SELECT id FROM done)))
