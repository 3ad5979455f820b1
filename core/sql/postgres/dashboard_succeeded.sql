-- dashboard_succeeded: the succeeded jobs per queue, counted (the dashboard estimates them from
-- a sample of ids instead when the table is large).
--
-- Returns per queue: queue, n.
SELECT queue, count(*) AS n FROM leasehold_jobs WHERE state = 'succeeded' GROUP BY queue
