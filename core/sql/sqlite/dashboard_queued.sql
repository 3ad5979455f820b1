-- dashboard_queued: the dashboard's queued jobs per queue, split by due time and attempts.
-- Reads the partial index of queued jobs.
--
-- ?1 = now: the caller's clock (ms since the Unix epoch)
--
-- Returns per queue: queue, queued (due first attempts), scheduled (first
-- attempts not yet due), retrying (attempts > 0).
SELECT queue,
       sum(CASE WHEN attempts = 0 AND run_at <= ?1 THEN 1 ELSE 0 END) AS queued,
       sum(CASE WHEN attempts = 0 AND run_at > ?1 THEN 1 ELSE 0 END) AS scheduled,
       sum(CASE WHEN attempts > 0 THEN 1 ELSE 0 END) AS retrying
FROM leasehold_jobs WHERE state = 'queued' GROUP BY queue
