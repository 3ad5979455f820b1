-- counts: jobs per queue and state.
--
-- Returns one row per (queue, state) with jobs: queue, state, n, ordered by
-- queue, then state.
SELECT queue, state, count(*) AS n FROM leasehold_jobs
GROUP BY queue, state ORDER BY queue, state
