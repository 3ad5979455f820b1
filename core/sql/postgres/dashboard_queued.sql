-- dashboard_queued: the dashboard's queued jobs per queue, split by due time (at the
-- server's clock) and attempts.
--
-- Returns per queue: queue, queued (due first attempts), scheduled (first
-- attempts not yet due), retrying (attempts > 0).
SELECT queue,
       sum(CASE WHEN attempts = 0 AND run_at <= now THEN 1 ELSE 0 END)::bigint AS queued,
       sum(CASE WHEN attempts = 0 AND run_at > now THEN 1 ELSE 0 END)::bigint AS scheduled,
       sum(CASE WHEN attempts > 0 THEN 1 ELSE 0 END)::bigint AS retrying
FROM leasehold_jobs, (SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now) clock
WHERE state = 'queued' GROUP BY queue
