-- workers_record: one worker's record: the first of an owner and queue stamps
-- started_at; every one moves last_seen and takes the larger of each stored
-- and given counter; stopped_at is kept once written.
--
-- ?1 = nonce: the owner's nonce
-- ?2 = queue: the queue it works
-- ?3 = host: the owner's host id
-- ?4 = pid: the owner's pid
-- ?5 = hostname: the machine's host name
-- ?6 = now: the caller's clock (ms since the Unix epoch)
-- ?7 = stopped: whether it stopped cleanly
-- ?8 = claimed: counter
-- ?9 = succeeded: counter
-- ?10 = failed: counter
-- ?11 = dead_lettered: counter
-- ?12 = renewals: counter
-- ?13 = lapses: counter
-- ?14 = losses: counter
-- ?15 = steals: counter
--
-- Returns nothing.
INSERT INTO leasehold_workers (owner_nonce, queue, owner_host, owner_pid, hostname, started_at,
    last_seen, stopped_at, claimed, succeeded, failed, dead_lettered, renewals, lapses, losses, steals)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, CASE WHEN ?7 THEN ?6 END, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
ON CONFLICT (owner_nonce, queue) DO UPDATE SET
    last_seen = max(last_seen, excluded.last_seen),
    stopped_at = coalesce(stopped_at, excluded.stopped_at),
    claimed = max(claimed, excluded.claimed),
    succeeded = max(succeeded, excluded.succeeded),
    failed = max(failed, excluded.failed),
    dead_lettered = max(dead_lettered, excluded.dead_lettered),
    renewals = max(renewals, excluded.renewals),
    lapses = max(lapses, excluded.lapses),
    losses = max(losses, excluded.losses),
    steals = max(steals, excluded.steals)
