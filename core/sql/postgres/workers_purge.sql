-- workers_purge: deletes the worker records last seen longer ago than a span
-- before the server's clock.
--
-- $1 = span_ms: the span (ms)
-- $2 = queue: the queue (NULL: any)
--
-- Returns nothing.
DELETE FROM leasehold_workers WHERE last_seen < CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) - $1 AND ($2::text IS NULL OR queue = $2)
