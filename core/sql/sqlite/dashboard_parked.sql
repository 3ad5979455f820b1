-- dashboard_parked: the dashboard's dead and cancelled jobs per queue and state, through
-- their index.
--
-- Returns per queue and state: queue, state, n.
SELECT queue, state, count(*) AS n FROM leasehold_jobs INDEXED BY leasehold_jobs_parked
WHERE state IN ('dead', 'cancelled') GROUP BY queue, state
