-- queue_counts: jobs per queue and state as the dashboard's overview shows
-- them, queued jobs told apart by due time and attempts: `queued` (due,
-- never tried), `scheduled` (not due yet, never tried), `retrying` (tried
-- before: it failed or lost its lease; due or not); the other states as
-- stored. Due is by the server's clock.
--
-- Returns one row per (queue, state) with jobs: queue, state, n (int8),
-- ordered by queue, then state.
SELECT queue,
       CASE WHEN state <> 'queued' THEN state
            WHEN attempts > 0 THEN 'retrying'
            WHEN run_at > CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint)
                THEN 'scheduled'
            ELSE 'queued' END AS state,
       count(*) AS n
FROM leasehold_jobs
GROUP BY 1, 2 ORDER BY 1, 2
