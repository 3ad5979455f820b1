-- notify_queue: wakes a queue's listeners on every machine when the
-- transaction commits (the channel and payload of every enqueue).
--
-- $1 = queue: the queue's name (text)
SELECT pg_notify('leasehold_jobs', current_schema() || '/' || $1)
