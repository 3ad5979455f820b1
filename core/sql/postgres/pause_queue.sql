-- pause_queue: pauses a queue (claims skip it until it is resumed), stamped
-- with the statement's clock; nothing if it is paused already.
--
-- $1 = queue: the queue's name (text)
-- $2 = by: who pauses it (text)
--
-- Returns no rows; one row changed if it was not paused.
INSERT INTO leasehold_paused_queues (queue, paused_at, paused_by)
VALUES ($1, CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint), $2)
ON CONFLICT (queue) DO NOTHING
