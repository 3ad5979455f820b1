-- fragment claim_rows: the rows of `claimed` and `stale` (claim_page.sql),
-- `kind` first, as claim.sql's header describes them.
SELECT 'claimed' AS kind, id, token, payload, attempts, max_attempts, timeout_ms, now,
    priority, run_at, NULL::text AS owner_host, NULL::bigint AS owner_pid,
    NULL::text AS owner_nonce, NULL::bigint AS owner_start_time, NULL::text AS owner_boot_id,
    NULL::bigint AS claimed_at, NULL::bigint AS heartbeat_at, NULL::bigint AS lease_ms
FROM claimed
UNION ALL
SELECT 'stale', s.id, s.token, NULL, NULL, NULL, NULL, (SELECT now FROM clock),
    s.priority, s.run_at, s.owner_host, s.owner_pid, s.owner_nonce, s.owner_start_time,
    s.owner_boot_id, s.claimed_at, s.heartbeat_at, s.lease_ms
FROM stale s
