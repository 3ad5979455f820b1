-- paused_queues: the paused queues.
--
-- Returns one row per paused queue, by name: queue, paused_at (ms), paused_by.
SELECT queue, paused_at, paused_by FROM leasehold_paused_queues ORDER BY queue
