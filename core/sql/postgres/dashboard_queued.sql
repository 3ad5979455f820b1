-- dashboard_queued: the dashboard's queued jobs per queue, split by due time (at the
-- server's clock) and attempts.
--
-- Returns per queue: queue, queued (due first attempts), scheduled (first
-- attempts not yet due), retrying (attempts > 0): fragments/shown_state.sql.
SELECT queue,
       sum(CASE WHEN shown = 'queued' THEN 1 ELSE 0 END)::bigint AS queued,
       sum(CASE WHEN shown = 'scheduled' THEN 1 ELSE 0 END)::bigint AS scheduled,
       sum(CASE WHEN shown = 'retrying' THEN 1 ELSE 0 END)::bigint AS retrying
FROM (SELECT queue,
\include fragments/shown_state.sql AS shown
      FROM leasehold_jobs WHERE state = 'queued') queued
GROUP BY queue
