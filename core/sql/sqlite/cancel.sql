-- cancel: cancels the selected jobs: the token moves, so the owner's next
-- renewal or settle of a running job answers lost. expires_at is kept: on a
-- running job it is its lease's end, and its owner stops its work by then at
-- the latest, so retry.sql does not let another worker start it earlier; on
-- a queued job it is only ever the end of such a cancelled attempt's lease,
-- kept by retry.sql, and stays for the same reason. Run after
-- attempts_cancelled.sql and journal_cancelled.sql in one transaction,
-- rolled back when fewer jobs changed than were named.
--
-- ?1 = ids: only these jobs (a JSON array), or NULL for any (text)
-- ?2 = queue: only this queue, or NULL for any (text)
-- ?3 = states: the states it applies to (a JSON array) (text)
-- ?4 = now: the caller's clock, ms (integer)
-- ?5 = by: who cancels (text)
-- ?6 = reason: why, or NULL (text)
--
-- Returns one row per cancelled job: id, queue.
UPDATE leasehold_jobs SET state = 'cancelled', token = token + 1,
    finished_at = ?4, cancelled_at = ?4, cancelled_by = ?5, cancel_reason = ?6
WHERE (?1 IS NULL OR id IN (SELECT value FROM json_each(?1))) AND (?2 IS NULL OR queue = ?2)
  AND state IN (SELECT value FROM json_each(?3))
RETURNING id, queue
