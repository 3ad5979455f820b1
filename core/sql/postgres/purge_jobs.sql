-- purge_jobs: purges the next range of jobs in id order (through the
-- primary key): of the rows after an id, those in the given states that
-- finished long enough ago, with their attempt log and results, in one
-- statement.
--
-- $1 = after_id: the range starts after this id (int8)
-- $2 = range_rows: the range's length in rows (int8)
-- $3 = states: the final states to purge (text[])
-- $4 = older_than_ms: purge what finished this long before the statement's clock, ms (int8)
-- $5 = queue: only this queue, or NULL for every queue (text)
--
-- Returns one row: last (the range's last id, NULL once past the last job),
-- purged (how many jobs it deleted, int8).
WITH range AS MATERIALIZED (
    SELECT id FROM leasehold_jobs WHERE id > $1 ORDER BY id LIMIT $2),
gone AS (
    DELETE FROM leasehold_jobs j
    WHERE j.id = ANY(ARRAY(SELECT id FROM range)) AND j.state = ANY($3::text[])
      AND j.finished_at < CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) - $4
      AND ($5::text IS NULL OR j.queue = $5)
    RETURNING j.id),
attempts AS (DELETE FROM leasehold_attempts WHERE job_id = ANY(ARRAY(SELECT id FROM gone))),
results AS (DELETE FROM leasehold_results WHERE job_id = ANY(ARRAY(SELECT id FROM gone)))
SELECT (SELECT max(id) FROM range) AS last, (SELECT count(*) FROM gone) AS purged
