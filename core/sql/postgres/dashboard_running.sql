-- dashboard_running: the dashboard's running jobs per queue (the partial index of running
-- jobs).
--
-- Returns per queue: queue, n.
SELECT queue, count(*) AS n FROM leasehold_jobs WHERE state = 'running' GROUP BY queue
