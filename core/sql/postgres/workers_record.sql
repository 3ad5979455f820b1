-- workers_record: one worker's record, as SQLite's workers_record; the server's
-- clock stamps (`now` is bound but not used).
--
-- $1 = nonce: the owner's nonce
-- $2 = queue: the queue it works
-- $3 = host: the owner's host id
-- $4 = pid: the owner's pid
-- $5 = hostname: the machine's host name
-- $6 = now: the caller's clock (unused)
-- $7 = stopped: whether it stopped cleanly
-- $8 = claimed: counter
-- $9 = succeeded: counter
-- $10 = failed: counter
-- $11 = dead_lettered: counter
-- $12 = renewals: counter
-- $13 = lapses: counter
-- $14 = losses: counter
-- $15 = steals: counter
--
-- Returns nothing.
INSERT INTO leasehold_workers AS w (owner_nonce, queue, owner_host, owner_pid, hostname, started_at,
    last_seen, stopped_at, claimed, succeeded, failed, dead_lettered, renewals, lapses, losses, steals)
SELECT $1, $2, $3, $4, $5, now_ms, now_ms, CASE WHEN $7 THEN now_ms END,
    $8, $9, $10, $11, $12, $13, $14, $15
FROM (SELECT CAST(floor(extract(epoch FROM statement_timestamp()) * 1000) AS bigint) AS now_ms, $6::bigint AS unused) AS t
ON CONFLICT (owner_nonce, queue) DO UPDATE SET
    last_seen = greatest(w.last_seen, excluded.last_seen),
    stopped_at = coalesce(w.stopped_at, excluded.stopped_at),
    claimed = greatest(w.claimed, excluded.claimed),
    succeeded = greatest(w.succeeded, excluded.succeeded),
    failed = greatest(w.failed, excluded.failed),
    dead_lettered = greatest(w.dead_lettered, excluded.dead_lettered),
    renewals = greatest(w.renewals, excluded.renewals),
    lapses = greatest(w.lapses, excluded.lapses),
    losses = greatest(w.losses, excluded.losses),
    steals = greatest(w.steals, excluded.steals)
