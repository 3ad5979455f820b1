-- retry: queues the selected jobs again, due now, with a fresh attempt
-- budget; the attempt log is kept (tokens keep growing, so old attempts
-- keep their keys). A job cancelled while it ran is due once the lease of
-- that attempt would have gone stale (the expires_at cancel.sql kept), if
-- that is later: its owner learns of the cancel only at its next renewal,
-- and stops its work before then, as it would for a takeover. That lease's
-- end stays on the queued job (expires_at) until a claim replaces it, so a
-- cancel and retry of it while it waits keep that due time, and a SQLite
-- claimant can watch the lease first (claim.sql). Run in a transaction,
-- rolled back when fewer jobs changed than were named.
--
-- ?1 = ids: only these jobs (a JSON array), or NULL for any (text)
-- ?2 = queue: only this queue, or NULL for any (text)
-- ?3 = states: the states it applies to (a JSON array) (text)
-- ?4 = now: the caller's clock, ms (integer)
--
-- Returns one row per job queued again: id, queue, run_at (when it is due,
-- ms), now (?4), watch_ms (the cancelled attempt's lease window a claimant
-- watches first, claim.sql's ?10, for a job that carries that lease; else
-- NULL).
UPDATE leasehold_jobs SET state = 'queued', attempts = 0,
    run_at = CASE WHEN state = 'cancelled' THEN max(?4, coalesce(expires_at, ?4)) ELSE ?4 END,
    expires_at = CASE WHEN state = 'cancelled' THEN expires_at END, finished_at = NULL,
    cancelled_at = NULL, cancelled_by = NULL, cancel_reason = NULL
WHERE (?1 IS NULL OR id IN (SELECT value FROM json_each(?1))) AND (?2 IS NULL OR queue = ?2)
  AND state IN (SELECT value FROM json_each(?3))
RETURNING id, queue, run_at, ?4 AS now, CASE WHEN expires_at IS NOT NULL THEN lease_ms END AS watch_ms
