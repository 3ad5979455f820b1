-- tally_states: how many of the given jobs are in each state. Read with
-- tally_attempts.sql in one transaction.
--
-- ?1 = ids: a JSON array of job ids (text)
--
-- Returns one row per state with jobs: state, n.
SELECT state, count(*) AS n FROM leasehold_jobs
WHERE id IN (SELECT value FROM json_each(?1)) GROUP BY state
