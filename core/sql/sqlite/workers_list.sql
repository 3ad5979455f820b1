-- workers_list: every worker record.
--
-- Returns the workers table's columns, by queue, most recently seen first.
SELECT owner_nonce, queue, owner_host, owner_pid, hostname, started_at, last_seen, stopped_at,
       claimed, succeeded, failed, dead_lettered, renewals, lapses, losses, steals
FROM leasehold_workers
ORDER BY queue, last_seen DESC, owner_nonce
