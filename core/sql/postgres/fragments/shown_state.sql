-- fragment shown_state: a leasehold_jobs row's state as the dashboard, `leasehold
-- status` and the npm package's counts() and job(id) show it: a queued job is
-- `retrying` once attempted, else `scheduled` while not due (at the server's
-- clock), else `queued`; any other state as stored.
CASE WHEN state <> 'queued' THEN state
     WHEN attempts > 0 THEN 'retrying'
     WHEN run_at > CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) THEN 'scheduled'
     ELSE 'queued' END
