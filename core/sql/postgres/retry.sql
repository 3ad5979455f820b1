-- retry: queues the selected jobs again, due now, with a fresh attempt
-- budget (the attempt log is kept: tokens keep growing), and wakes their
-- queues' workers (NOTIFY '<schema>/<queue>' on channel leasehold_jobs, at
-- commit). A job cancelled while it ran is due once the lease of that
-- attempt would have gone stale (the expires_at cancel.sql kept), if that
-- is later: its owner learns of the cancel only from a NOTIFY or its next
-- renewal, and may be cut off from both, but stops its work before then, as
-- it would for a takeover. That lease's end stays on the queued job
-- (expires_at) until a claim replaces it, so a cancel and retry of it while
-- it waits keep that due time. Where that due time is a reading of the
-- claimant's own wall clock (PGlite), the claim also waits until the
-- claimant has watched that lease for its window (the claim statements'
-- `watched`). The caller runs it in a transaction and rolls back when fewer
-- jobs changed than it named.
--
-- $1 = ids: only these jobs, or NULL for any (int8[])
-- $2 = queue: only this queue, or NULL for any (text)
-- $3 = states: the states the retry applies to (text[])
--
-- Returns one row per job queued again: id, queue, run_at (when it is due,
-- ms), now (the statement's clock, ms), told (int8).
WITH clock AS MATERIALIZED (
    SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now),
retried AS (
    UPDATE leasehold_jobs j SET state = 'queued', attempts = 0,
        run_at = CASE WHEN j.state = 'cancelled' THEN greatest(c.now, coalesce(j.expires_at, c.now))
                      ELSE c.now END,
        expires_at = CASE WHEN j.state = 'cancelled' THEN j.expires_at END, finished_at = NULL, cancelled_at = NULL, cancelled_by = NULL,
        cancel_reason = NULL
    FROM clock c
    WHERE ($1::bigint[] IS NULL OR j.id = ANY($1)) AND ($2::text IS NULL OR j.queue = $2)
      AND j.state = ANY($3::text[])
    RETURNING j.id, j.queue, j.run_at, c.now),
woken AS (
    SELECT pg_notify('leasehold_jobs', current_schema() || '/' || q.queue)
    FROM (SELECT DISTINCT queue FROM retried) q)
SELECT id, queue, run_at, now, (SELECT count(*) FROM woken) AS told FROM retried
