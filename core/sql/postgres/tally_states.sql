-- tally_states: how many of the given jobs are in each state. Read with
-- tally_attempts.sql in one snapshot (read_snapshot.sql).
--
-- $1 = ids: the jobs (int8[])
--
-- Returns one row per state with jobs: state, n (int8).
SELECT state, count(*) AS n FROM leasehold_jobs WHERE id = ANY($1) GROUP BY state
